package costcurve

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// Curve builds the points of one batch's cost curve, in the order alerts
// are added: a run's batch (New, Continue), or each UTC day's (Daily). It
// is not safe for concurrent use.
type Curve struct {
	batch    string
	next     int
	cost     openrecall.NanoUSD
	baseline openrecall.NanoUSD
	// daily, when set, names the batch of the day of now (Daily).
	prefix string
	now    func() time.Time
}

// New returns an empty curve for the named batch.
func New(batch string) *Curve { return &Curve{batch: batch} }

// Daily returns a curve keyed by UTC day: each point joins the batch of the
// day it is added on, DayBatch(prefix, day) ("serve-2006-01-02"), and a new
// day's batch starts empty. serve's points continue what its batch already
// stored when the sink appends them (memory.Sink.Continue renumbers them
// after the stored tail), so a restart, or another process on the same
// database, continues one curve per day.
func Daily(prefix string, now func() time.Time) *Curve {
	if now == nil {
		now = time.Now
	}
	return &Curve{batch: DayBatch(prefix, now()), prefix: prefix, now: now}
}

// DayBatch names the batch of the UTC day of t under prefix:
// prefix + "2006-01-02".
func DayBatch(prefix string, t time.Time) string {
	return prefix + t.UTC().Format(time.DateOnly)
}

// Batch names the batch the next point joins.
func (c *Curve) Batch() string {
	if c.now != nil {
		return DayBatch(c.prefix, c.now())
	}
	return c.batch
}

// Continue returns the curve of batch continued after points, the points
// stored so far (oldest first): the next point follows the last one's index
// and sums. No points is New(batch).
func Continue(batch string, points []openrecall.CostPoint) *Curve {
	c := New(batch)
	if n := len(points); n > 0 {
		last := points[n-1]
		c.next, c.cost, c.baseline = last.Index+1, last.CumulativeCost, last.CumulativeBaseline
	}
	return c
}

// SavingsPercent returns savings as a percentage of the baseline of the
// analysed alerts, 0 when that baseline is 0: the one savings figure the
// product prints, for a curve and for a run alike.
func SavingsPercent(savings, analysedBaseline openrecall.NanoUSD) float64 {
	if analysedBaseline == 0 {
		return 0
	}
	return float64(savings) / float64(analysedBaseline) * 100
}

// Add appends one analysed alert and returns its point: Index counts from 0
// and the cumulative fields are the running sums including this alert. A
// negative cost or a cost above the baseline is recorded as given, so that
// Validate and the conservation checks upstream can see it.
func (c *Curve) Add(alertID string, tier openrecall.Tier, bypassed bool, cost, baseline openrecall.NanoUSD) openrecall.CostPoint {
	if c.now != nil {
		if b := DayBatch(c.prefix, c.now()); b != c.batch {
			c.batch, c.next, c.cost, c.baseline = b, 0, 0, 0
		}
	}
	c.cost += cost
	c.baseline += baseline
	p := openrecall.CostPoint{
		Index:              c.next,
		Batch:              c.batch,
		AlertID:            alertID,
		Tier:               tier,
		Bypassed:           bypassed,
		Cost:               cost,
		Baseline:           baseline,
		CumulativeCost:     c.cost,
		CumulativeBaseline: c.baseline,
	}
	c.next++
	return p
}

// Tier keys of Summary.PerTier; the model tiers' are the route steps'
// (openrecall.TierCheap, TierStrong).
const (
	TierBypass      = "bypass"
	TierCheap       = string(openrecall.TierCheap)
	TierStrong      = string(openrecall.TierStrong)
	TierCheapStrong = TierCheap + "+" + TierStrong
	TierNone        = "none"
	// TierUnanalysed marks an alert escalated without analysis: no model
	// answered (run budget spent, model unavailable). It saves nothing and
	// its baseline is left out of the savings percentage.
	TierUnanalysed = "unanalysed"
	// TierGrouped marks a member of an alert group (DESIGN §6a): no model
	// call, its head's decision, its baseline saved; counted apart from
	// bypasses and cheap answers.
	TierGrouped = "grouped"
	// TierException marks an alert closed by an exception a person
	// approved (DESIGN §6b): no model call, its baseline saved; counted
	// apart.
	TierException = "exception"
)

