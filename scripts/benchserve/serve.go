package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serveProc is one `openrecall serve` child on a loopback port; the
// processes of one run share its database.
type serveProc struct {
	cmd  *exec.Cmd
	url  string // http://127.0.0.1:PORT
	db   *database
	logf *os.File
	done chan error // the child's exit, once
	// debugURL is serve's runtime profiles (http://127.0.0.1:PORT/debug/pprof)
	// when it was started with them; set before url.
	debugURL string

	// depth, when set, reads the inbox depth for kept samples.
	depth func() int

	mu      sync.Mutex
	rssMax  int64 // largest VmRSS seen, bytes
	hwm     int64 // last VmHWM read, bytes
	samples []rssSample
}

// rssSample is one reading of the child's resident set size.
type rssSample struct {
	at  time.Duration // since sampling started
	rss int64         // VmRSS, bytes
	db  int64         // the database with its WAL, bytes
	// depth is the inbox depth /readyz reported; -1 when it did not.
	depth int
}

// serverSettings are the server.* keys of one serve process's config file;
// a zero value keeps serve's default.
type serverSettings struct {
	instance   string        // server.instance
	inboxLimit int           // server.inbox_limit
	retention  time.Duration // server.retention
	lease      time.Duration // server.lease
	archiveDir string        // server.archive_dir
	// profiles starts serve with --debug-listen on a loopback port, for
	// heap profiles.
	profiles bool
}

// yaml returns the config file that sets them, "" when none is set.
func (ss serverSettings) yaml() string {
	var b strings.Builder
	if ss.instance != "" {
		fmt.Fprintf(&b, "  instance: %s\n", ss.instance)
	}
	if ss.inboxLimit > 0 {
		fmt.Fprintf(&b, "  inbox_limit: %d\n", ss.inboxLimit)
	}
	if ss.retention > 0 {
		fmt.Fprintf(&b, "  retention: %s\n", ss.retention)
	}
	if ss.lease > 0 {
		fmt.Fprintf(&b, "  lease: %s\n", ss.lease)
	}
	if ss.archiveDir != "" {
		fmt.Fprintf(&b, "  archive_dir: %s\n", ss.archiveDir)
	}
	if b.Len() == 0 {
		return ""
	}
	return "server:\n" + b.String()
}

