package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/eval"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// approveAll is a deliberately unsafe guard: it approves the bypass for
// whatever memory proposes, attacks included.
func approveAll(fp openrecall.Fingerprint, tr openrecall.TriageResult, cfg triage.Config) openrecall.GuardVerdict {
	return openrecall.GuardVerdict{Bypass: tr.Decision.Retainable(), Reason: "unsafe test guard"}
}

// obedient honours every bypass verdict, where the product's router refuses
// contradictory ones, so the unsafe guard's verdicts really bypass.
type obedient struct{ next workflow.Router }

// Grouped routes a group member as the product's router does.
func (o obedient) Grouped(in routing.Input, head openrecall.GroupHead, why string) routing.Output {
	return o.next.(workflow.GroupRouter).Grouped(in, head, why)
}

// Excepted routes an exception match as the product's router does.
func (o obedient) Excepted(in routing.Input, e openrecall.Exception) routing.Output {
	return o.next.(workflow.ExceptionRouter).Excepted(in, e)
}

func (o obedient) Route(ctx context.Context, in routing.Input) routing.Output {
	if !in.Guard.Bypass {
		return o.next.Route(ctx, in)
	}
	return routing.Output{
		Steps: []openrecall.RouteStep{{Step: openrecall.StepMemoryBypass, Model: "memory", Skipped: true,
			Reason: "unsafe test router", Outcome: openrecall.OutcomeOK, Proposed: in.Triage.Decision}},
		Decision: in.Triage.Decision,
		Bypassed: true,
	}
}

