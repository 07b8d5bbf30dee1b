package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// fixtures holds real captured Alertmanager payloads (copied from the
// project's shared fixtures).
const fixtures = "testdata/alertmanager/"

// env is a server on a real SQLite file (or the test's PostgreSQL schema),
// with its runner over the real workflow, serving on a loopback port.
type env struct {
	t     *testing.T
	url   string
	store *memory.Store
	srv   *server.Server
	app   *usecase.App // the server's use cases
	stop  func() error
	// served waits for Serve to return (by itself, or after stop) and
	// returns what it returned.
	served func() error
	db     string // the store's location
}

type options struct {
	tokens     []server.Token
	maxBody    int64
	inboxLimit int
	shadow     bool
	noServe    bool // handler only: nothing drains the inbox
	db         string
	now        func() time.Time
	log        *zap.Logger
	grouping   bool // groups storms, continuing the stored groups
	retention  time.Duration
	pruneEvery time.Duration
	storeNow   func() time.Time // the store's clock (finish times), when not the real one
	archiveDir string           // server.archive_dir (with a retention)
	// listener, when set, wraps the loopback listener (to count the bytes
	// the server reads).
	listener func(net.Listener) net.Listener
	maxPages int // memory.Options.MaxPages
	// models, when set, replaces the local tiers (wrapped, say, in
	// circuits); modelHealth is server.Config.ModelHealth, also watched by
	// the metrics.
	models      func(cheap, strong routing.Model) (routing.Model, routing.Model)
	modelHealth func() []server.ModelHealth
	throttle    *cockpit.Throttle // the cockpit's login throttle, when not the default
	proxies     []netip.Prefix    // server.trusted_proxies
	tls         *tls.Config       // serve with TLS (the env's url is https)
	// daemon, when set, wraps the runner the server is given; addr is
	// the server's listen address.
	daemon func(d server.Daemon, addr string) server.Daemon
	// shutdown is server.shutdown_timeout (default: the test's time left).
	shutdown time.Duration
	// senders is server.Config.Senders (the zero Set: the built-ins).
	senders sender.Set
	// slack is server.Config.Slack (nil: deciding from Slack is off).
	slack *server.SlackConfig
}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	ctx := context.Background()
	if o.db == "" {
		o.db = storetest.Location(t)
	}
	st, err := memory.Open(ctx, o.db, memory.Options{Now: o.storeNow, MaxPages: o.maxPages})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// Keyed and sealed as the commands key and seal a memory.
	sealer := storetest.Keyed(t, st, trailKey)
	ex := storetest.Fingerprinter(t)
	// Wired as serve wires it (internal/compose), on the default
	// configuration with the test's grouping.
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Grouping.Enabled = o.grouping
	root := compose.Open(cfg, st, o.now, nil, compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(sealer)),
		compose.Keys(testKeys{}), compose.Batch("serve"), compose.Shadow(o.shadow), compose.GroupScope(),
		compose.Retention(o.retention), compose.Continue())
	sink, err := root.Sink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newPipeline := func(sink workflow.Sink) (runner.Pipeline, error) {
		var cheap, strong routing.Model = local.NewCheap(), local.NewStrong()
		if o.models != nil {
			cheap, strong = o.models(cheap, strong)
		}
		r, err := routing.New(routing.Config{
			Cheap: cheap, Strong: strong, Prices: routing.DefaultPrices(), GateConfidence: 0.6, Vet: triage.Vet,
		})
		if err != nil {
			return nil, err
		}
		return root.Pipeline(r, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
	}
	prom := server.NewPrometheus(func() float64 {
		n, _ := st.InboxDepth(context.Background())
		return float64(n)
	})
	if o.modelHealth != nil {
		prom.WatchModels(o.modelHealth)
	}
	app := root.UseCases
	// The one place the server's tests build a runner, as serve builds it.
	run, err := runner.New(runner.Config{
		Store: st, Sink: sink, NewPipeline: newPipeline, UseCases: app, Workers: 2,
		Retention: o.retention, PruneEvery: o.pruneEvery, Pruner: st, ArchiveDir: o.archiveDir, Forgetter: st,
		Observer: prom, Now: o.now, Logger: o.log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.listener != nil {
		ln = o.listener(ln)
	}
	var daemon server.Daemon = run
	if o.daemon != nil {
		daemon = o.daemon(run, ln.Addr().String())
	}
	if o.shutdown <= 0 {
		o.shutdown = testenv.Remaining(t)
	}
	srv, err := server.New(server.Config{
		Store: st, Daemon: daemon, UseCases: app,
		Tokens: o.tokens, Senders: o.senders, MaxBodyBytes: o.maxBody, InboxLimit: o.inboxLimit,
		Observer: prom, ShutdownTimeout: o.shutdown, Now: o.now, Logger: o.log,
		Retention:     o.retention,
		ModelHealth:   o.modelHealth,
		LoginThrottle: o.throttle, TrustedProxies: o.proxies, TLS: o.tls,
		Slack: o.slack,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: "http://" + ln.Addr().String(), store: st, srv: srv, app: app, db: o.db}
	if o.tls != nil {
		e.url = "https://" + ln.Addr().String()
	}
	if o.noServe {
		hs := &http.Server{Handler: srv.Handler()}
		go func() { _ = hs.Serve(ln) }() // ErrServerClosed once stopped
		e.stop = func() error { return hs.Close() }
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		var once sync.Once
		var serveErr error
		e.served = func() error {
			once.Do(func() { serveErr = <-done })
			return serveErr
		}
		e.stop = func() error {
			cancel()
			return e.served()
		}
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			if err := e.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
	})
	orig := e.stop
	e.stop = func() error { stopped = true; return orig() }
	return e
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (e *env) do(method, path, token string, body io.Reader, header map[string]string, out any) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(path, "/metrics") {
		if !strings.HasPrefix(ct, "application/json") {
			e.t.Errorf("%s %s: Content-Type %q, want JSON: %s", method, path, ct, b)
		}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp, b
}

func (e *env) post(path, token, body string, out any) *http.Response {
	e.t.Helper()
	resp, _ := e.do(http.MethodPost, path, token, bytes.NewBufferString(body), nil, out)
	return resp
}

// accepted is the 202 answer, decoded the way a client reads it.
type accepted struct {
	RequestID  string `json:"request_id"`
	Accepted   int    `json:"accepted"`
	Duplicates int    `json:"duplicates"`
	Rejected   int    `json:"rejected"`
	Analyses   []struct {
		AnalysisID string `json:"analysis_id"`
		AlertID    string `json:"alert_id"`
		State      string `json:"state"`
		Duplicate  bool   `json:"duplicate"`
		Rejection  string `json:"rejection"`
	} `json:"analyses"`
}

// wait polls the result of an analysis until it is done, failing the test
// if it is not done before the test's deadline nears.
func (e *env) wait(analysisID, token string) openrecall.Served {
	e.t.Helper()
	var sv openrecall.Served
	if !testenv.Poll(e.t, 20*time.Millisecond, func() bool {
		sv = openrecall.Served{}
		resp, b := e.do(http.MethodGet, "/api/v1/results/"+analysisID, token, nil, nil, &sv)
		if resp.StatusCode != http.StatusOK {
			e.t.Fatalf("result %s: %d %s", analysisID, resp.StatusCode, b)
		}
		return sv.Done
	}) {
		e.t.Fatalf("analysis %s not done before the test's deadline", analysisID)
	}
	return sv
}

// metric returns the value of one sample line of /metrics, such as
// `openrecall_alerts_bypassed_total`.
func (e *env) metric(sample string) string {
	e.t.Helper()
	_, b := e.do(http.MethodGet, "/metrics", "", nil, nil, nil)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return fmt.Sprintf("(no sample %s)", sample)
}

// trailKey keys the test servers' audit trails.
var trailKey, _ = audit.NewKey(bytes.Repeat([]byte{0x12}, audit.KeySize))

// testKeys gives trailKey for every trail.
type testKeys struct{}

func (testKeys) Key(openrecall.TrailState, bool) (audit.Key, error) { return trailKey, nil }
func (testKeys) Explain(err error) error                            { return err }
