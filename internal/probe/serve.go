package probe

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// MaxBody is the server.max_body_bytes the probe gives serve: a body one
// byte over it must be answered 413.
const MaxBody = 8 << 20

// tokens are the credentials the probe configures, one per scope set.
type tokens struct {
	ingest, read, retain, all string
}

func secret() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// server is one running `openrecall serve`.
type server struct {
	cmd  *exec.Cmd
	base string
	tok  tokens
	done chan struct{}
}

// start runs bin serve on a loopback port of its choosing over a new
// SQLite file in dir, with one token per scope set, and returns once serve
// said where it listens. Its log goes to dir/serve.log.
func start(ctx context.Context, bin, dir string) (*server, error) {
	tok := tokens{ingest: secret(), read: secret(), retain: secret(), all: secret()}
	cfg := fmt.Sprintf(`server:
  max_body_bytes: %d
  tokens:
    - name: sender
      token: %s
      scopes: [ingest]
    - name: viewer
      token: %s
      scopes: [read]
    - name: alice
      token: %s
      scopes: [read, retain]
    - name: admin
      token: %s
      scopes: [ingest, read, retain]
`, MaxBody, tok.ingest, tok.read, tok.retain, tok.all)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENRECALL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "OPENRECALL_AUDIT_KEY="+strings.Repeat("5a", 32))
	cmd := exec.CommandContext(ctx, bin, "--config", cfgPath, "--db", filepath.Join(dir, "probe.db"),
		"--log-format", "json", "serve", "--listen", "127.0.0.1:0", "--workers", "2")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Stdout = logf
	pipe, err := cmd.StderrPipe()
	if err != nil {
		_ = logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start serve: %w", err)
	}
	s := &server{cmd: cmd, tok: tok, done: make(chan struct{})}
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		_, _ = io.WriteString(logf, line+"\n")
		if _, addr, ok := strings.Cut(line, "listening on "); ok {
			s.base = strings.Fields(addr)[0]
			if !strings.HasPrefix(s.base, "http") {
				s.base = "http://" + s.base
			}
			break
		}
	}
	go func() {
		_, _ = io.Copy(logf, pipe)
		_ = cmd.Wait()
		_ = logf.Close()
		close(s.done)
	}()
	if s.base == "" {
		<-s.done
		return nil, fmt.Errorf("serve exited before it listened; see %s", filepath.Join(dir, "serve.log"))
	}
	return s, nil
}

// alive says whether serve still runs and answers /healthz 200.
func (s *server) alive(c *http.Client) error {
	select {
	case <-s.done:
		return fmt.Errorf("serve exited: %v", s.cmd.ProcessState)
	default:
	}
	resp, err := c.Get(s.base + "/healthz")
	if err != nil {
		return fmt.Errorf("healthz: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: %d", resp.StatusCode)
	}
	return nil
}

// stop ends serve with SIGTERM and waits for it (at most a minute).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