// runEval runs `eval ARGS` with opts (for the test-only wiring hook) and
// returns the exit code the CLI would give.
func runEval(t *testing.T, opts *evalOptions, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{streams: streams{in: strings.NewReader(""), out: &out, errOut: &errOut}, now: fixedClock(),
		newBatch: func() string { return "run-eval-test" }}
	cmd := newEvalCmdWith(a, opts)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx := context.Background()
	ran, err := cmd.ExecuteContextC(ctx)
	code := a.exitCode(ctx, ran, err)
	return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// TestEvalUnsafeGuardExits5 is the acceptance test: with a guard that
// bypasses attacks (and a router that obeys it) eval reports the false
// bypasses and exits 5; the product's wiring on the same corpus exits 0.
func TestEvalUnsafeGuardExits5(t *testing.T) {
	unsafe := &evalOptions{wire: func(c *workflow.Config) {
		c.Guard = approveAll
		c.Router = obedient{next: c.Router}
	}}
	r := runEval(t, unsafe, "--size", "300", "--seed", "11")
	if r.code != exitUnsafeEval {
		t.Fatalf("unsafe guard: exit %d, want %d\nstderr: %s", r.code, exitUnsafeEval, r.stderr)
	}
	for _, want := range []string{"FALSE CLOSURES", "summary: UNSAFE", "MISSED: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("unsafe report lacks %q", want)
		}
	}
	if !strings.Contains(r.stderr, "false bypass") {
		t.Errorf("stderr %q does not say why the run failed", r.stderr)
	}

	r = runEval(t, &evalOptions{}, "--size", "300", "--seed", "11")
	if r.code != exitOK {
		t.Fatalf("product guard: exit %d, want 0\nstderr: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "summary: SAFE false_bypasses=0") {
		t.Errorf("safe report lacks its summary line:\n%s", r.stdout)
	}
}

// TestEvalApprovesExceptions runs eval on a corpus long enough for memory
// to propose an exception for each benign detection: the simulated analyst
// approves them through the exception use case, later firings are closed
// by them, no near miss is, and the report says so.
func TestEvalApprovesExceptions(t *testing.T) {
	r := runEval(t, &evalOptions{}, "--size", "800", "--seed", "20260101")
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0\nstderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{"approved=3 ", "EXCEPTIONS: ", "; 0 of them falsely", "summary: SAFE false_bypasses=0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "excepted=0 ") {
		t.Errorf("no alert was closed by an approved exception:\n%s", r.stdout)
	}
}

// TestEvalGenThenCorpus writes a corpus with `eval gen` and replays it with
// --corpus: the figures equal those of the generated run, and --modes says
// why the missing quadrants did not run.
func TestEvalGenThenCorpus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	r := runCLI(t, "", "eval", "gen", "--seed", "9", "--size", "200", "--out", dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "wrote 200 alerts") {
		t.Fatalf("eval gen: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	decode := func(r runResult) eval.Output {
		t.Helper()
		if r.code != exitOK {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		var out eval.Output
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("decode report: %v\n%s", err, r.stdout)
		}
		return out
	}
	replayed := decode(runCLI(t, "", "eval", "--corpus", dir, "--output", "json", "--modes"))
	generated := decode(runCLI(t, "", "eval", "--seed", "9", "--size", "200", "--output", "json"))
	if replayed.Report.Overall != generated.Report.Overall {
		t.Errorf("replaying the written corpus changed the figures:\n%+v\n%+v", replayed.Report.Overall, generated.Report.Overall)
	}
	if len(replayed.Modes) != 5 {
		t.Fatalf("%d mode rows, want 5", len(replayed.Modes))
	}
	// The fake row is the openai provider over HTTP against the in-process
	// fake, which answers as the local analyst does (and rate-limits one
	// request in ten): the same decisions, labelled fake, never live.
	det, fk := replayed.Modes[0], replayed.Modes[1]
	if fk.Mode.Model != "fake" || !fk.Ran || fk.Report == nil {
		t.Fatalf("second row %+v: want the fake row, run", fk)
	}
	d, f := det.Report.Overall, fk.Report.Overall
	if d.Correct != f.Correct || d.Escalated != f.Escalated || d.EligibleBypassed != f.EligibleBypassed || d.Missed != f.Missed {
		t.Errorf("the fake row decided otherwise than the local analyst it serves:\n%+v\n%+v", d, f)
	}
	if f.LiveCalls == 0 || d.LiveCalls != 0 || f.CheapCalls+f.StrongCalls <= d.CheapCalls+d.StrongCalls {
		t.Errorf("calls: want requests (and their retried attempts) only in the fake row: deterministic %+v, fake %+v", d, f)
	}
	for _, m := range replayed.Modes[2:] {
		if m.Ran || m.Reason == "" {
			t.Errorf("mode %s: ran=%v reason=%q; a missing quadrant must say why", m.Mode, m.Ran, m.Reason)
		}
	}
	if len(generated.Modes) != 0 {
		t.Errorf("without --modes, %d mode rows", len(generated.Modes))
	}
}

func TestEvalUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"size too small", []string{"eval", "--size", "3"}, exitUsage, "--size 3"},
		{"corpus and seed", []string{"eval", "--corpus", "x", "--seed", "2"}, exitUsage, "--corpus replays"},
		{"bad output", []string{"eval", "--output", "yaml"}, exitUsage, "--output"},
		{"gen without out", []string{"eval", "gen"}, exitUsage, "--out DIR is required"},
		{"missing corpus", []string{"eval", "--corpus", "/nonexistent/corpus"}, exitFailure, "alerts.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d containing %q", r.code, r.stderr, tt.code, tt.want)
			}
		})
	}
}

