package e2eproc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 15 * time.Second

// outputGrace is how long a process's output is still read once it has
// exited: a child it left behind that holds the output open (sh -c 'a;
// b') does not keep it from counting as exited.
const outputGrace = time.Second

// Proc is a started process with its combined output (stdout and stderr)
// kept. Its methods are safe for concurrent use.
type Proc struct {
	name string
	cmd  *exec.Cmd

	mu  sync.Mutex
	log bytes.Buffer

	done chan struct{} // closed once the process has exited and its output is read
	err  error         // what Wait returned; set before done is closed
}

// Name returns the name the process was started with.
func (p *Proc) Name() string { return p.name }

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Output returns the process's combined output so far, one "\n" after
// each line.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Tail returns the last n bytes of the output, after "…" when it was
// longer.
func (p *Proc) Tail(n int) string {
	out := p.Output()
	if len(out) > n {
		out = "…" + out[len(out)-n:]
	}
	return out
}

// Done returns a channel closed once the process has exited and its
// output has been read.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err returns what waiting for the process returned (nil for exit status
// 0, an *exec.ExitError otherwise). It is nil until Done is closed.
func (p *Proc) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Exited reports whether the process has ended, without waiting.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process by its pid: SIGTERM, then SIGKILL after 15s. It
// returns what waiting for it returned, nil when it had already exited,
// or an error saying it had to be killed.
func (p *Proc) Stop() error {
	if p.Exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 15s of SIGTERM; killed", p.name)
	}
}

// Kill ends the process by its pid with SIGKILL (kill -9) and waits for
// it.
func (p *Proc) Kill() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// lines is a process's stdout and stderr: it keeps each line in the log
// and hands it to watch. exec.Cmd calls Write from one goroutine at a
// time.
type lines struct {
	p       *Proc
	watch   func(string)
	partial []byte
}

func (l *lines) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.partial = append(l.partial, b...)
			return n, nil
		}
		l.line(append(l.partial, b[:i]...))
		l.partial = l.partial[:0]
		b = b[i+1:]
	}
}

// flush ends a last line without a newline.
func (l *lines) flush() {
	if len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = nil
	}
}

func (l *lines) line(b []byte) {
	s := string(bytes.TrimSuffix(b, []byte("\r")))
	l.p.mu.Lock()
	l.p.log.WriteString(s + "\n")
	l.p.mu.Unlock()
	if l.watch != nil {
		l.watch(s)
	}
}

// Group is the processes a run started, to stop them all at its end or
// on an interruption. The zero value is an empty group; its methods are
// safe for concurrent use.
type Group struct {
	mu    sync.Mutex
	procs []*Proc
}

// Start starts args[0] with args[1:], the environment of this process plus
// env, and adds it to the group. Its combined output is kept, and each
// line, without its newline, goes to watch (when not nil) on the goroutine
// that reads the output: watch must not block for long.
func (g *Group) Start(name string, env []string, watch func(string), args ...string) (*Proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p := &Proc{name: name, cmd: cmd, done: make(chan struct{})}
	out := &lines{p: p, watch: watch}
	// The same writer for both: one pipe, written by one goroutine.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = outputGrace
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	go func() {
		err := cmd.Wait()
		out.flush()
		p.err = err
		close(p.done)
	}()
	return p, nil
}

// StopAll stops every process of the group, the last started first, and
// returns the errors of those whose Stop failed, each as "stop NAME: ...".
func (g *Group) StopAll() []error {
	g.mu.Lock()
	procs := slices.Clone(g.procs)
	g.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", procs[i].name, err))
		}
	}
	return errs
}

// Dump writes the last n bytes of every process's output to w, in the
// order they were started, each under "--- NAME log (tail)".
func (g *Group) Dump(w io.Writer, n int) {
	g.mu.Lock()
	procs := slices.Clone(g.procs)
	g.mu.Unlock()
	for _, p := range procs {
		fmt.Fprintf(w, "--- %s log (tail)\n%s\n", p.name, p.Tail(n))
	}
}

// Secret returns 16 random bytes in hex: a token or key for one run.
func Secret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// WaitUntil polls cond every 100 ms until it holds, it fails, or deadline
// passes (then the error names what was awaited): the end-to-end runs'
// one way to wait, bounded by the run's deadline rather than a sleep.
func WaitUntil(deadline time.Time, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the run's deadline passed waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
