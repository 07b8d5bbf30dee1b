package costcurve

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/openrecall/openrecall"
)

// Minimum chart sizes for RenderTerminal, in cells.
const (
	MinTerminalWidth  = 24
	MinTerminalHeight = 6
)

// series is a curve's cumulative sums with the origin prepended: x = k
// alerts analysed, k = 0..n.
type series struct {
	cost, base []openrecall.NanoUSD
	lo, hi     openrecall.NanoUSD
}

func newSeries(points []openrecall.CostPoint) series {
	s := series{cost: []openrecall.NanoUSD{0}, base: []openrecall.NanoUSD{0}}
	for _, p := range points {
		s.cost = append(s.cost, p.CumulativeCost)
		s.base = append(s.base, p.CumulativeBaseline)
	}
	for i := range s.cost {
		s.lo = min(s.lo, s.cost[i], s.base[i])
		s.hi = max(s.hi, s.cost[i], s.base[i])
	}
	if s.hi == s.lo {
		s.hi = s.lo + 1
	}
	return s
}

// at interpolates both sums at a fractional number of alerts x in [0, n].
func (s series) at(x float64) (cost, base float64) {
	n := len(s.cost) - 1
	k := int(math.Floor(x))
	if k >= n {
		return float64(s.cost[n]), float64(s.base[n])
	}
	f := x - float64(k)
	lerp := func(a, b openrecall.NanoUSD) float64 { return float64(a) + f*float64(b-a) }
	return lerp(s.cost[k], s.cost[k+1]), lerp(s.base[k], s.base[k+1])
}

// RenderTerminal draws the cost curve as a text chart of width columns and
// height lines (at least MinTerminalWidth × MinTerminalHeight): the baseline
// ('*') and the cost ('#') as cumulative dollars against alerts analysed,
// the savings band between them shaded ('░'), a dollar axis on the left, the
// alert count below and a legend. An empty curve draws a one-line note.
func RenderTerminal(w io.Writer, points []openrecall.CostPoint, width, height int) error {
	if width < MinTerminalWidth || height < MinTerminalHeight {
		return fmt.Errorf("render cost curve: a %d×%d chart is below the minimum %d×%d: %w",
			width, height, MinTerminalWidth, MinTerminalHeight, openrecall.ErrInvalid)
	}
	var b strings.Builder
	if len(points) == 0 {
		b.WriteString("cost curve: no analysed alerts yet\n")
		return write(w, b.String())
	}
	s := newSeries(points)
	n := len(points)
	rows := height - 3
	ticks := axisTicks(rows)
	decimals := labelDecimals(s.hi-s.lo, len(ticks)-1)
	labels := map[int]string{}
	labelWidth := 0
	for _, r := range ticks {
		labels[r] = dollars(valueAtRow(s, r, rows), decimals)
		labelWidth = max(labelWidth, utf8.RuneCountInString(labels[r]))
	}
	cols := width - labelWidth - 2
	if cols < 8 {
		return fmt.Errorf("render cost curve: %d columns leave no room for a chart beside %d-column labels: %w", width, labelWidth, openrecall.ErrInvalid)
	}

	grid := make([][]rune, rows)
	for r := range grid {
		grid[r] = []rune(strings.Repeat(" ", cols))
	}
	row := func(v float64) int {
		return int(math.Round((float64(s.hi) - v) / float64(s.hi-s.lo) * float64(rows-1)))
	}
	for c := 0; c < cols; c++ {
		x := float64(c) * float64(n) / float64(cols-1)
		cost, base := s.at(x)
		rc, rb := row(cost), row(base)
		for r := rb + 1; r < rc; r++ {
			grid[r][c] = '░'
		}
		grid[rb][c] = '*'
		grid[rc][c] = '#'
	}
	for r := 0; r < rows; r++ {
		axis := '│'
		label := labels[r]
		if _, ok := labels[r]; ok {
			axis = '┤'
		}
		fmt.Fprintf(&b, "%*s %c%s\n", labelWidth, label, axis, strings.TrimRight(string(grid[r]), " "))
	}
	fmt.Fprintf(&b, "%*s └%s\n", labelWidth, "", strings.Repeat("─", cols))
	right := fmt.Sprintf("%d alerts", n)
	if n == 1 {
		right = "1 alert"
	}
	gap := max(1, cols-1-utf8.RuneCountInString(right))
	fmt.Fprintf(&b, "%*s  0%s%s\n", labelWidth, "", strings.Repeat(" ", gap), right)
	sum := Summarize(points)
	legends := []string{
		fmt.Sprintf("%*s  * baseline %s  # cost %s  ░ saved %s (%.1f%%)", labelWidth, "",
			dollars(sum.Baseline, decimals), dollars(sum.Cost, decimals), dollars(sum.Savings, decimals), sum.SavingsPercent),
		fmt.Sprintf("* baseline %s # cost %s ░ %.1f%%", dollars(sum.Baseline, decimals), dollars(sum.Cost, decimals), sum.SavingsPercent),
		fmt.Sprintf("* base # cost ░ %.1f%%", sum.SavingsPercent),
	}
	for _, l := range legends {
		if utf8.RuneCountInString(l) <= width || l == legends[len(legends)-1] {
			b.WriteString(l + "\n")
			break
		}
	}
	return write(w, b.String())
}

