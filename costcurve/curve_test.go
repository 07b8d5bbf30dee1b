package costcurve

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

const (
	cheap  = openrecall.TierCheap
	strong = openrecall.TierStrong
	none   = openrecall.TierNone
	both   = openrecall.Tier("cheap+strong")
)

type add struct {
	id       string
	tier     openrecall.Tier
	bypassed bool
	cost     openrecall.NanoUSD
	baseline openrecall.NanoUSD
}

// build adds each alert to a fresh curve for batch b1.
func build(adds ...add) []openrecall.CostPoint {
	c := New("b1")
	out := make([]openrecall.CostPoint, len(adds))
	for i, a := range adds {
		out[i] = c.Add(a.id, a.tier, a.bypassed, a.cost, a.baseline)
	}
	return out
}

// shift is a realistic shift: memory bypasses, cheap and strong analyses,
// one cheap answer that failed its gate and went on to strong.
func shift() []openrecall.CostPoint {
	return build(
		add{"a1", strong, false, 4_500_000, 4_800_000},
		add{"a2", none, true, 0, 4_800_000},
		add{"a3", cheap, false, 300_000, 4_800_000},
		add{"a4", none, true, 0, 4_800_000},
		add{"a5", both, false, 4_700_000, 5_100_000},
		add{"a6", strong, false, 4_600_000, 4_900_000},
		add{"a7", none, true, 0, 4_800_000},
		add{"a8", none, true, 0, 4_800_000},
	)
}

func TestAdd(t *testing.T) {
	got := build(
		add{"a1", strong, false, 100, 300},
		add{"a2", none, true, 0, 300},
		add{"a3", cheap, false, 20, 300},
	)
	want := []openrecall.CostPoint{
		{Index: 0, Batch: "b1", AlertID: "a1", Tier: strong, Cost: 100, Baseline: 300, CumulativeCost: 100, CumulativeBaseline: 300},
		{Index: 1, Batch: "b1", AlertID: "a2", Bypassed: true, Cost: 0, Baseline: 300, CumulativeCost: 100, CumulativeBaseline: 600},
		{Index: 2, Batch: "b1", AlertID: "a3", Tier: cheap, Cost: 20, Baseline: 300, CumulativeCost: 120, CumulativeBaseline: 900},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Add() points mismatch (-want +got):\n%s", diff)
	}
}

// TestAddRecordsCallerBugs checks that Add hides nothing: a negative cost
// and a cost above the baseline are recorded as given, and Validate sees them.
func TestAddRecordsCallerBugs(t *testing.T) {
	tests := []struct {
		name    string
		adds    []add
		wantErr string
	}{
		{"negative cost", []add{{"a1", strong, false, 50, 100}, {"a2", strong, false, -10, 100}}, "cost curve point 1 (alert \"a2\"): cumulative cost decreases from $0.00000005 to $0.00000004"},
		{"cost above baseline", []add{{"a1", strong, false, 50, 100}, {"a2", strong, false, 300, 100}}, "cost curve point 1 (alert \"a2\"): savings band decreases"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts := build(tt.adds...)
			last := pts[len(pts)-1]
			if last.Cost != tt.adds[len(tt.adds)-1].cost {
				t.Errorf("Cost = %d, want %d as given", last.Cost, tt.adds[len(tt.adds)-1].cost)
			}
			err := Validate(pts)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("Validate() = %v, want an ErrInvalid starting %q", err, tt.wantErr)
			}
		})
	}
}

func TestAddCurvesAreIndependent(t *testing.T) {
	a, b := New("a"), New("b")
	a.Add("x", strong, false, 10, 20)
	p := b.Add("y", strong, false, 1, 2)
	if p.Index != 0 || p.CumulativeCost != 1 || p.Batch != "b" {
		t.Errorf("second curve's first point = %+v, want index 0, cumulative cost 1, batch b", p)
	}
}

// saved returns a SavedPerTier map: the given amounts, every other key 0.
func saved(m map[string]openrecall.NanoUSD) map[string]openrecall.NanoUSD {
	out := map[string]openrecall.NanoUSD{}
	for _, k := range TierKeys {
		out[k] = m[k]
	}
	return out
}

