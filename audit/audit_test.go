package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var now = time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)

// result is a triaged alert that took the cheap model, failed the gate and
// went on to the strong one.
func result() openrecall.Result {
	return openrecall.Result{
		AnalysisID: "b1-000007",
		Batch:      "b1",
		Alert:      openrecall.Alert{ID: "am-3f2a"},
		Steps: []openrecall.RouteStep{
			{Step: openrecall.StepIntake, Reason: "alertmanager webhook, alerts[0]", Outcome: openrecall.OutcomeOK},
			{Step: openrecall.StepFingerprint, Reason: "labels: alertname KubePodCrashLooping", Outcome: openrecall.OutcomeOK, Latency: 120 * time.Microsecond},
			{Step: openrecall.StepAnalysis, Model: "gpt-4o-mini", Tier: openrecall.TierCheap, Live: true, Reason: "strong consistent benign memory",
				Outcome: openrecall.OutcomeGateFailed, MemoryHits: 4, Proposed: "maybe", PromptTokens: 900, CompletionTokens: 200,
				Cost: 255_000, Baseline: 9_000_000, Latency: 800 * time.Millisecond},
			{Step: openrecall.StepAnalysis, Model: "gpt-4o", Tier: openrecall.TierStrong, Live: true, Reason: "cheap answer failed the gate",
				Outcome: openrecall.OutcomeAccepted, MemoryHits: 4, Proposed: openrecall.DecisionReal, EscalationReason: "real incident needs a person",
				Cost: 4_250_000, Latency: 2 * time.Second},
		},
	}
}

func TestEntries(t *testing.T) {
	r := result()
	before := result()
	got := Entries(r, now)
	want := []openrecall.AuditEntry{
		{AnalysisID: "b1-000007", Batch: "b1", AlertID: "am-3f2a", StepIndex: 0, Step: "intake", Reason: "alertmanager webhook, alerts[0]", Outcome: "ok", Time: now},
		{AnalysisID: "b1-000007", Batch: "b1", AlertID: "am-3f2a", StepIndex: 1, Step: "fingerprint", Reason: "labels: alertname KubePodCrashLooping", Outcome: "ok",
			Latency: 120 * time.Microsecond, Time: now},
		{AnalysisID: "b1-000007", Batch: "b1", AlertID: "am-3f2a", StepIndex: 2, Step: "analysis", Model: "gpt-4o-mini", Tier: "cheap",
			Reason: "strong consistent benign memory", Outcome: "gate-failed", MemoryHits: 4, ProposedDecision: "maybe", Live: true,
			Cost: 255_000, Baseline: 9_000_000, Savings: 8_745_000, Latency: 800 * time.Millisecond, Time: now},
		{AnalysisID: "b1-000007", Batch: "b1", AlertID: "am-3f2a", StepIndex: 3, Step: "analysis", Model: "gpt-4o", Tier: "strong",
			Reason: "cheap answer failed the gate", Outcome: "accepted", MemoryHits: 4, ProposedDecision: "real",
			EscalationReason: "real incident needs a person", Live: true, Cost: 4_250_000, Savings: -4_250_000, Latency: 2 * time.Second, Time: now},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Entries() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, r); diff != "" {
		t.Errorf("Entries modified its result:\n%s", diff)
	}
}

func TestEntriesOnePerStep(t *testing.T) {
	tests := []struct {
		name  string
		steps int
	}{{"rejected record", 1}, {"bypass", 3}, {"no steps", 0}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := openrecall.Result{AnalysisID: "a", Steps: make([]openrecall.RouteStep, tt.steps)}
			for i := range r.Steps {
				r.Steps[i].Step = []string{"intake", "fingerprint", "memory-bypass"}[i]
			}
			got := Entries(r, now)
			if len(got) != len(r.Steps) {
				t.Fatalf("len(Entries) = %d, want %d", len(got), len(r.Steps))
			}
			for i := range got {
				if got[i].Step != r.Steps[i].Step || got[i].StepIndex != i {
					t.Errorf("entry %d = step %q index %d, want %q %d", i, got[i].Step, got[i].StepIndex, r.Steps[i].Step, i)
				}
			}
		})
	}
}