// eval --modes runs the shared backend's deterministic row on PostgreSQL
// when --db names one (a scratch schema of its own, dropped after), with
// the figures of the SQLite row: the same alerts, the same decisions.
func TestEvalModesOnPostgres(t *testing.T) {
	db := pgtest.DSN(t)
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = raw.Close() }() // a read pool of the test's own
	scratch := func() int {
		var n int
		if err := raw.QueryRow(`SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'openrecall\_eval\_%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := scratch()
	r := runCLI(t, "", "--db", db, "eval", "--seed", "9", "--size", "200", "--output", "json", "--modes")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var out eval.Output
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("decode report: %v\n%s", err, r.stdout)
	}
	rows := map[string]eval.ModeRow{}
	for _, m := range out.Modes {
		rows[m.Mode.Memory+"/"+m.Mode.Model] = m
	}
	lite, pg := rows["sqlite/deterministic"], rows["postgres/deterministic"]
	if !lite.Ran || !pg.Ran || lite.Report == nil || pg.Report == nil {
		t.Fatalf("rows: sqlite %+v, postgres %+v; want both run", lite, pg)
	}
	if lite.Report.Overall != pg.Report.Overall {
		t.Errorf("the PostgreSQL row's figures differ from SQLite's:\n%+v\n%+v", lite.Report.Overall, pg.Report.Overall)
	}
	if live := rows["postgres/live"]; live.Ran || live.Reason == "" {
		t.Errorf("postgres/live: ran=%v reason=%q; want a reason", live.Ran, live.Reason)
	}
	if left := scratch() - before; left != 0 {
		t.Errorf("eval left %d scratch schemas", left)
	}
}

// TestEvalDecidesGroupsThroughTheUseCase: eval's pipeline stores each
// result through the sink and its simulated analyst decides each group
// through usecase.App.DecideGroup over the stored groups: in the scratch
// memory (kept here), every group a bypassed head does not lead is
// closed by the analyst, and the trail holds one group-decision entry per
// firing of it — none for a firing that joined after the decision, as one
// would if the session did not take the closure from the store.
func TestEvalDecidesGroupsThroughTheUseCase(t *testing.T) {
	ctx := context.Background()
	a := &app{streams: streams{in: strings.NewReader(""), out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}, now: fixedClock(),
		newBatch: func() string { return "run-eval-test" }}
	cfg, err := a.config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Models = defaultModels(cfg.Models)
	path := filepath.Join(t.TempDir(), "memory.db")
	keep := func(context.Context) (string, func() error, error) { return path, func() error { return nil }, nil }
	c, err := eval.Generate(1, 400)
	if err != nil {
		t.Fatal(err)
	}
	spec := eval.ModeSpec{Mode: openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, Open: func(ctx context.Context) (eval.Pipeline, error) {
		return a.evalPipeline(ctx, cfg, &evalOptions{}, noRelease(a.router), keep)
	}}
	rows, err := eval.RunModes(ctx, c, []eval.ModeSpec{spec}, eval.Config{LearnAfter: eval.DecisionsToVouch(cfg.Triage.BypassConfidence), Now: a.now})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Report == nil || rows[0].Report.Grouped.Alerts == 0 {
		t.Fatalf("rows %+v: want a report with grouped firings", rows)
	}
	st, err := memory.Open(ctx, path, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }() // read only
	perFiring := map[string]int{}
	if err := st.ReadTrail(ctx, memory.TrailReader{Entry: func(e openrecall.AuditEntry) error {
		if e.Step == usecase.StepGroupDecision {
			perFiring[e.AnalysisID]++
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	groups, err := st.Groups(ctx, false, 100000)
	if err != nil {
		t.Fatal(err)
	}
	decided, firings := 0, 0
	for _, g := range groups {
		if g.Head.Bypassed {
			continue
		}
		if !g.Decided || g.Analyst != eval.Analyst {
			t.Errorf("group %s: decided %v by %q; want closed in the store by the simulated analyst", g.ID, g.Decided, g.Analyst)
			continue
		}
		decided++
		members, err := st.GroupMembers(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			firings++
			if perFiring[m.AnalysisID] != 1 {
				t.Errorf("group %s: firing %s has %d group-decision entries, want 1", g.ID, m.AnalysisID, perFiring[m.AnalysisID])
			}
		}
	}
	total := 0
	for _, n := range perFiring {
		total += n
	}
	if decided == 0 || total != firings {
		t.Errorf("%d groups decided; %d group-decision entries for their %d firings", decided, total, firings)
	}
}