// TestSavingsSources checks the "saved by" list: non-zero sources only, in
// TierKeys order, a loss included, and "none" when nothing saved.
func TestSavingsSources(t *testing.T) {
	if got, want := Summarize(shift()).SavingsSources(), "bypass $0.019200, cheap $0.004500, cheap+strong $0.000400, strong $0.000600"; got != want {
		t.Errorf("SavingsSources() = %q, want %q", got, want)
	}
	grouped := build(add{"h", strong, false, 1_000_000, 1_000_000}, add{"m", TierGrouped, false, 0, 900_000}, add{"c", both, false, 1_200_000, 1_000_000})
	if got, want := Summarize(grouped).SavingsSources(), "grouped $0.000900, cheap+strong -$0.000200"; got != want {
		t.Errorf("SavingsSources() = %q, want %q", got, want)
	}
	if got := Summarize(nil).SavingsSources(); got != "none" {
		t.Errorf("SavingsSources() of no points = %q, want none", got)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name   string
		points []openrecall.CostPoint
		want   Summary
	}{
		{
			name:   "empty",
			points: nil,
			want:   Summary{PerTier: map[string]int{"bypass": 0, "cheap": 0, "strong": 0, "cheap+strong": 0, "none": 0, "unanalysed": 0, "grouped": 0, "exception": 0}, SavedPerTier: saved(nil)},
		},
		{
			name:   "one bypass",
			points: build(add{"a1", none, true, 0, 4_800_000}),
			want: Summary{Batch: "b1", Alerts: 1, Bypassed: 1, PerTier: map[string]int{"bypass": 1, "cheap": 0, "strong": 0, "cheap+strong": 0, "none": 0, "unanalysed": 0, "grouped": 0, "exception": 0},
				SavedPerTier: saved(map[string]openrecall.NanoUSD{"bypass": 4_800_000}),
				Baseline:     4_800_000, AnalysedBaseline: 4_800_000, Savings: 4_800_000, SavingsPercent: 100},
		},
		{
			name:   "a shift",
			points: shift(),
			want: Summary{Batch: "b1", Alerts: 8, Bypassed: 4, PerTier: map[string]int{"bypass": 4, "cheap": 1, "strong": 2, "cheap+strong": 1, "none": 0, "unanalysed": 0, "grouped": 0, "exception": 0},
				SavedPerTier: saved(map[string]openrecall.NanoUSD{"bypass": 19_200_000, "cheap": 4_500_000, "cheap+strong": 400_000, "strong": 600_000}),
				Cost:         14_100_000, Baseline: 38_800_000, AnalysedBaseline: 38_800_000, Savings: 24_700_000, SavingsPercent: float64(24_700_000) / float64(38_800_000) * 100},
		},
		{
			// An alert escalated without analysis saves nothing and its
			// baseline (its cost) stays out of the percentage: 4.8 saved
			// of the 4.8 + 1.0 analysed, not of 4.8 + 1.0 + 0.3.
			name:   "escalated without analysis",
			points: build(add{"a1", none, true, 0, 4_800_000}, add{"u1", TierUnanalysed, false, 300_000, 300_000}, add{"s1", strong, false, 1_000_000, 1_000_000}),
			want: Summary{Batch: "b1", Alerts: 3, Bypassed: 1, PerTier: map[string]int{"bypass": 1, "cheap": 0, "strong": 1, "cheap+strong": 0, "none": 0, "unanalysed": 1, "grouped": 0, "exception": 0},
				SavedPerTier: saved(map[string]openrecall.NanoUSD{"bypass": 4_800_000}),
				Unanalysed:   1, Cost: 1_300_000, Baseline: 6_100_000, AnalysedBaseline: 5_800_000, Savings: 4_800_000, SavingsPercent: float64(4_800_000) / float64(5_800_000) * 100},
		},
		{
			name:   "deterministic steps only",
			points: build(add{"r1", none, false, 0, 0}),
			want:   Summary{Batch: "b1", Alerts: 1, PerTier: map[string]int{"bypass": 0, "cheap": 0, "strong": 0, "cheap+strong": 0, "none": 1, "unanalysed": 0, "grouped": 0, "exception": 0}, SavedPerTier: saved(nil)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.points)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize() mismatch (-want +got):\n%s", diff)
			}
			var sum openrecall.NanoUSD
			for _, v := range got.SavedPerTier {
				sum += v
			}
			if sum != got.Savings {
				t.Errorf("savings by source add up to %s, want the savings %s", sum, got.Savings)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func([]openrecall.CostPoint) []openrecall.CostPoint
		wantErr string // "" when valid
	}{
		{"a built curve", func(p []openrecall.CostPoint) []openrecall.CostPoint { return p }, ""},
		{"empty", func([]openrecall.CostPoint) []openrecall.CostPoint { return nil }, ""},
		{"one point", func(p []openrecall.CostPoint) []openrecall.CostPoint { return p[:1] }, ""},
		{"a tail of a curve", func(p []openrecall.CostPoint) []openrecall.CostPoint { return p[3:] }, ""},
		{"equal cost and baseline keep the band flat", func([]openrecall.CostPoint) []openrecall.CostPoint {
			return build(add{"a1", strong, false, 5, 5}, add{"a2", strong, false, 7, 7})
		}, ""},
		{"cumulative cost decreases", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[5].CumulativeCost = p[4].CumulativeCost - 1
			return p
		}, `cost curve point 5 (alert "a6"): cumulative cost decreases from $0.009500 to $0.009499999`},
		{"savings band decreases", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[6].CumulativeBaseline = p[5].CumulativeBaseline - 1
			return p
		}, `cost curve point 6 (alert "a7"): savings band decreases`},
		{"cumulative cost skips the point's cost", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[2].Cost++
			return p
		}, `cost curve point 2 (alert "a3"): cumulative cost $0.004800 is not $0.004500 plus the point's cost $0.000300`},
		{"cumulative baseline skips the point's baseline", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[3].Baseline = 1
			return p
		}, `cost curve point 3 (alert "a4"): cumulative baseline`},
		{"first point carries a sum from nowhere", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[0].CumulativeBaseline += 5
			return p
		}, `cost curve point 0 (alert "a1"): cumulative baseline`},
		{"a point missing", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			return append(p[:2:2], p[3:]...)
		}, `cost curve point 3 (alert "a4"): index follows 1 (position 2)`},
		{"two batches", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[4].Batch = "b2"
			return p
		}, `cost curve point 4 (alert "a5"): batch "b2" differs from "b1"`},
		{"negative index", func(p []openrecall.CostPoint) []openrecall.CostPoint {
			p[0].Index = -1
			return p
		}, `cost curve point -1 (alert "a1"): negative index`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.edit(shift()))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr == "":
			case err == nil:
				t.Fatalf("Validate() = nil, want %q", tt.wantErr)
			case !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, openrecall.ErrInvalid):
				t.Errorf("Validate() = %q, want an ErrInvalid starting %q", err, tt.wantErr)
			}
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	c := New("bench")
	for b.Loop() {
		c.Add("a", strong, false, 4_500_000, 4_800_000)
	}
}

func TestSummaryJSON(t *testing.T) {
	got, err := json.Marshal(Summarize(build(add{"a1", none, true, 0, 4_800_000}, add{"a2", strong, false, 4_500_000, 4_800_000})))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"batch":"b1","alerts":2,"bypassed":1,"grouped":0,"excepted":0,"per_tier":{"bypass":1,"cheap":0,"cheap+strong":0,"exception":0,"grouped":0,"none":0,"strong":1,"unanalysed":0},` +
		`"saved_per_tier_nano_usd":{"bypass":4800000,"cheap":0,"cheap+strong":0,"exception":0,"grouped":0,"none":0,"strong":300000,"unanalysed":0},` +
		`"escalated_without_analysis":0,"analysed_baseline_nano_usd":9600000,"cost_nano_usd":4500000,"baseline_nano_usd":9600000,"savings_nano_usd":5100000,"savings_percent":53.125}`
	if string(got) != want {
		t.Errorf("JSON = %s\nwant   %s", got, want)
	}
	var back Summary
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Summarize(build(add{"a1", none, true, 0, 4_800_000}, add{"a2", strong, false, 4_500_000, 4_800_000})), back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

// TestSummarySources: the ways that analysed an alert, the biggest saving
// first, TierKeys order among equals; a way with no alert is left out.
func TestSummarySources(t *testing.T) {
	s := Summary{
		PerTier:      map[string]int{TierBypass: 2, TierGrouped: 5, TierCheap: 1, TierStrong: 3, TierNone: 1, TierException: 0},
		SavedPerTier: map[string]openrecall.NanoUSD{TierBypass: 40, TierGrouped: 90, TierCheap: 40, TierStrong: 0, TierNone: 0, TierException: 70},
	}
	want := []Source{
		{Tier: TierGrouped, Alerts: 5, Saved: 90},
		{Tier: TierBypass, Alerts: 2, Saved: 40},
		{Tier: TierCheap, Alerts: 1, Saved: 40},
		{Tier: TierStrong, Alerts: 3, Saved: 0},
		{Tier: TierNone, Alerts: 1, Saved: 0},
	}
	if diff := cmp.Diff(want, s.Sources()); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
}

// TestDailyCurve: a daily curve's points join the batch of the UTC day they
// are added on, each day's starting at index 0 with its own sums, and each
// day's points pass Validate.
func TestDailyCurve(t *testing.T) {
	at := time.Date(2026, 11, 30, 23, 58, 0, 0, time.FixedZone("CET", 3600)) // 22:58 UTC
	c := Daily("serve-", func() time.Time { return at })
	if c.Batch() != "serve-2026-11-30" {
		t.Errorf("batch %q at %s", c.Batch(), at)
	}
	byBatch := map[string][]openrecall.CostPoint{}
	for i, step := range []time.Duration{0, time.Minute, 30 * time.Minute, 40 * time.Minute, time.Minute, 25 * time.Hour} {
		at = at.Add(step)
		p := c.Add("a", strong, false, openrecall.NanoUSD(10*(i+1)), 100)
		if want := DayBatch("serve-", at); p.Batch != want || c.Batch() != want {
			t.Errorf("point %d at %s joined %q (curve says %q), want %q", i, at, p.Batch, c.Batch(), want)
		}
		byBatch[p.Batch] = append(byBatch[p.Batch], p)
	}
	want := map[string]int{"serve-2026-11-30": 3, "serve-2026-12-01": 2, "serve-2026-12-02": 1}
	for b, n := range want {
		if len(byBatch[b]) != n {
			t.Errorf("%s holds %d points, want %d", b, len(byBatch[b]), n)
		}
		if err := Validate(byBatch[b]); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
	if p := byBatch["serve-2026-12-01"][0]; p.Index != 0 || p.CumulativeCost != p.Cost || p.CumulativeBaseline != 100 {
		t.Errorf("a new day's first point %+v: want index 0 and its own sums", p)
	}
}