// startServe starts bin serve on 127.0.0.1:0 with --workers workers, the
// run's database db, the audit key keyFile (shared by the run's
// processes) and no token (loopback needs none; the OPENRECALL_ variables
// of this environment are not passed on). A config file in dir sets the
// settings given (the run names each process's server.instance); with
// settings.profiles serve also serves its runtime profiles on a loopback
// port (debugURL). Its stderr goes to dir/serve.log; it returns once
// serve said where it listens.
func startServe(ctx context.Context, bin, dir string, db *database, keyFile string, workers int, logLevel string, settings serverSettings) (*serveProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var args []string
	if y := settings.yaml(); y != "" {
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--config", cfg)
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
	env = append(env, "OPENRECALL_AUDIT_KEY_FILE="+keyFile)
	args = append(args, "--db", db.location, "--log-level", logLevel, "--log-format", "json",
		"serve", "--listen", "127.0.0.1:0", "--workers", strconv.Itoa(workers))
	if settings.profiles {
		args = append(args, "--debug-listen", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	// Should the bench die without stopping it (a broken pipe, SIGKILL),
	// Linux sends serve SIGTERM, so no server is left behind.
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
	p := &serveProc{cmd: cmd, db: db, logf: logf, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			// serve says this before where it listens, so debugURL is
			// set before url.
			if rest, ok := strings.CutPrefix(line, "openrecall serve: runtime profiles on "); ok {
				p.debugURL = strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
			if rest, ok := strings.CutPrefix(line, "openrecall serve: listening on "); ok {
				select {
				case addr <- strings.Fields(rest)[0]:
				default:
				}
			}
			_, _ = fmt.Fprintln(logf, line)
		}
		p.done <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		u, err := url.Parse(a)
		if err != nil || u.Hostname() != "127.0.0.1" {
			_ = p.stop()
			return nil, fmt.Errorf("serve listens on %q: want 127.0.0.1", a)
		}
		p.url = a
	case err := <-p.done:
		p.done <- err
		_ = logf.Close()
		return nil, fmt.Errorf("serve exited before listening (%v): %s", err, tail(p.log(), 800))
	case <-time.After(60 * time.Second):
		_ = p.stop()
		return nil, errors.New("serve did not listen within 60s")
	case <-ctx.Done():
		_ = p.stop()
		return nil, ctx.Err()
	}
	return p, nil
}

// stop sends SIGTERM and waits for the child (SIGKILL after 60s); an exit
// other than 0 is an error.
func (p *serveProc) stop() error {
	defer func() { _ = p.logf.Close() }()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			return fmt.Errorf("serve after SIGTERM: %w", err)
		}
		return nil
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		return errors.New("serve did not stop within 60s of SIGTERM; killed")
	}
}

// log returns what serve wrote to its log so far.
func (p *serveProc) log() string {
	b, _ := os.ReadFile(p.logf.Name())
	return string(b)
}

// sampleRSS reads the child's VmRSS and VmHWM every interval until ctx
// ends, keeping the largest and (when keep) each sample.
func (p *serveProc) sampleRSS(ctx context.Context, interval time.Duration, keep bool) {
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.readRSS(time.Since(start), keep)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *serveProc) readRSS(at time.Duration, keep bool) {
	rss, hwm, err := procStatus(p.cmd.Process.Pid)
	if err != nil {
		return
	}
	depth := -1
	if keep && p.depth != nil {
		depth = p.depth()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rssMax = max(p.rssMax, rss)
	p.hwm = max(p.hwm, hwm)
	if keep {
		p.samples = append(p.samples, rssSample{at: at, rss: rss, db: p.db.bytes(), depth: depth})
	}
}

// peakRSS returns the peak resident set size seen: VmHWM, or the largest
// VmRSS sample when that is larger.
func (p *serveProc) peakRSS() int64 {
	p.readRSS(0, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.hwm, p.rssMax)
}

// procStatus reads VmRSS and VmHWM of pid from /proc, in bytes.
func procStatus(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	return parseStatus(b)
}

// parseStatus reads VmRSS and VmHWM (kB) of a /proc/PID/status text.
func parseStatus(b []byte) (rss, hwm int64, err error) {
	found := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst = &rss
		case "VmHWM":
			dst = &hwm
		default:
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("status: %s: %q", name, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("status: %s: %w", name, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("status: no VmRSS and VmHWM")
	}
	return rss, hwm, nil
}

// served is the part of a finished analysis the bench reads.
type served struct {
	AnalysisID string `json:"analysis_id"`
	Cursor     int64  `json:"cursor"`
	Done       bool   `json:"done"`
}

// results reads GET /api/v1/results after cursor since to the end, and
// returns the finished analyses and the next cursor.
func results(ctx context.Context, client *http.Client, base string, since int64) ([]served, int64, error) {
	var all []served
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/results?limit=1000&since="+strconv.FormatInt(since, 10), nil)
		if err != nil {
			return nil, since, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return all, since, fmt.Errorf("results: %w", err)
		}
		var page struct {
			Results []served `json:"results"`
			Next    int64    `json:"next"`
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return all, since, fmt.Errorf("results: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return all, since, fmt.Errorf("results: %s: %s", resp.Status, tail(string(body), 200))
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return all, since, fmt.Errorf("results: %w", err)
		}
		all = append(all, page.Results...)
		if len(page.Results) == 0 || page.Next <= since {
			return all, since, nil
		}
		since = page.Next
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// loopback says whether addr is a 127.0.0.1 URL.
func loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.Equal(net.IPv4(127, 0, 0, 1))
}

// inboxDepth reads the inbox depth from GET /readyz; -1 when it cannot.
func inboxDepth(ctx context.Context, client *http.Client, base string) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }()
	var rd struct {
		InboxDepth *int `json:"inbox_depth"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil || rd.InboxDepth == nil {
		return -1
	}
	return *rd.InboxDepth
}

// saveHeap saves serve's heap profile, taken after a collection (so it
// holds the live heap), to path.
func (p *serveProc) saveHeap(ctx context.Context, client *http.Client, path string) error {
	if p.debugURL == "" {
		return errors.New("serve was started without runtime profiles")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.debugURL+"/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
