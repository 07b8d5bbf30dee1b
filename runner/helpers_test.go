package runner_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// env is a runner over a real store (SQLite, or the test's PostgreSQL
// schema) and the real workflow, wired as serve wires it, running until
// the test stops it or ends.
type env struct {
	t     *testing.T
	store *memory.Store
	run   *runner.Runner
	app   *usecase.App
	// stop closes the runner's stop channel and returns what Run returned.
	stop func() error
}

type options struct {
	now func() time.Time
	// webhook, when set, is a webhook receiver's URL: every escalated or
	// real result is notified to it through the outbox.
	webhook string
	built   *int               // counts the pipelines built
	perDay  openrecall.NanoUSD // a daily model budget in the store, when positive

}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	ctx := context.Background()
	st, err := memory.Open(ctx, storetest.Location(t), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// Keyed and sealed as the commands key and seal a memory.
	sealer := storetest.Keyed(t, st, trailKey)
	ex := storetest.Fingerprinter(t)
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Grouping.Enabled = false // each alert its own analysis, as the server's tests run them
	opts := []compose.Option{compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(sealer)),
		compose.Keys(testKeys{}), compose.Batch("serve"), compose.GroupScope(), compose.Continue()}
	var dispatch *runner.DispatchConfig
	if o.webhook != "" {
		secret, err := notify.ParseSecret(o.webhook)
		if err != nil {
			t.Fatal(err)
		}
		hook, err := notify.NewWebhook(notify.WebhookConfig{Name: "hook", URL: secret})
		if err != nil {
			t.Fatal(err)
		}
		m, err := notify.ParseMatcher(`decision=~"escalated|real"`)
		if err != nil {
			t.Fatal(err)
		}
		route := &notify.Route{Routes: []*notify.Route{{Receiver: "hook", Matchers: []notify.Matcher{m}}}}
		opts = append(opts, compose.Notify(notify.Intents(route, []string{"hook"})))
		dispatch = &runner.DispatchConfig{Outbox: st, Reader: st, Receivers: []notify.Receiver{hook}, BackoffBase: 10 * time.Millisecond,
			Poll: 20 * time.Millisecond}
	}
	root := compose.Open(cfg, st, o.now, nil, opts...)
	sink, err := root.Sink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newPipeline := func(sink workflow.Sink) (runner.Pipeline, error) {
		if o.built != nil {
			*o.built++
		}
		var budget *routing.Budget
		if o.perDay > 0 {
			budget = routing.NewDailyBudget(o.perDay, st, o.now)
		}
		r, err := routing.New(routing.Config{
			Cheap: local.NewCheap(), Strong: local.NewStrong(), Prices: routing.DefaultPrices(), GateConfidence: 0.6, Vet: triage.Vet,
			Budget: budget, Now: o.now,
		})
		if err != nil {
			return nil, err
		}
		return root.Pipeline(r, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
	}
	run, err := runner.New(runner.Config{Store: st, Sink: sink, NewPipeline: newPipeline, UseCases: root.UseCases,
		Workers: 2, Dispatch: dispatch, Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: st, run: run, app: root.UseCases}
	// The test's deadline is the shutdown deadline: past it, analyses in
	// flight are abandoned.
	runCtx, cancel := context.WithDeadline(ctx, time.Now().Add(testenv.Remaining(t)))
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- run.Run(runCtx, stop) }()
	stopped := false
	e.stop = func() error {
		stopped = true
		close(stop)
		err := <-done
		cancel()
		return err
	}
	t.Cleanup(func() {
		if !stopped {
			if err := e.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		}
	})
	return e
}

// enqueue accepts one alert (JSON) into the inbox, as a receiver does,
// wakes the runner and returns the analysis id.
func (e *env) enqueue(body string) string {
	e.t.Helper()
	recs, err := intake.ParseBytes([]byte(body), intake.Options{Source: "alerts"})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		e.t.Fatalf("alert %s: %v %+v", body, err, recs)
	}
	ds := []openrecall.Delivery{{Endpoint: "alerts", Alert: recs[0].Alert}}
	out, err := e.store.Enqueue(context.Background(), ds, 1000, e.run.AnalysisID)
	if err != nil {
		e.t.Fatal(err)
	}
	e.run.Wake()
	return out[0].AnalysisID
}

// wait polls the inbox until analysis id is done, failing the test if it
// is not done before the test's deadline nears.
func (e *env) wait(id string) openrecall.Served {
	e.t.Helper()
	var sv openrecall.Served
	if !testenv.Poll(e.t, 20*time.Millisecond, func() bool {
		var err error
		sv, err = e.store.Served(context.Background(), id)
		if err != nil {
			e.t.Fatalf("result %s: %v", id, err)
		}
		return sv.Done
	}) {
		e.t.Fatalf("analysis %s not done before the test's deadline", id)
	}
	return sv
}

// trailKey keys the test runners' audit trails.
var trailKey, _ = audit.NewKey(bytes.Repeat([]byte{0x12}, audit.KeySize))

// testKeys gives trailKey for every trail.
type testKeys struct{}

func (testKeys) Key(openrecall.TrailState, bool) (audit.Key, error) { return trailKey, nil }
func (testKeys) Explain(err error) error                            { return err }