// Summary is the totals of a cost curve. Its JSON names follow the rest of
// the product's output (money in nano-dollars).
type Summary struct {
	Batch string `json:"batch"`
	// Alerts is the number of points; Bypassed of them skipped the model.
	Alerts   int `json:"alerts"`
	Bypassed int `json:"bypassed"`
	// Grouped counts group members: no model call, the head's decision.
	Grouped int `json:"grouped"`
	// Excepted counts alerts closed by an exception: no model call.
	Excepted int `json:"excepted"`
	// PerTier counts points by how they were analysed: "bypass" for a
	// memory bypass, else the point's tier ("cheap", "strong",
	// "cheap+strong"), "grouped" for a group member, "exception" for an
	// alert an exception closed, "unanalysed" for an alert escalated
	// without analysis, or "none" without one. The eight documented keys
	// are always present.
	PerTier map[string]int `json:"per_tier"`
	// SavedPerTier is what the points of each PerTier key saved (their
	// baseline minus their cost), under the same eight keys: bypasses,
	// group members, exception matches and cheap answers apart (DESIGN §7).
	// A key whose alerts took the strong model at its expected completion
	// saves nothing.
	SavedPerTier map[string]openrecall.NanoUSD `json:"saved_per_tier_nano_usd"`
	// Unanalysed counts the alerts escalated without analysis;
	// AnalysedBaseline is the baseline of the others.
	Unanalysed       int                `json:"escalated_without_analysis"`
	AnalysedBaseline openrecall.NanoUSD `json:"analysed_baseline_nano_usd"`
	// Cost and Baseline are the sums over the points; Savings is Baseline
	// minus Cost.
	Cost     openrecall.NanoUSD `json:"cost_nano_usd"`
	Baseline openrecall.NanoUSD `json:"baseline_nano_usd"`
	Savings  openrecall.NanoUSD `json:"savings_nano_usd"`
	// SavingsPercent is Savings as a percentage of AnalysedBaseline, 0
	// without one.
	SavingsPercent float64 `json:"savings_percent"`
}

// TierKeys are the eight keys of Summary.PerTier and Summary.SavedPerTier,
// the ways an alert can be analysed, those that can save first.
var TierKeys = []string{TierBypass, TierGrouped, TierException, TierCheap, TierCheapStrong, TierStrong, TierUnanalysed, TierNone}

