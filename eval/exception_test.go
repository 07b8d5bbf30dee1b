package eval

import (
	"context"
	"maps"
	"testing"

	"github.com/openrecall/openrecall"
)

// statsOf returns the Stats of the named group, zero when absent.
func statsOf(groups []Group, name string) Stats {
	for _, g := range groups {
		if g.Name == name {
			return g.Stats
		}
	}
	return Stats{}
}

// TestReplayExceptionsAndDetectionStorms replays a generated corpus with
// exceptions and alert groups, as 'openrecall eval' does: memory proposes
// an exception for each benign detection, the analyst approves it, its
// later firings are closed by it without a model call, and no near miss —
// another user or process, more severe than the ceiling, another
// environment — and no storm intruder is ever closed; the storms' own
// firings form one group per storm and every intruder a group apart.
func TestReplayExceptionsAndDetectionStorms(t *testing.T) {
	ctx := context.Background()
	c := mustGenerate(t, 20260101, 1200)
	p := newPipelineOpts(t, pipelineOptions{grouping: true, exceptions: true})
	cfg := p.config()
	cfg.Exceptions = p.desk
	rep, err := Replay(ctx, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Safe() {
		t.Fatalf("false closures: %+v", rep.FalseBypasses)
	}
	if want := len(benignDetections()); rep.Exceptions.Approved != want {
		t.Errorf("approved %d exceptions, want one per benign detection (%d): %+v", rep.Exceptions.Approved, want, rep.Exceptions)
	}
	ex := rep.Exception
	if ex.Alerts == 0 || ex.Excepted != ex.Alerts || ex.CheapCalls+ex.StrongCalls != 0 || ex.Cost != 0 || ex.Savings() != ex.Baseline || ex.Baseline <= 0 {
		t.Errorf("exception row %+v: want alerts closed with no model call, cost 0 and their whole baseline saved", ex)
	}
	if ex.Correct != ex.Alerts || ex.FalseBypasses != 0 {
		t.Errorf("exception row %+v: every alert an exception closed must be a benign detection decided as its truth", ex)
	}
	if d := statsOf(rep.ByKind, string(KindBenignDetection)); d.Excepted != ex.Alerts {
		t.Errorf("benign detections excepted %d, exception row %d: only benign detections may be excepted", d.Excepted, ex.Alerts)
	}
	for _, k := range []Kind{KindExceptionNearMiss, KindStormIntruder} {
		s := statsOf(rep.ByKind, string(k))
		if s.Alerts == 0 {
			t.Errorf("the corpus holds no %s alert", k)
		}
		if s.Excepted+s.Bypassed+s.FalseBypasses != 0 || s.Missed != 0 {
			t.Errorf("%s: %+v; none may be closed or decided benign", k, s)
		}
	}
	// A near miss differing in a user or a process can make memory
	// propose a narrower exception; the analyst, who knows it is an
	// intrusion, declines it.
	if rep.Exceptions.Proposals != rep.Exceptions.Approved+rep.Exceptions.Declined {
		t.Errorf("proposals %+v: each proposal must be approved or declined", rep.Exceptions)
	}
	st := rep.Storms
	bursts := st.Intruders
	if st.Firings == 0 || st.Intruders == 0 || st.Firings != bursts*(detectionStormSize-1) {
		t.Fatalf("storms %+v: want bursts of %d firings with one intruder each", st, detectionStormSize-1)
	}
	if st.Groups != bursts || st.Apart != st.Intruders || st.Closed != 0 {
		t.Errorf("storms %+v: want one group per storm, every intruder in a group apart, none closed", st)
	}
	if s := statsOf(rep.ByKind, string(KindDetectionStorm)); s.GroupedMembers != st.Firings-bursts {
		t.Errorf("detection storm firings grouped %d, want all but each storm's head (%d)", s.GroupedMembers, st.Firings-bursts)
	}

	// The approvals went through the use case: stored with their analyst
	// and the proposal they approved.
	list, err := p.st.Exceptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != rep.Exceptions.Approved {
		t.Fatalf("%d exceptions stored, %d approved", len(list), rep.Exceptions.Approved)
	}
	for _, e := range list {
		if e.Analyst != Analyst || e.ProposalID == "" || len(e.Match) == 0 || !e.DNA.HasAttack() {
			t.Errorf("exception %+v: want one the analyst approved from a proposal, with match fields, for an attack pattern", e)
		}
	}
	t.Logf("exceptions %+v: %d alerts excepted, %s saved; storms %+v", rep.Exceptions, ex.Alerts, ex.Savings(), st)
}

// TestReplayWithoutApprover makes the same replay with no one to approve:
// proposals are made and never approved, nothing is excepted.
func TestReplayWithoutApprover(t *testing.T) {
	ctx := context.Background()
	p := newPipelineOpts(t, pipelineOptions{exceptions: true})
	rep, err := Replay(ctx, mustGenerate(t, 20260101, 600), p.config())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exceptions.Proposals == 0 || rep.Exceptions.Approved != 0 || rep.Exception.Alerts != 0 {
		t.Errorf("without an approver: %+v, %d excepted; want proposals, no approval, nothing excepted", rep.Exceptions, rep.Exception.Alerts)
	}
}

// TestExceptionClosureCounts checks that an alert closed by an exception
// counts as a false closure when its truth is not benign, and as a plain
// closure (a model call saved) when it is.
func TestExceptionClosureCounts(t *testing.T) {
	excepted := openrecall.Result{
		Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionKnownBenign,
		Exception: &openrecall.ExceptionRef{ID: "exc_1", Analyst: "someone"},
		Baseline:  1000,
		Steps:     []openrecall.RouteStep{{Step: openrecall.StepException, Skipped: true, Baseline: 1000}},
	}
	tests := []struct {
		name      string
		truth     Truth
		wantFalse int
	}{
		{"benign detection", Truth{Family: "ci-runner-shell", Kind: KindBenignDetection, Decision: openrecall.DecisionKnownBenign}, 0},
		{"near miss", Truth{Family: "near-miss:ci-runner-shell", Kind: KindExceptionNearMiss, Decision: openrecall.DecisionReal}, 1},
		{"real incident", Truth{Family: "novel", Kind: KindNovelReal, Decision: openrecall.DecisionReal}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acc := newAccumulator("test", openrecall.Mode{}, 5, nil)
			acc.add(tt.truth, excepted, false)
			r := acc.report(0, 0)
			if r.Overall.FalseBypasses != tt.wantFalse || len(r.FalseBypasses) != tt.wantFalse || r.Safe() != (tt.wantFalse == 0) {
				t.Errorf("false closures %d (listed %d, safe %v), want %d", r.Overall.FalseBypasses, len(r.FalseBypasses), r.Safe(), tt.wantFalse)
			}
			if r.Exception.Alerts != 1 || r.Overall.Excepted != 1 || r.Exception.Savings() != 1000 || r.Overall.Compression() != 1 {
				t.Errorf("exception row %+v: want one alert, no model call, its baseline saved", r.Exception)
			}
			if tt.wantFalse > 0 && (len(r.MissedReal) != 1 || r.MissedReal[0].By != "exception") {
				t.Errorf("missed real %+v: want the alert, decided by the exception", r.MissedReal)
			}
		})
	}
}

// TestGeneratedDetections checks the corpus's detections as intake and the
// fingerprint rules read them: every near miss has its detection's
// identity and differs from the detection's benign firings in exactly one
// of a match field's value (user or process), a severity above theirs, or
// the critical Alert DNA; a storm's own firings share every entity field,
// the command included, and an intruder differs from them in exactly one.
func TestGeneratedDetections(t *testing.T) {
	c := mustGenerate(t, 20260101, 2400)
	recs := readAlerts(t, c)
	p := newPipeline(t, false)
	type firing struct {
		alert openrecall.Alert
		id    openrecall.Identity
		dna   openrecall.Fingerprint
	}
	byFamily := map[string][]firing{}
	kinds := map[string]Kind{}
	for i, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("record %d rejected: %v", i, rec.Err)
		}
		tr := c.Truth[i]
		switch tr.Kind {
		case KindBenignDetection, KindExceptionNearMiss, KindDetectionStorm, KindStormIntruder:
		default:
			continue
		}
		a := rec.Alert
		if len(a.Entities) == 0 {
			t.Fatalf("%s (%s): no entity fields", a.Position, tr.Kind)
		}
		byFamily[tr.Family] = append(byFamily[tr.Family], firing{a, p.ex.Identify(a), openrecall.CriticalDNA(p.ex.Extract(a))})
		kinds[tr.Family] = tr.Kind
	}
	// the entity fields that stay the same across a detection's firings
	stable := []string{"user", "process", "parent_process", "image", "namespace"}
	differs := func(base, f firing) []string {
		var out []string
		for _, k := range stable {
			if base.alert.Entities[k] != f.alert.Entities[k] {
				out = append(out, k)
			}
		}
		if !openrecall.WithinCeiling(f.alert.Severity, base.alert.Severity) {
			out = append(out, "severity")
		}
		if f.dna != base.dna {
			out = append(out, "dna")
		}
		return out
	}
	check := func(name string, base firing, others []firing, want int) {
		for _, f := range others {
			if f.id != base.id {
				t.Errorf("%s %s: identity %s, want %s", name, f.alert.Position, f.id, base.id)
			}
			if d := differs(base, f); len(d) != want {
				t.Errorf("%s %s differs from its detection in %v, want %d field(s)", name, f.alert.Position, d, want)
			}
		}
	}
	for _, d := range append(benignDetections(), stormDetection()) {
		benign := byFamily[d.name]
		if len(benign) < nearMissAfter {
			t.Fatalf("detection %s: %d firings", d.name, len(benign))
		}
		if !benign[0].dna.HasAttack() {
			t.Errorf("detection %s: no attack pattern in %s", d.name, benign[0].dna)
		}
		check(d.name, benign[0], benign[1:], 0)
		if kinds[d.name] == KindDetectionStorm {
			for _, f := range benign[1:] {
				if !maps.Equal(f.alert.Entities, benign[0].alert.Entities) {
					t.Errorf("storm %s: %v and %v: a storm's firings share every entity field", d.name, f.alert.Entities, benign[0].alert.Entities)
				}
			}
			intruders := byFamily["intruder:"+d.name]
			if len(intruders) == 0 {
				t.Errorf("storm %s: no intruder", d.name)
			}
			check("intruder of "+d.name, benign[0], intruders, 1)
			continue
		}
		misses := byFamily["near-miss:"+d.name]
		if len(misses) < int(nearMisses) {
			t.Errorf("detection %s: %d near misses, want every variant", d.name, len(misses))
		}
		check("near miss of "+d.name, benign[0], misses, 1)
	}
}