func TestEntriesDropsMonotonicClock(t *testing.T) {
	wall := time.Now()
	e := Entries(openrecall.Result{Steps: make([]openrecall.RouteStep, 1)}, wall)[0]
	if e.Time != wall.Round(0) {
		t.Errorf("Time = %v, want the wall clock %v without a monotonic reading", e.Time, wall.Round(0))
	}
}

// sealed is the fixed chain the golden file pins.
func sealed() []openrecall.AuditEntry { return Seal("", 1, Entries(result(), now)) }

// TestSealGolden pins the chain for a fixed result: a change of the hash
// encoding shows here, and must come with a new hash version.
func TestSealGolden(t *testing.T) {
	got, err := json.MarshalIndent(sealed(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "sealed.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("sealed chain differs from %s (-want +got):\n%s", path, diff)
	}
}

func TestSeal(t *testing.T) {
	entries := Entries(result(), now)
	before := Entries(result(), now)
	first := Seal("", 1, entries[:2])
	rest := Seal(first[1].Hash, 3, entries[2:])
	chain := append(append([]openrecall.AuditEntry(nil), first...), rest...)
	if diff := cmp.Diff(sealed(), chain); diff != "" {
		t.Errorf("sealing in two batches differs from sealing at once (-once +twice):\n%s", diff)
	}
	prev := ""
	for i, e := range chain {
		if e.Sequence != int64(i+1) || e.PrevHash != prev || e.Hash != Hash(e) || len(e.Hash) != 64 {
			t.Errorf("entry %d: sequence %d, prev %q, hash %q: not chained", i, e.Sequence, e.PrevHash, e.Hash)
		}
		prev = e.Hash
	}
	if diff := cmp.Diff(before, entries); diff != "" {
		t.Errorf("Seal modified its entries:\n%s", diff)
	}
}

// TestHashCoversEveryField changes each field in turn: the hash must change
// for every field but Hash itself. The table must name every field of
// AuditEntry, so a new field cannot be left out of the encoding unnoticed.
func TestHashCoversEveryField(t *testing.T) {
	edits := map[string]func(*openrecall.AuditEntry){
		"Sequence":         func(e *openrecall.AuditEntry) { e.Sequence++ },
		"AnalysisID":       func(e *openrecall.AuditEntry) { e.AnalysisID += "x" },
		"Batch":            func(e *openrecall.AuditEntry) { e.Batch += "x" },
		"AlertID":          func(e *openrecall.AuditEntry) { e.AlertID += "x" },
		"StepIndex":        func(e *openrecall.AuditEntry) { e.StepIndex++ },
		"Step":             func(e *openrecall.AuditEntry) { e.Step = "memory-bypass" },
		"Model":            func(e *openrecall.AuditEntry) { e.Model = "gpt-4o" },
		"Tier":             func(e *openrecall.AuditEntry) { e.Tier = openrecall.TierStrong },
		"Reason":           func(e *openrecall.AuditEntry) { e.Reason += "." },
		"Outcome":          func(e *openrecall.AuditEntry) { e.Outcome = openrecall.OutcomeAccepted },
		"MemoryHits":       func(e *openrecall.AuditEntry) { e.MemoryHits-- },
		"ProposedDecision": func(e *openrecall.AuditEntry) { e.ProposedDecision = openrecall.DecisionKnownBenign },
		"EscalationReason": func(e *openrecall.AuditEntry) { e.EscalationReason = "attack" },
		"Live":             func(e *openrecall.AuditEntry) { e.Live = !e.Live },
		"Skipped":          func(e *openrecall.AuditEntry) { e.Skipped = !e.Skipped },
		"Cost":             func(e *openrecall.AuditEntry) { e.Cost = 0 },
		"Baseline":         func(e *openrecall.AuditEntry) { e.Baseline++ },
		"Savings":          func(e *openrecall.AuditEntry) { e.Savings++ },
		"Latency":          func(e *openrecall.AuditEntry) { e.Latency++ },
		"Time":             func(e *openrecall.AuditEntry) { e.Time = e.Time.Add(time.Nanosecond) },
		"PrevHash":         func(e *openrecall.AuditEntry) { e.PrevHash = "00" + e.PrevHash[2:] },
	}
	typ := reflect.TypeOf(openrecall.AuditEntry{})
	for i := 0; i < typ.NumField(); i++ {
		name := typ.Field(i).Name
		if _, ok := edits[name]; !ok && name != "Hash" {
			t.Errorf("AuditEntry field %s has no edit in this test", name)
		}
	}
	base := sealed()[2]
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			e := base
			edit(&e)
			if Hash(e) == Hash(base) {
				t.Errorf("changing %s left the hash unchanged", name)
			}
		})
	}
	t.Run("Hash", func(t *testing.T) {
		e := base
		e.Hash = "deadbeef"
		if Hash(e) != Hash(base) {
			t.Errorf("the stored Hash field changed the hash")
		}
	})
}

