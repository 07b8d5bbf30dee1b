package examples_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/examples"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/triage"
)

// exampleAlert is one alert of the queue with its truth and fingerprint.
type exampleAlert struct {
	alert openrecall.Alert
	truth examples.TruthEntry
	fp    openrecall.Fingerprint
	id    openrecall.Identity
}

func loadTruth(t *testing.T) []examples.TruthEntry {
	t.Helper()
	b, err := os.ReadFile("truth.json")
	if err != nil {
		t.Fatal(err)
	}
	truth, err := examples.ParseTruth(b, "truth.json")
	if err != nil {
		t.Fatal(err)
	}
	return truth
}

func extractor(t *testing.T) *fingerprint.Extractor {
	t.Helper()
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func readAll(t *testing.T, b []byte) []intake.Record {
	t.Helper()
	r := intake.NewReader(bytes.NewReader(b), intake.Options{})
	var recs []intake.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

// loadQueue reads the embedded queue and pairs each alert with its truth.
func loadQueue(t *testing.T) []exampleAlert {
	t.Helper()
	truth := loadTruth(t)
	recs := readAll(t, examples.Queue())
	if len(recs) != len(truth) {
		t.Fatalf("queue.jsonl has %d records, truth.json %d entries: one entry per alert", len(recs), len(truth))
	}
	ex := extractor(t)
	out := make([]exampleAlert, len(recs))
	for i, rec := range recs {
		if rec.Err != nil {
			t.Fatalf("queue.jsonl must be clean: %v", rec.Err)
		}
		a := rec.Alert
		e := truth[i]
		if a.Position != e.Position() {
			t.Fatalf("record %d is at %s, truth.json entry %d says %s", i, a.Position, i, e.Position())
		}
		if e.ID != "" && a.ID != e.ID {
			t.Errorf("%s: alert id %q, truth.json says %q", a.Position, a.ID, e.ID)
		}
		out[i] = exampleAlert{alert: a, truth: e, fp: ex.Extract(a), id: ex.Identify(a)}
		if out[i].id.IsZero() {
			t.Errorf("%s: the example alert has no identity", a.Position)
		}
	}
	return out
}

func TestEmbeddedFiles(t *testing.T) {
	for name, got := range map[string]func() []byte{"queue.jsonl": examples.Queue, "seed.jsonl": examples.Seed} {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		b := got()
		if !bytes.Equal(b, want) {
			t.Errorf("embedded %s differs from the file", name)
		}
		b[0] ^= 0xff
		if !bytes.Equal(got(), want) {
			t.Errorf("changing the returned %s changed the embedded copy", name)
		}
	}
}

// TestQueueShape checks the mix the example promises: about a hundred
// alerts, benign families with several repeats, one-offs, real incidents,
// attacks (one dressed as a benign family, some instructing the model), and
// two resolved notifications, across every intake format.
func TestQueueShape(t *testing.T) {
	q := loadQueue(t)
	kinds := map[string]int{}
	formats := map[string]int{}
	families := map[string]int{}
	for _, a := range q {
		kinds[a.truth.Truth+"/"+a.truth.Kind]++
		formats[a.alert.Format]++
		if a.truth.Kind == "repeat" {
			families[a.truth.Family]++
		}
		if (a.truth.Kind == "resolved") != (a.alert.Status == openrecall.StatusResolved) {
			t.Errorf("%s: status %q but truth kind %q", a.alert.Position, a.alert.Status, a.truth.Kind)
		}
	}
	if len(q) < 90 || len(q) > 110 {
		t.Errorf("%d alerts, want about 100", len(q))
	}
	if kinds["benign/repeat"] < 45 {
		t.Errorf("%d benign family repeats, want at least 45", kinds["benign/repeat"])
	}
	if len(families) < 6 || len(families) > 8 {
		t.Errorf("%d benign families, want 6 to 8: %v", len(families), families)
	}
	for _, k := range []string{"benign/one-off", "real/novel", "real/ambiguous", "attack/attack", "attack/disguised", "attack/injection"} {
		if kinds[k] == 0 {
			t.Errorf("no %s alert", k)
		}
	}
	if kinds["benign/resolved"] != 2 {
		t.Errorf("%d resolved notifications, want 2", kinds["benign/resolved"])
	}
	for _, f := range []string{"jsonl", "alertmanager", "pagerduty", "prometheus", "text"} {
		if formats[f] == 0 {
			t.Errorf("no alert in format %s (have %v)", f, formats)
		}
	}
}

// TestFingerprints checks the example against the real extractor: a
// family's repeats share one Alert DNA on the critical fields, attacks carry
// an attack pattern (the disguised ones on top of their family's DNA), and
// nothing else does unless it is a security tool's own finding.
func TestFingerprints(t *testing.T) {
	q := loadQueue(t)
	first := map[string]openrecall.Fingerprint{}
	for _, a := range q {
		if a.truth.Kind == "repeat" {
			if _, ok := first[a.truth.Family]; !ok {
				first[a.truth.Family] = a.fp
			}
		}
	}
	for _, a := range q {
		where := fmt.Sprintf("%s (%s/%s, %s)", a.alert.Position, a.truth.Kind, a.truth.Family, a.fp)
		switch {
		case a.truth.Truth == "attack" && !a.fp.HasAttack():
			t.Errorf("%s: an attack without an attack pattern", where)
		case a.truth.Kind == "repeat" && a.fp.HasAttack(), a.truth.Truth == "real" && a.fp.HasAttack():
			t.Errorf("%s: attack pattern on a non-attack", where)
		}
		fam, ok := first[a.truth.Family]
		switch {
		case !ok:
		case a.truth.Kind == "repeat" || a.truth.Kind == "resolved":
			if !openrecall.SameCritical(a.fp, fam) {
				t.Errorf("%s: differs from its family's %s in a critical field", where, fam)
			}
		case a.truth.Kind == "disguised":
			dressed, _ := a.fp.With(openrecall.FieldAttackPattern, "")
			if !openrecall.SameCritical(dressed, fam) {
				t.Errorf("%s: a disguised attack must look like its family %s apart from the attack pattern", where, fam)
			}
		}
	}
}

// seedMemory is one parsed line of seed.jsonl.
type seedMemory struct {
	line int
	inc  openrecall.Incident
}

func loadSeed(t *testing.T) []seedMemory {
	t.Helper()
	ex := extractor(t)
	var out []seedMemory
	sc := bufio.NewScanner(bytes.NewReader(examples.Seed()))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var r struct {
			Alert         json.RawMessage     `json:"alert"`
			Decision      openrecall.Decision `json:"decision"`
			Note          string              `json:"note"`
			DeadEnds      []string            `json:"dead_ends"`
			Analyst       string              `json:"analyst"`
			ImpactMinutes int                 `json:"business_impact_minutes"`
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("seed.jsonl line %d: %v", n, err)
		}
		recs, err := intake.ParseBytes(r.Alert, intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			t.Fatalf("seed.jsonl line %d: the alert must parse as exactly one alert: %v %+v", n, err, recs)
		}
		if r.Note == "" || r.Analyst == "" || len(r.DeadEnds) == 0 {
			t.Errorf("seed.jsonl line %d: note, analyst and dead ends are required", n)
		}
		inc := openrecall.Incident{
			Fingerprint: ex.Extract(recs[0].Alert), Decision: r.Decision, Note: r.Note, DeadEnds: r.DeadEnds,
			Analyst: r.Analyst, ImpactMinutes: r.ImpactMinutes, SourceAlertID: recs[0].Alert.ID,
			Identity: ex.Identify(recs[0].Alert), Severity: recs[0].Alert.Severity,
			// Older lines are older memories, so recall's recency order is
			// deterministic in this test.
			CreatedAt: time.Date(2026, 10, 1, 0, 0, n, 0, time.UTC),
		}
		if err := inc.Validate(); err != nil {
			t.Errorf("seed.jsonl line %d: %v", n, err)
		}
		if inc.Identity.IsZero() {
			t.Errorf("seed.jsonl line %d: the seed alert has no identity, so its memory would never vote", n)
		}
		out = append(out, seedMemory{line: n, inc: inc.Normalized()})
	}
	return out
}

// recall mirrors memory.Store.Recall's documented semantics over the seed:
// memories that agree on the four critical fields (of the alert's identity,
// or of another when the DNA names an error class or a service role),
// scored by openrecall.ScoreMatch, by score then recency.
func recall(seed []seedMemory, id openrecall.Identity, fp openrecall.Fingerprint, limit int) []openrecall.Match {
	var ms []openrecall.Match
	for _, s := range seed {
		same := !id.IsZero() && s.inc.Identity == id
		if openrecall.SameCritical(fp, s.inc.Fingerprint) && (same || fp.ErrorClass != "" || fp.ServiceRole != "") {
			ms = append(ms, openrecall.ScoreMatch(id, fp, s.inc, time.Time{}))
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Score != ms[j].Score {
			return ms[i].Score > ms[j].Score
		}
		if !ms[i].Incident.CreatedAt.Equal(ms[j].Incident.CreatedAt) {
			return ms[i].Incident.CreatedAt.After(ms[j].Incident.CreatedAt)
		}
		return ms[i].Incident.ID < ms[j].Incident.ID
	})
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms
}

// TestSeedDrivesTheDemo replays triage and the guard over the seeded
// memories for every alert of the queue and checks the route each family is
// built to take: five families bypassed, two on the cheap tier (too few
// memories to vouch), the split family escalated, attacks and real
// incidents never bypassed.
func TestSeedDrivesTheDemo(t *testing.T) {
	seed := loadSeed(t)
	keys := map[string]int{}
	for _, s := range seed {
		if prev, dup := keys[s.inc.DedupeKey]; dup {
			t.Errorf("seed.jsonl lines %d and %d are one memory (same dedupe key): each must be about a different alert", prev, s.line)
		}
		keys[s.inc.DedupeKey] = s.line
	}

	type route struct {
		Bypass   bool
		Decision openrecall.Decision
		Strong   int
	}
	want := map[string]route{
		"batch-oom":            {Bypass: true, Decision: openrecall.DecisionKnownBenign, Strong: 6},
		"checkout-latency":     {Bypass: true, Decision: openrecall.DecisionKnownBenign, Strong: 6},
		"dns-probe":            {Bypass: true, Decision: openrecall.DecisionFalsePositive, Strong: 6},
		"cache-evict":          {Bypass: true, Decision: openrecall.DecisionKnownBenign, Strong: 6},
		"replica-lag":          {Bypass: true, Decision: openrecall.DecisionKnownBenign, Strong: 6},
		"orders-backlog":       {Decision: openrecall.DecisionKnownBenign, Strong: 3},
		"staging-disk":         {Decision: openrecall.DecisionFalsePositive, Strong: 2},
		"ledger-timeout":       {Decision: openrecall.DecisionEscalated, Strong: 5},
		"payment-provider-5xx": {Decision: openrecall.DecisionReal, Strong: 2},
		"cert-expiry":          {Decision: openrecall.DecisionReal, Strong: 1},
	}
	cfg := triage.DefaultConfig()
	bypassed := 0
	seen := map[string]bool{}
	for _, a := range loadQueue(t) {
		if a.truth.Kind == "resolved" {
			continue
		}
		matches := recall(seed, a.id, a.fp, cfg.RecallLimit)
		tr := triage.Triage(a.fp, a.alert.Severity, matches, cfg)
		got := route{Bypass: triage.Guard(a.fp, tr, cfg).Bypass, Decision: tr.Decision, Strong: tr.StrongCount}
		if got.Bypass {
			bypassed++
			if a.truth.Truth != "benign" || a.truth.Kind != "repeat" {
				t.Errorf("%s (%s/%s): memory would bypass it", a.alert.Position, a.truth.Truth, a.truth.Kind)
			}
		}
		w, ok := want[a.truth.Family]
		if !ok || a.truth.Kind == "disguised" || a.truth.Kind == "injection" {
			if tr.StrongCount > 0 {
				t.Errorf("%s (%s/%s): %d strong memories, want none", a.alert.Position, a.truth.Kind, a.truth.Family, tr.StrongCount)
			}
			continue
		}
		seen[a.truth.Family] = true
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (%s): route (-want +got):\n%s", a.alert.Position, a.truth.Family, diff)
		}
	}
	for f := range want {
		if !seen[f] {
			t.Errorf("family %s has no alert in the queue", f)
		}
	}
	if bypassed < 30 {
		t.Errorf("%d alerts would be bypassed, the example promises at least 30", bypassed)
	}
}

// TestBadFile checks the README's error demo: the malformed lines are
// rejected with their line numbers and the good lines are kept.
func TestBadFile(t *testing.T) {
	b, err := os.ReadFile("bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var rejected, kept []int
	for _, rec := range readAll(t, b) {
		if rec.Err != nil {
			rejected = append(rejected, rec.Err.Position.Line)
			continue
		}
		kept = append(kept, rec.Alert.Position.Line)
	}
	if diff := cmp.Diff([]int{2, 4, 5, 6}, rejected); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 3, 7}, kept); diff != "" {
		t.Errorf("kept lines (-want +got):\n%s", diff)
	}
}