// SavingsSources lists the ways of s that saved money (or lost it), in
// TierKeys order, such as "bypass $0.071280, grouped $0.177018, cheap
// $0.036282" (six decimals), or "none" when none did.
func (s Summary) SavingsSources() string {
	var parts []string
	for _, k := range TierKeys {
		if v := s.SavedPerTier[k]; v != 0 {
			parts = append(parts, k+" "+v.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Source is what one way of analysing alerts (a TierKeys key) did in a
// run: how many alerts it analysed and what it saved on them.
type Source struct {
	Tier   string
	Alerts int
	Saved  openrecall.NanoUSD
}

// Sources lists the ways of s that analysed at least one alert, the
// biggest saving first (TierKeys order among equal savings).
func (s Summary) Sources() []Source {
	var out []Source
	for _, k := range TierKeys {
		if n := s.PerTier[k]; n > 0 {
			out = append(out, Source{Tier: k, Alerts: n, Saved: s.SavedPerTier[k]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Saved > out[j].Saved })
	return out
}

// TierKey returns the Summary.PerTier key of a point.
func TierKey(p openrecall.CostPoint) string {
	switch {
	case p.Bypassed:
		return TierBypass
	case p.Tier == openrecall.TierNone:
		return TierNone
	}
	return string(p.Tier)
}

// Summarize totals points. Batch is the points' batch (the first point's,
// when they disagree, which Validate reports).
func Summarize(points []openrecall.CostPoint) Summary {
	s := Summary{PerTier: map[string]int{}, SavedPerTier: map[string]openrecall.NanoUSD{}}
	for _, k := range TierKeys {
		s.PerTier[k], s.SavedPerTier[k] = 0, 0
	}
	for i, p := range points {
		if i == 0 {
			s.Batch = p.Batch
		}
		s.Alerts++
		if p.Bypassed {
			s.Bypassed++
		}
		if p.Tier == TierGrouped {
			s.Grouped++
		}
		if p.Tier == TierException {
			s.Excepted++
		}
		s.PerTier[TierKey(p)]++
		s.SavedPerTier[TierKey(p)] += p.Baseline - p.Cost
		s.Cost += p.Cost
		s.Baseline += p.Baseline
		if p.Tier == TierUnanalysed {
			s.Unanalysed++
		} else {
			s.AnalysedBaseline += p.Baseline
		}
	}
	s.Savings = s.Baseline - s.Cost
	s.SavingsPercent = SavingsPercent(s.Savings, s.AnalysedBaseline)
	return s
}

// Validate checks a batch's points in order and names the first bad one:
// indexes consecutive, one batch, cumulative cost never decreasing, the
// savings band never decreasing, and each cumulative sum equal to the
// previous one plus the point's own amount (from zero at index 0). The
// error wraps openrecall.ErrInvalid. No points is a valid, empty curve.
func Validate(points []openrecall.CostPoint) error {
	var prev openrecall.CostPoint
	for i, p := range points {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("cost curve point %d (alert %q): %s: %w", p.Index, p.AlertID, fmt.Sprintf(format, args...), openrecall.ErrInvalid)
		}
		if i == 0 {
			if p.Index < 0 {
				return bad("negative index")
			}
			if p.Index == 0 {
				prev = openrecall.CostPoint{Index: -1, Batch: p.Batch}
			} else {
				// A tail of a curve: take the first point's sums as given.
				prev = openrecall.CostPoint{Index: p.Index - 1, Batch: p.Batch,
					CumulativeCost: p.CumulativeCost - p.Cost, CumulativeBaseline: p.CumulativeBaseline - p.Baseline}
			}
		}
		switch {
		case p.Index != prev.Index+1:
			return bad("index follows %d (position %d)", prev.Index, i)
		case p.Batch != prev.Batch:
			return bad("batch %q differs from %q", p.Batch, prev.Batch)
		case p.CumulativeCost < prev.CumulativeCost:
			return bad("cumulative cost decreases from %s to %s", exact(prev.CumulativeCost), exact(p.CumulativeCost))
		case p.Savings() < prev.Savings():
			return bad("savings band decreases from %s to %s (cost %s above baseline %s)", exact(prev.Savings()), exact(p.Savings()), exact(p.Cost), exact(p.Baseline))
		case p.CumulativeCost != prev.CumulativeCost+p.Cost:
			return bad("cumulative cost %s is not %s plus the point's cost %s", exact(p.CumulativeCost), exact(prev.CumulativeCost), exact(p.Cost))
		case p.CumulativeBaseline != prev.CumulativeBaseline+p.Baseline:
			return bad("cumulative baseline %s is not %s plus the point's baseline %s", exact(p.CumulativeBaseline), exact(prev.CumulativeBaseline), exact(p.Baseline))
		}
		prev = p
	}
	return nil
}

// exact formats n as dollars to the nano-dollar, with at least six decimals,
// so that error messages never round two different amounts alike.
func exact(n openrecall.NanoUSD) string {
	s := dollars(n, 9)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 7 {
		s = s[:len(s)-1]
	}
	return s
}