// axisTicks returns the rows that carry a dollar label: top, bottom and up
// to three evenly spaced between.
func axisTicks(rows int) []int {
	parts := min(4, rows-1)
	seen := map[int]bool{}
	var out []int
	for i := 0; i <= parts; i++ {
		r := int(math.Round(float64(i) * float64(rows-1) / float64(parts)))
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func valueAtRow(s series, r, rows int) openrecall.NanoUSD {
	return s.hi - openrecall.NanoUSD(math.Round(float64(s.hi-s.lo)*float64(r)/float64(rows-1)))
}

// labelDecimals returns how many decimals dollar labels need to tell ticks
// a span/steps apart: two significant digits of a step, at least cents,
// at most nano-dollars.
func labelDecimals(span openrecall.NanoUSD, steps int) int {
	if steps < 1 || span <= 0 {
		return 2
	}
	step := span.Dollars() / float64(steps)
	d := int(math.Ceil(-math.Log10(step))) + 1
	return min(9, max(2, d))
}

// dollars formats n as dollars with the given decimals (0..9), rounding
// half away from zero in integer arithmetic.
func dollars(n openrecall.NanoUSD, decimals int) string {
	sign := ""
	v := int64(n)
	if v < 0 {
		sign, v = "-", -v
	}
	scale := int64(1)
	for i := decimals; i < 9; i++ {
		scale *= 10
	}
	v = (v + scale/2) / scale
	unit := int64(openrecall.NanoPerDollar) / scale
	if decimals == 0 {
		return fmt.Sprintf("%s$%d", sign, v)
	}
	return fmt.Sprintf("%s$%d.%0*d", sign, v/unit, decimals, v%unit)
}

// SVG chart geometry, in user units.
const (
	svgWidth, svgHeight                 = 800, 460
	svgLeft, svgRight, svgTop, svgBelow = 96, 24, 48, 116
)

// RenderSVG writes the cost curve as a standalone SVG document titled title:
// the cost line, the baseline line and the shaded savings band between
// them, as cumulative dollars against alerts analysed, with both axes, tick
// labels in dollars, a legend and the totals. The three series are the
// elements with ids "cost", "baseline" and "savings". An empty curve still
// gives a valid document, with a note.
func RenderSVG(w io.Writer, points []openrecall.CostPoint, title string) error {
	return RenderSVGNote(w, points, title, "")
}

// EstimatedNote is the chart note of a run whose costs were estimated (the
// deterministic local model), not billed by a provider.
const EstimatedNote = "costs estimated, not billed: deterministic model, estimated tokens at list prices"

// BilledNote is the chart note of a run with live model calls.
const BilledNote = "costs as billed: usage reported by the model provider, at list prices"

// RenderSVGNote is RenderSVG with a note under the title (the element with
// id "note"), such as EstimatedNote; an empty note draws none.
func RenderSVGNote(w io.Writer, points []openrecall.CostPoint, title, note string) error {
	s := newSeries(points)
	n := len(points)
	pw := float64(svgWidth - svgLeft - svgRight)
	ph := float64(svgHeight - svgTop - svgBelow)
	xAt := func(k int) float64 { return svgLeft + float64(k)/float64(max(n, 1))*pw }
	yAt := func(v openrecall.NanoUSD) float64 {
		return svgTop + float64(s.hi-v)/float64(s.hi-s.lo)*ph
	}
	// Draw at most MaxSVGSamples+1 x positions: the curves are monotone
	// sums, so a regular sample (ends included) keeps their shape while the
	// document stays small for a queue of a million alerts.
	ks := samples(n, MaxSVGSamples)
	line := func(vals []openrecall.NanoUSD) string {
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = fmt.Sprintf("%.1f,%.1f", xAt(k), yAt(vals[k]))
		}
		return strings.Join(parts, " ")
	}
	// The band runs along the baseline and back along the cost.
	var band strings.Builder
	band.WriteString(line(s.base))
	for i := len(ks) - 1; i >= 0; i-- {
		fmt.Fprintf(&band, " %.1f,%.1f", xAt(ks[i]), yAt(s.cost[ks[i]]))
	}
	bandPts := band.String()

	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, svgHeight)
	fmt.Fprintf(&b, `<text x="%d" y="28" text-anchor="middle" font-size="16" font-weight="bold">%s</text>`+"\n", svgWidth/2, esc(title))
	if note != "" {
		fmt.Fprintf(&b, `<text id="note" x="%d" y="42" text-anchor="middle" font-size="11" fill="#555555">%s</text>`+"\n", svgWidth/2, esc(note))
	}

	// Axes, grid and tick labels.
	const yTicks = 5
	decimals := labelDecimals(s.hi-s.lo, yTicks)
	b.WriteString(`<g id="axes" stroke="#333333" stroke-width="1">` + "\n")
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f"/>`+"\n", svgLeft, svgTop, svgLeft, svgTop+ph)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", svgLeft, svgTop+ph, svgLeft+pw, svgTop+ph)
	b.WriteString("</g>\n")
	b.WriteString(`<g id="y-ticks" text-anchor="end">` + "\n")
	for i := 0; i <= yTicks; i++ {
		v := s.lo + openrecall.NanoUSD(math.Round(float64(s.hi-s.lo)*float64(i)/yTicks))
		y := yAt(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", svgLeft, y, svgLeft+pw, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">%s</text>`+"\n", svgLeft-8, y+4, esc(dollars(v, decimals)))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g id="x-ticks" text-anchor="middle">` + "\n")
	for _, k := range xTicks(n) {
		x := xAt(k)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", x, svgTop+ph, x, svgTop+ph+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%d</text>`+"\n", x, svgTop+ph+18, k)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">alerts analysed</text>`+"\n", svgLeft+pw/2, svgTop+ph+36)
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">cumulative cost (USD)</text>`+"\n", svgTop+ph/2, svgTop+ph/2)

	// The three series: band first, lines over it.
	fmt.Fprintf(&b, `<polygon id="savings" fill="#2ca02c" fill-opacity="0.25" stroke="none" points="%s"/>`+"\n", bandPts)
	fmt.Fprintf(&b, `<polyline id="baseline" fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4" points="%s"/>`+"\n", line(s.base))
	fmt.Fprintf(&b, `<polyline id="cost" fill="none" stroke="#1f77b4" stroke-width="2" points="%s"/>`+"\n", line(s.cost))
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#666666">no analysed alerts yet</text>`+"\n", svgLeft+pw/2, svgTop+ph/2)
	}

	// Legend and totals.
	sum := Summarize(points)
	ly := float64(svgHeight - 50)
	b.WriteString(`<g id="legend">` + "\n")
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/>`+"\n", svgLeft, ly, svgLeft+24, ly)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f">baseline (strong model) %s</text>`+"\n", svgLeft+30, ly+4, esc(dollars(sum.Baseline, decimals)))
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#1f77b4" stroke-width="2"/>`+"\n", svgLeft+250, ly, svgLeft+274, ly)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f">cost %s</text>`+"\n", svgLeft+280, ly+4, esc(dollars(sum.Cost, decimals)))
	fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="24" height="10" fill="#2ca02c" fill-opacity="0.25"/>`+"\n", svgLeft+420, ly-5)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f">saved %s (%.1f%%)</text>`+"\n", svgLeft+450, ly+4, esc(dollars(sum.Savings, decimals)), sum.SavingsPercent)
	// What saved, source by source (DESIGN §7): memory bypasses, group
	// members, exception matches and cheap answers apart.
	var by []string
	for _, k := range TierKeys {
		if v := sum.SavedPerTier[k]; v != 0 {
			by = append(by, fmt.Sprintf("%s %s (%d)", k, dollars(v, decimals), sum.PerTier[k]))
		}
	}
	if len(by) > 0 {
		fmt.Fprintf(&b, `<text id="saved-by" x="%d" y="%.1f" fill="#555555">saved by: %s</text>`+"\n", svgLeft, ly+20, esc(strings.Join(by, " · ")))
	}
	if sum.Unanalysed > 0 {
		fmt.Fprintf(&b, `<text id="unanalysed" x="%d" y="%.1f" fill="#555555">%d alerts escalated without analysis (no model answered): not counted as savings</text>`+"\n", svgLeft, ly+38, sum.Unanalysed)
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("render cost curve svg: %w", err)
	}
	return nil
}

// MaxSVGSamples is the most alert positions RenderSVG draws per series;
// longer curves are sampled evenly, first and last alerts included.
const MaxSVGSamples = 1000

// samples returns the x positions 0..n to draw, at most limit+1 of them,
// evenly spread, 0 and n included.
func samples(n, limit int) []int {
	if n <= limit {
		out := make([]int, n+1)
		for k := range out {
			out[k] = k
		}
		return out
	}
	out := make([]int, 0, limit+1)
	for i := 0; i <= limit; i++ {
		k := int(int64(i) * int64(n) / int64(limit))
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// xTicks returns up to six alert counts to label, 0 and n included.
func xTicks(n int) []int {
	if n == 0 {
		return []int{0}
	}
	parts := min(5, n)
	var out []int
	for i := 0; i <= parts; i++ {
		k := int(math.Round(float64(i) * float64(n) / float64(parts)))
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}

func write(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("render cost curve: %w", err)
	}
	return nil
}
