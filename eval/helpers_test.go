package eval

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// fixedNow is a clock that advances one millisecond per reading, so
// throughput figures are deterministic in tests.
func fixedNow() func() time.Time {
	t := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// unsafeGuard approves the memory bypass for everything memory proposes,
// attacks included.
func unsafeGuard(fp openrecall.Fingerprint, tr openrecall.TriageResult, cfg triage.Config) openrecall.GuardVerdict {
	return openrecall.GuardVerdict{Bypass: tr.Decision.Retainable(), Reason: "unsafe test guard"}
}

// obedientRouter honours every bypass verdict, where routing.Router refuses
// contradictory ones: together with unsafeGuard it makes the unsafe path
// real.
type obedientRouter struct{ *routing.Router }

func (o obedientRouter) Route(ctx context.Context, in routing.Input) routing.Output {
	if !in.Guard.Bypass {
		return o.Router.Route(ctx, in)
	}
	return routing.Output{
		Steps: []openrecall.RouteStep{{
			Step: openrecall.StepMemoryBypass, Model: "memory", Skipped: true,
			Reason: "unsafe test router", Outcome: openrecall.OutcomeOK, Proposed: in.Triage.Decision,
		}},
		Decision: in.Triage.Decision,
		Bypassed: true,
	}
}

type pipeline struct {
	wf *workflow.Workflow
	// session is the workflow's session the replay analyses with: it
	// stores each result through the sink, as eval's does.
	session *workflow.Session
	// uc is the use cases the simulated analyst retains and decides
	// groups through.
	uc *usecase.App
	st *memory.Store
	ex *fingerprint.Extractor
	// desk approves proposals, set when the pipeline matches exceptions.
	desk Approver
}

// pipelineOptions are newPipelineOpts's switches.
type pipelineOptions struct {
	unsafe, grouping, exceptions bool
}

// newPipeline wires the real pipeline over a fresh SQLite file; unsafe
// swaps in unsafeGuard and obedientRouter.
func newPipeline(t testing.TB, unsafe bool) pipeline {
	t.Helper()
	return newPipelineWith(t, unsafe, false)
}

// newPipelineWith is newPipeline, with alert groups when grouping is set.
func newPipelineWith(t testing.TB, unsafe, grouping bool) pipeline {
	t.Helper()
	return newPipelineOpts(t, pipelineOptions{unsafe: unsafe, grouping: grouping})
}

// newPipelineOpts wires the real pipeline as o says, as eval wires it: the
// session stores each result through the sink (audited with a test key)
// and, with grouping, continues the groups stored under its batch; with
// exceptions the workflow matches the memory's exceptions and desk approves
// proposals through the exception use cases.
func newPipelineOpts(t testing.TB, o pipelineOptions) pipeline {
	t.Helper()
	unsafe, grouping := o.unsafe, o.grouping
	ctx := context.Background()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(ctx, filepath.Join(t.TempDir(), "eval.db"), memory.Options{Now: fixedNow()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := routing.New(routing.Config{
		Cheap: local.NewCheap(), Strong: local.NewStrong(), Prices: cfg.PriceTable(),
		CheapMaxTokens: cfg.Models.CheapMaxTokens, StrongMaxTokens: cfg.Models.StrongMaxTokens,
		ExpectedCompletionTokens: cfg.Models.StrongExpectedCompletionTokens, GateConfidence: cfg.Triage.GateConfidence,
		Vet: triage.Vet, Now: fixedNow(),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Wired as eval wires it (internal/compose), with the test's switches.
	cfg.Grouping.Enabled = grouping
	k, err := audit.NewKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	opts := []compose.Option{compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(audit.NewSealer(k))), compose.Batch("eval-test"), compose.GroupScope()}
	if unsafe {
		opts = append(opts, compose.Wire(func(wc *workflow.Config) {
			wc.Guard = unsafeGuard
			wc.Router = obedientRouter{rt}
		}))
	}
	if !o.exceptions {
		opts = append(opts, compose.NoExceptions())
	}
	root := compose.Open(cfg, st, fixedNow(), nil, opts...)
	var desk Approver
	if o.exceptions {
		desk = testDesk{uc: root.UseCases}
	}
	sink, err := root.Sink(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := root.Pipeline(rt, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
	if err != nil {
		t.Fatal(err)
	}
	session, err := wf.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline{wf: wf, session: session, uc: root.UseCases, st: st, ex: ex, desk: desk}
}

// testDesk approves proposals as cmd/openrecall's eval does, through
// usecase.App.ApproveProposal: the session stored the proposal with its
// result.
type testDesk struct {
	uc *usecase.App
}

func (d testDesk) Approve(ctx context.Context, res openrecall.Result, analyst string) (openrecall.Exception, error) {
	ch, err := d.uc.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: res.Proposal.ID, Analyst: analyst})
	return ch.Exception, err
}

// config is the replay's configuration of p: its session, and its use
// cases for the analyst's retains and group decisions (no desk).
func (p pipeline) config() Config {
	return Config{Analyzer: p.session, Memory: p.uc, Groups: p.uc, Identifier: p.ex, Mode: p.wf.Mode(), Now: fixedNow()}
}

// readAlerts parses a corpus's alerts with the real intake.
func readAlerts(t *testing.T, c Corpus) []intake.Record {
	t.Helper()
	recs, err := intake.ParseBytes(c.Alerts, intake.Options{Source: AlertsFile})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func mustGenerate(t testing.TB, seed uint64, size int) Corpus {
	t.Helper()
	c, err := Generate(seed, size)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func lines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }
