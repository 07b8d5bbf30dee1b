package property

import (
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/triage"
)

// TestRegressions holds a named regression test for each counterexample a
// property found, as a subtest named after the property's ID, so that
// `-run '/^P6_'` runs a property and its regressions. Each value is also
// pinned on its property (pbt.Found) and runs under every seed.
func TestRegressions(t *testing.T) {
	t.Run("P6_one_incident_id_on_two_decisions", regressionOneIncidentIDOnTwoDecisions)
	t.Run("P2_duration_in_a_duration_slot", regressionDurationInADurationSlot)
	t.Run("P27_foreign_wal_file", regressionForeignWALFile)
}

// regressionOneIncidentIDOnTwoDecisions: P6's shrunk counterexample. Two
// strong matches share an incident id but carry different decisions; triage
// counts decisions, not ids, so real (two matches) dominates and adding a
// strong real match raises the consistent count from 2 to 3.
func regressionOneIncidentIDOnTwoDecisions(t *testing.T) {
	cfg := triage.DefaultConfig()
	ms := []openrecall.Match{
		{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch()}, Score: 0.85},
		{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.95},
		{Incident: openrecall.Incident{ID: "inc_01", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.85},
	}
	before := triage.Triage(openrecall.Fingerprint{}, openrecall.SeverityMedium, ms, cfg)
	if before.ConsistentCount != 2 || before.StrongCount != 3 || before.Decision != openrecall.DecisionEscalated {
		t.Fatalf("before: %+v, want 2 of 3 strong matches agreeing and escalated", before)
	}
	extra := openrecall.Match{Incident: openrecall.Incident{ID: "inc_added", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.85}
	after := triage.Triage(openrecall.Fingerprint{}, openrecall.SeverityMedium, append(ms, extra), cfg)
	if after.ConsistentCount != 3 {
		t.Fatalf("after adding a strong real match: consistent count %d, want 3", after.ConsistentCount)
	}
}

// regressionDurationInADurationSlot: P2's shrunk counterexample, a
// generator artifact ("for 5mm") fixed by giving durations their own
// placeholder. Two TargetDown alerts that differ only in the duration get one
// fingerprint, and "for <duration>" reads as a sustained signal.
func regressionDurationInADurationSlot(t *testing.T) {
	ex := newExtractor()
	r := gen.RawAlert{Family: 3, B: gen.Noise{N: 8, Dur: 2}}
	a, b := ex.Extract(r.First()), ex.Extract(r.Second())
	if a != b {
		t.Fatalf("%s != %s for %q and %q", a, b, r.First().Text, r.Second().Text)
	}
	if a.SignalShape != "sustained" {
		t.Fatalf("signal shape %q for %q, want sustained", a.SignalShape, r.First().Text)
	}
}
