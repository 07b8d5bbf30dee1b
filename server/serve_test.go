package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/server"
)

// TestServeStopsDaemonAfterHTTP: on shutdown Serve first stops accepting
// and lets the requests in flight finish, and only then stops the daemon
// (whose analyses in flight then finish).
func TestServeStopsDaemonAfterHTTP(t *testing.T) {
	var inFlight atomic.Bool
	sawInFlight := make(chan bool, 1)
	reading := &secondRead{reading: make(chan struct{})}
	e := newEnv(t, options{
		listener: func(ln net.Listener) net.Listener { reading.Listener = ln; return reading },
		daemon: func(d server.Daemon, _ string) server.Daemon {
			return watched{Daemon: d, atStop: func() { sawInFlight <- inFlight.Load() }}
		},
	})
	// A request whose body is still coming when the shutdown begins.
	addr := strings.TrimPrefix(e.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	body := `{"id":"a","title":"checkout 5xx spike","service":"checkout"}`
	inFlight.Store(true)
	if _, err := fmt.Fprintf(conn, "POST /api/v1/alerts HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body[:10]); err != nil {
		t.Fatal(err)
	}
	<-reading.reading
	stopped := make(chan error, 1)
	go func() { stopped <- e.stop() }()
	// The shutdown has begun once the listener refuses connections.
	if !testenv.Poll(t, 5*time.Millisecond, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	}) {
		t.Fatal("the server never stopped accepting")
	}
	inFlight.Store(false)
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the request in flight at the shutdown: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("the request in flight at the shutdown: %d, want 202", resp.StatusCode)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if <-sawInFlight {
		t.Error("the daemon was told to stop while a request was in flight")
	}
}

// secondRead closes reading the first time an accepted connection is read
// a second time: for a request whose headers and first body bytes came in
// one read, that is its handler reading on.
type secondRead struct {
	net.Listener
	once    sync.Once
	reading chan struct{}
}

func (l *secondRead) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &readCounter{Conn: c, l: l}, nil
}

// readCounter counts its reads (the server reads a connection from one
// goroutine at a time).
type readCounter struct {
	net.Conn
	l     *secondRead
	reads atomic.Int32
}

func (c *readCounter) Read(p []byte) (int, error) {
	if c.reads.Add(1) == 2 {
		c.l.once.Do(func() { close(c.l.reading) })
	}
	return c.Conn.Read(p)
}

// watched is a daemon that calls atStop when its stop channel closes.
type watched struct {
	server.Daemon
	atStop func()
}

func (w watched) Run(ctx context.Context, stop <-chan struct{}) error {
	go func() {
		<-stop
		w.atStop()
	}()
	return w.Daemon.Run(ctx, stop)
}

// TestServeStopsWhenDaemonFails: a daemon that fails from within (a
// database another openrecall migrated) shuts the server down without
// ctx: Serve stops accepting, stops the daemon and returns its error.
func TestServeStopsWhenDaemonFails(t *testing.T) {
	broke := errors.New("the database belongs to a newer openrecall")
	f := &failing{failed: make(chan struct{}), err: broke}
	e := newEnv(t, options{daemon: func(d server.Daemon, _ string) server.Daemon {
		f.Daemon = d
		return f
	}})
	if resp, _ := e.do(http.MethodGet, "/healthz", "", nil, nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz before: %d", resp.StatusCode)
	}
	close(f.failed)
	if err := e.served(); !errors.Is(err, broke) {
		t.Fatalf("Serve returned %v, want the daemon's error", err)
	}
	if resp, err := http.Get(e.url + "/healthz"); err == nil {
		_ = resp.Body.Close()
		t.Error("the server still answers after the daemon failed")
	}
	_ = e.stop() // Serve has returned: this only marks the env stopped
}

// failing is a daemon whose Failed the test closes; its Run then returns
// err once stopped.
type failing struct {
	server.Daemon
	failed chan struct{}
	err    error
}

func (f *failing) Failed() <-chan struct{} { return f.failed }

func (f *failing) Run(ctx context.Context, stop <-chan struct{}) error {
	if err := f.Daemon.Run(ctx, stop); err != nil {
		return err
	}
	return f.err
}

// TestServeAbandonsAtDeadline: a daemon still busy at the shutdown
// deadline has its context cancelled, and Serve returns.
func TestServeAbandonsAtDeadline(t *testing.T) {
	cancelled := make(chan struct{})
	e := newEnv(t, options{shutdown: 50 * time.Millisecond, daemon: func(d server.Daemon, _ string) server.Daemon {
		return stubborn{Daemon: d, cancelled: cancelled}
	}})
	if err := e.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("Serve returned before the daemon's context was cancelled")
	}
}

// stubborn is a daemon that, once stopped, works until its context is
// cancelled.
type stubborn struct {
	server.Daemon
	cancelled chan struct{}
}

func (s stubborn) Run(ctx context.Context, stop <-chan struct{}) error {
	<-stop
	<-ctx.Done()
	close(s.cancelled)
	return nil
}
