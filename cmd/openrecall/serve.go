package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/workflow"
)

type serveOptions struct {
	listen      string
	debugListen string
	rules       string
	senders     string
	shadow      bool
	workers     int
}

func newServeCmd(a *app) *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Receive alerts over HTTP (Alertmanager, PagerDuty Events v2, any intake format) and triage them",
		Long: `Serve the pipeline over HTTP. Alertmanager posts to /api/v1/alerts/alertmanager, PagerDuty
senders to /v2/enqueue, any sender to /api/v1/alerts/NAME (the senders of the mapping files in
senders.dir or --senders DIR included: 'openrecall senders list'), anything else to
/api/v1/alerts. Accepted alerts are written to a durable inbox before the 202 answer and
analysed by workers through the same workflow as analyze; a redelivered notification is not
triaged twice. Results, retain, recall, cost and audit verification
are served under /api/v1; /healthz, /readyz and /metrics for operators. Logs (with one access
line per request) go to stderr as JSON at info level unless --log-format/--log-level say otherwise.

Tokens come from the config (server.tokens: a token of 16 bytes or more; one with the retain
scope needs a name, the analyst its decisions record) and from OPENRECALL_INGEST_TOKEN and
OPENRECALL_READ_TOKEN. Without a token the server listens on loopback only. server.tls serves
TLS itself; behind a TLS proxy, server.trusted_proxies lets X-Forwarded-Proto and X-Forwarded-For
through. Cockpit logins are throttled and their sessions kept in the database: 'openrecall serve
revoke-sessions' ends them all. SIGTERM stops accepting, lets in-flight analyses finish and exits 0; waiting deliveries stay
in the inbox for the next start.`,
		Example: `  OPENRECALL_INGEST_TOKEN=$(openssl rand -hex 16) openrecall serve --listen 0.0.0.0:9555
  openrecall serve --shadow        # propose and audit, never bypass
  openrecall serve --provider openai --base-url http://127.0.0.1:11434/v1 --cheap-model llama3.1:8b --strong-model qwen2.5:32b`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("workers") && opts.workers < 1 {
				return usageErr("--workers %d: want at least 1", opts.workers)
			}
			// A server logs for machines: JSON access logs at info, unless
			// asked otherwise.
			if !cmd.Flags().Changed("log-level") {
				a.logLevel = "info"
			}
			if !cmd.Flags().Changed("log-format") {
				a.logFormat = "json"
			}
			if err := a.setupLogger(); err != nil {
				return err
			}
			return serveRun(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.listen, "listen", "", "address to listen on (default: the config's server.listen, 127.0.0.1:9555)")
	f.StringVar(&opts.debugListen, "debug-listen", "", "serve Go's runtime profiles (/debug/pprof/: heap, CPU, goroutines) on this loopback address, apart from the API (default: none)")
	f.StringVar(&opts.rules, "rules", "", "extra fingerprint rules file (YAML) laid over the embedded rules")
	f.StringVar(&opts.senders, "senders", "", sendersFlagUsage)
	f.BoolVar(&opts.shadow, "shadow", false, "propose and audit, but never bypass the model (measure agreement before trusting memory)")
	f.IntVar(&opts.workers, "workers", 0, "deliveries analysed concurrently (default: the config's server.workers)")
	a.modelFlags.bind(f)
	cmd.AddCommand(newRevokeSessionsCmd(a))
	return cmd
}

// newRevokeSessionsCmd ends every cockpit session at once: they live in
// the database, so every serve process sharing it forgets them.
func newRevokeSessionsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke-sessions",
		Short: "End every cockpit session (all serve processes sharing the database); analysts log in again",
		Long: `End every cockpit session at once. Sessions live in the database, so every serve process
sharing it forgets them at its next request, running or not; analysts log in again with their
tokens. Use it after a token leaked or left the configuration, or a laptop was lost.`,
		Example: `  openrecall serve revoke-sessions
  openrecall --db postgres://openrecall@db/openrecall serve revoke-sessions`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return revokeSessionsRun(cmd.Context(), a)
		},
	}
}