func TestHashUnambiguous(t *testing.T) {
	tests := []struct {
		name string
		a, b openrecall.AuditEntry
	}{
		{"a byte moved between neighbouring strings", openrecall.AuditEntry{AnalysisID: "ab", Batch: "c"}, openrecall.AuditEntry{AnalysisID: "a", Batch: "bc"}},
		{"a string emptied into the next", openrecall.AuditEntry{Model: "x"}, openrecall.AuditEntry{Tier: "x"}},
		{"swapped booleans", openrecall.AuditEntry{Live: true}, openrecall.AuditEntry{Skipped: true}},
		{"swapped amounts", openrecall.AuditEntry{Cost: 1}, openrecall.AuditEntry{Baseline: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if Hash(tt.a) == Hash(tt.b) {
				t.Errorf("two different entries hash alike")
			}
		})
	}
}

func TestHashTimeIsAnInstant(t *testing.T) {
	e := sealed()[0]
	f := e
	f.Time = e.Time.In(time.FixedZone("UTC+5", 5*3600))
	if Hash(e) != Hash(f) {
		t.Errorf("the same instant in another zone hashes differently")
	}
}

func BenchmarkHash(b *testing.B) {
	e := sealed()[2]
	for b.Loop() {
		Hash(e)
	}
}

// plainMAC is the hex HMAC-SHA-256 under k of msg, written out with the
// standard library alone: the twin of the pooled states and buffers.
func plainMAC(k Key, msg []byte) string {
	m := hmac.New(sha256.New, []byte(k.b))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// TestSealerPooledHashesEqualKeyed checks the Sealer's pooled HMAC states
// and message buffers against a fresh HMAC per hash (HashKeyed, CostHash,
// RowSeal, and the standard library's HMAC of the plain encoding), entries
// and cost points, over many hashes of growing and shrinking messages (so a
// pooled state and buffer are reused) and from several goroutines.
func TestSealerPooledHashesEqualKeyed(t *testing.T) {
	k, err := NewKey(bytes.Repeat([]byte{9}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSealer(k)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries := make([]openrecall.AuditEntry, 50)
			points := make([]openrecall.CostPoint, 50)
			for i := range entries {
				entries[i] = openrecall.AuditEntry{AlertID: fmt.Sprintf("a-%d-%d", g, i), Step: "analysis", Reason: strings.Repeat("r", (i*37)%50*20), Cost: openrecall.NanoUSD(i)}
				points[i] = openrecall.CostPoint{Index: i, AlertID: entries[i].AlertID, Cost: openrecall.NanoUSD(i)}
			}
			sealed := s.Seal("", 1, entries)
			for _, e := range sealed {
				if want := HashKeyed(k, e); e.Hash != want {
					t.Errorf("entry %d: pooled hash %s, fresh %s", e.Sequence, e.Hash, want)
				}
				if want := plainMAC(k, encodeEntry(keyedVersion, e)); e.Hash != want {
					t.Errorf("entry %d: pooled hash %s, the standard library's %s", e.Sequence, e.Hash, want)
				}
				content := []byte(e.Reason)
				if got, want := s.RowSeal("waiting", content), RowSeal(k, "waiting", content); got != want {
					t.Errorf("row %d: pooled seal %s, fresh %s", e.Sequence, got, want)
				}
			}
			prev := ""
			for i, h := range s.SealCosts("", 1, points) {
				if want := CostHash(k, int64(1+i), prev, points[i]); h != want {
					t.Errorf("cost point %d: pooled hash %s, fresh %s", i, h, want)
				}
				if want := plainMAC(k, encodeCost(int64(1+i), prev, points[i])); h != want {
					t.Errorf("cost point %d: pooled hash %s, the standard library's %s", i, h, want)
				}
				prev = h
			}
		}()
	}
	wg.Wait()
}