// revokeSessionsRun deletes every session and says how many.
func revokeSessionsRun(ctx context.Context, a *app) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	n, err := st.RevokeSessions(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.out, "revoked %d cockpit session(s)\n", n)
	return err
}

// serveBatch names the server's analyses: serve-NNNNNN, numbered by inbox id.
const serveBatch = "serve"

func serveRun(ctx context.Context, a *app, opts *serveOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	sc := cfg.Server
	if opts.listen != "" {
		sc.Listen = opts.listen
	}
	if opts.workers > 0 {
		sc.Workers = opts.workers
	}
	// The senders first: a bad mapping file stops the start before
	// anything listens.
	senders, err := a.senders(cfg, opts.senders)
	if err != nil {
		return err
	}
	// The receivers and routes too, with their secrets.
	ns, err := notifySettings(cfg)
	if err != nil {
		return err
	}
	chat, err := chatSettings(cfg)
	if err != nil {
		return err
	}
	resolved, err := sc.ResolvedTokens(nil)
	if err != nil {
		return err
	}
	tokens := make([]server.Token, len(resolved))
	for i, t := range resolved {
		tokens[i] = server.Token{Name: t.Name, Secret: t.Token, Scopes: t.Scopes}
		// Resolved tokens list the configured ones first, in order; only
		// a name the configuration gave is an analyst's.
		if i < len(sc.Tokens) {
			tokens[i].Analyst = sc.Tokens[i].Name
		}
	}
	warnChatAnalysts(a.log, chat, tokens)
	if err := server.CheckListen(sc.Listen, len(tokens)); err != nil {
		return usageErr("%v", err)
	}
	proxies, err := config.ParseProxies(sc.TrustedProxies)
	if err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if sc.TLS.Enabled() {
		cert, err := tls.LoadX509KeyPair(sc.TLS.CertFile, sc.TLS.KeyFile)
		if err != nil {
			return fmt.Errorf("server.tls: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if sc.ArchiveDir != "" {
		// Made now, so a directory that cannot be is an error at start,
		// not at the first pruning pass.
		if err := os.MkdirAll(sc.ArchiveDir, 0o700); err != nil {
			return fmt.Errorf("server.archive_dir: %w", err)
		}
	}
	if opts.debugListen != "" {
		addr, err := debugListen(ctx, opts.debugListen)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.errOut, "openrecall serve: runtime profiles on http://%s/debug/pprof/\n", addr)
	}
	instance := sc.Instance
	if instance == "" {
		// The host and the configured listen address: stable across
		// restarts, and different for two processes on one host (they
		// listen on different ports).
		host, _ := os.Hostname() // an empty host name still names an instance with the address
		instance = host + "/" + sc.Listen
	}
	st, err := a.openServeStore(ctx, cfg, instance, sc.Lease)
	if err != nil {
		return err
	}
	defer a.closeLogged("memory", st)
	// The audit key first, as serve always found it: bound before the
	// rules are read.
	sealer, err := a.sealer(ctx, st)
	if err != nil {
		return err
	}
	ex, err := a.extractor(cfg, opts.rules)
	if err != nil {
		return err
	}
	rootOpts := []compose.Option{compose.Sealer(compose.FixedSealer(sealer)), compose.Batch(serveBatch), compose.Shadow(opts.shadow),
		compose.GroupScope(), compose.Retention(sc.Retention), compose.Continue()}
	if len(ns.Receivers) > 0 {
		// Each stored result's notification intents, in its transaction.
		rootOpts = append(rootOpts, compose.Notify(notify.Intents(ns.Route, ns.ReceiverNames())))
	}
	root := a.root(cfg, st, ex, rootOpts...)
	// Several processes may share the daily cost curve: points continue
	// what is stored (Continue).
	sink, err := root.Sink(ctx)
	if err != nil {
		return err
	}
	// One circuit per tier for the life of the process: every day's router
	// reports its calls to them, /readyz and /metrics read them.
	a.cheapCircuit = routing.NewCircuit(openrecall.TierCheap, routing.DefaultCircuitFailures, a.now)
	a.strongCircuit = routing.NewCircuit(openrecall.TierStrong, routing.DefaultCircuitFailures, a.now)
	modelHealth := func() []server.ModelHealth {
		return []server.ModelHealth{healthOf(a.cheapCircuit.State()), healthOf(a.strongCircuit.State())}
	}
	newPipeline := func(sink workflow.Sink) (runner.Pipeline, error) {
		var budget *routing.Budget
		if b := openrecall.DollarsToNano(sc.BudgetUSDPerDay); b > 0 {
			// Each UTC day's budget lives in the database: every serve
			// process sharing it, and a restart the same day, spend
			// from it.
			budget = routing.NewDailyBudget(b, st, a.now)
		}
		// The strong model is priced at the mean of the strong
		// completions recorded so far, read again each day, as an
		// analyze run begun that day reads it.
		r, mode, err := a.dailyRouter(ctx, cfg, st, budget)
		if err != nil {
			return nil, err
		}
		return root.Pipeline(r, mode, sink)
	}
	prom := server.NewPrometheus(func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := st.InboxDepth(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	prom.WatchModels(modelHealth)
	prom.WatchOutbox(func() (openrecall.OutboxCounts, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return st.OutboxCounts(ctx)
	})
	var dispatch *runner.DispatchConfig
	if len(ns.Receivers) > 0 {
		dispatch = &runner.DispatchConfig{Outbox: st, Reader: decisionReader{st}, Receivers: ns.Receivers,
			Concurrency: ns.Concurrency, MaxAge: ns.MaxAge, BackoffBase: ns.BackoffBase, BackoffMax: ns.BackoffMax,
			Lease: sc.Lease, ReviewURL: reviewURL(ns.ExternalURL), Observer: prom, Now: a.now,
			DigestEvery: ns.Digests, Digests: st}
		fmt.Fprintf(a.errOut, "openrecall serve: notifying %s\n", strings.Join(ns.ReceiverNames(), ", "))
	}
	// The runner drains the inbox beside the HTTP server; the server
	// starts it and stops it after its own shutdown.
	run, err := runner.New(runner.Config{
		Store:       st,
		Sink:        sink,
		NewPipeline: newPipeline,
		UseCases:    root.UseCases,
		Workers:     sc.Workers,
		Dispatch:    dispatch,
		Lease:       sc.Lease,
		Retention:   sc.Retention,
		Pruner:      st,
		ArchiveDir:  sc.ArchiveDir,
		Forgetter:   st,
		Observer:    prom,
		Logger:      a.log,
		Now:         a.now,
	})
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Store:           st,
		Daemon:          run,
		UseCases:        root.UseCases,
		Tokens:          tokens,
		Senders:         senders,
		MaxBodyBytes:    sc.MaxBodyBytes,
		InboxLimit:      sc.InboxLimit,
		RequestTimeout:  sc.RequestTimeout,
		ShutdownTimeout: sc.ShutdownTimeout,
		RecallLimit:     cfg.Triage.RecallLimit,
		Retention:       sc.Retention,
		Shadow:          opts.shadow,
		TLS:             tlsCfg,
		TrustedProxies:  proxies,
		Observer:        prom,
		ModelHealth:     modelHealth,
		Slack:           slackServer(chat),
		Logger:          a.log,
		Now:             a.now,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", sc.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The bound address on stderr, so a caller that asked for port 0 learns
	// the port.
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	fmt.Fprintf(a.errOut, "openrecall serve: listening on %s://%s (%s, db %s)\n", scheme, ln.Addr(), modeLine(opts.shadow), st.Path())
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(a.errOut, "openrecall serve: stopped")
	return nil
}

func modeLine(shadow bool) string {
	if shadow {
		return "shadow mode: proposes and audits, never bypasses"
	}
	return "memory bypass on"
}

// healthOf is a tier's circuit as /readyz shows it.
func healthOf(c routing.CircuitState) server.ModelHealth {
	h := server.ModelHealth{Tier: string(c.Tier), Open: c.Open, ConsecutiveFailures: c.Failures, LastError: c.LastError}
	if !c.Since.IsZero() {
		since := c.Since
		h.Since = &since
	}
	return h
}
