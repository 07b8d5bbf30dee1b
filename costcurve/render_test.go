package costcurve

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./costcurve -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
	}
}

// long is a 40-alert run in which memory learns: mostly strong at first,
// mostly bypassed later.
func long() []openrecall.CostPoint {
	c := New("night-shift")
	var pts []openrecall.CostPoint
	for i := 0; i < 40; i++ {
		a := add{fmt.Sprintf("a%02d", i), strong, false, 4_500_000, 4_800_000}
		switch {
		case i%5 == 4:
			a = add{a.id, cheap, false, 300_000, 4_800_000}
		case i > 10 && i%5 != 0:
			a = add{a.id, none, true, 0, 4_800_000}
		}
		pts = append(pts, c.Add(a.id, a.tier, a.bypassed, a.cost, a.baseline))
	}
	return pts
}

var curves = []struct {
	name   string
	points func() []openrecall.CostPoint
}{
	{"empty", func() []openrecall.CostPoint { return nil }},
	{"one", func() []openrecall.CostPoint { return build(add{"a1", strong, false, 4_500_000, 4_800_000}) }},
	{"shift", shift},
	{"long", long},
	{"no_savings", func() []openrecall.CostPoint {
		return build(add{"a1", strong, false, 2_000_000_000, 2_000_000_000}, add{"a2", strong, false, 1_500_000_000, 1_500_000_000})
	}},
}

func TestRenderTerminalGolden(t *testing.T) {
	for _, tt := range curves {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderTerminal(&b, tt.points(), 72, 16); err != nil {
				t.Fatal(err)
			}
			golden(t, "terminal_"+tt.name+".golden", b.Bytes())
		})
	}
}

func TestRenderTerminalShape(t *testing.T) {
	sizes := []struct{ w, h int }{{MinTerminalWidth, MinTerminalHeight}, {40, 10}, {120, 30}}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderTerminal(&b, long(), sz.w, sz.h); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != sz.h {
				t.Errorf("%d lines, want %d", len(lines), sz.h)
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > sz.w {
					t.Errorf("line %d is %d wide, over %d: %q", i, n, sz.w, l)
				}
			}
			for _, want := range []string{"*", "#", "░", "$0.00", "40 alerts"} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("chart lacks %q:\n%s", want, b.String())
				}
			}
		})
	}
}

func TestRenderTerminalRejectsTinySizes(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{MinTerminalWidth - 1, 20}, {80, MinTerminalHeight - 1}, {0, 0}} {
		err := RenderTerminal(io.Discard, shift(), sz.w, sz.h)
		if !errors.Is(err, openrecall.ErrInvalid) {
			t.Errorf("RenderTerminal(%d×%d) = %v, want ErrInvalid", sz.w, sz.h, err)
		}
	}
}

func TestRenderSVGGolden(t *testing.T) {
	for _, tt := range curves {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := RenderSVG(&b, tt.points(), "openrecall cost curve: "+tt.name); err != nil {
				t.Fatal(err)
			}
			golden(t, "svg_"+tt.name+".golden.svg", b.Bytes())
		})
	}
}

// svgDoc is what TestRenderSVGParses reads back from a chart.
type svgDoc struct {
	Title     string
	Polylines map[string][][2]float64
	Polygons  map[string][][2]float64
	Texts     []string
}

func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	doc := svgDoc{Polylines: map[string][][2]float64{}, Polygons: map[string][][2]float64{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var inTitle, inText bool
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root {
				if el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element is %v, want svg in the SVG namespace", el.Name)
				}
				root = false
			}
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch el.Name.Local {
			case "title":
				inTitle = true
			case "text":
				inText = true
			case "polyline":
				doc.Polylines[attr["id"]] = parsePoints(t, attr["points"])
			case "polygon":
				doc.Polygons[attr["id"]] = parsePoints(t, attr["points"])
			}
		case xml.EndElement:
			inTitle, inText = false, false
		case xml.CharData:
			switch {
			case inTitle:
				doc.Title += string(el)
			case inText:
				doc.Texts = append(doc.Texts, string(el))
			}
		}
	}
	return doc
}

func parsePoints(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, pair := range strings.Fields(s) {
		x, y, ok := strings.Cut(pair, ",")
		fx, errx := strconv.ParseFloat(x, 64)
		fy, erry := strconv.ParseFloat(y, 64)
		if !ok || errx != nil || erry != nil {
			t.Fatalf("bad point %q", pair)
		}
		out = append(out, [2]float64{fx, fy})
	}
	return out
}

func TestRenderSVGParses(t *testing.T) {
	for _, tt := range curves {
		t.Run(tt.name, func(t *testing.T) {
			pts := tt.points()
			var b bytes.Buffer
			title := `cost <&> "` + tt.name + `"`
			if err := RenderSVG(&b, pts, title); err != nil {
				t.Fatal(err)
			}
			doc := parseSVG(t, b.Bytes())
			if doc.Title != title {
				t.Errorf("title = %q, want %q", doc.Title, title)
			}
			cost, base, band := doc.Polylines["cost"], doc.Polylines["baseline"], doc.Polygons["savings"]
			if len(cost) != len(pts)+1 || len(base) != len(pts)+1 {
				t.Fatalf("cost and baseline lines have %d and %d points, want %d each (origin plus one per alert)", len(cost), len(base), len(pts)+1)
			}
			if len(band) != 2*(len(pts)+1) {
				t.Errorf("savings band has %d points, want %d", len(band), 2*(len(pts)+1))
			}
			for k := 1; k < len(cost); k++ {
				// SVG y grows downwards: never decreasing means never rising in y.
				if cost[k][1] > cost[k-1][1] || base[k][1] > base[k-1][1] || cost[k][0] <= cost[k-1][0] {
					t.Errorf("point %d: a series goes backwards: cost %v→%v, baseline %v→%v", k, cost[k-1], cost[k], base[k-1], base[k])
				}
				if base[k][1] > cost[k][1] {
					t.Errorf("point %d: baseline %v drawn below cost %v", k, base[k], cost[k])
				}
			}
			text := strings.Join(doc.Texts, "\n")
			s := Summarize(pts)
			for _, want := range []string{"alerts analysed", "cumulative cost (USD)", "$0.00", fmt.Sprintf("(%.1f%%)", s.SavingsPercent)} {
				if !strings.Contains(text, want) {
					t.Errorf("SVG text lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRenderWriteErrors(t *testing.T) {
	if err := RenderSVG(failWriter{}, shift(), "x"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("RenderSVG() = %v, want the write error", err)
	}
	if err := RenderTerminal(failWriter{}, shift(), 80, 20); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("RenderTerminal() = %v, want the write error", err)
	}
}

func TestDollars(t *testing.T) {
	tests := []struct {
		n        openrecall.NanoUSD
		decimals int
		want     string
	}{
		{0, 2, "$0.00"},
		{4_800_000, 4, "$0.0048"},
		{4_850_000, 3, "$0.005"},
		{-4_850_000, 3, "-$0.005"},
		{12_345_678_901, 2, "$12.35"},
		{1, 9, "$0.000000001"},
		{1_500_000_000, 0, "$2"},
	}
	for _, tt := range tests {
		if got := dollars(tt.n, tt.decimals); got != tt.want {
			t.Errorf("dollars(%d, %d) = %q, want %q", tt.n, tt.decimals, got, tt.want)
		}
	}
}

func BenchmarkRenderSVG(b *testing.B) {
	c := New("bench")
	pts := make([]openrecall.CostPoint, 10_000)
	for i := range pts {
		pts[i] = c.Add("a", strong, i%2 == 0, openrecall.NanoUSD(i%2)*4_500_000, 4_800_000)
	}
	for b.Loop() {
		if err := RenderSVG(io.Discard, pts, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRenderSVGSamplesLongCurves(t *testing.T) {
	c := New("big")
	pts := make([]openrecall.CostPoint, 25_003)
	for i := range pts {
		pts[i] = c.Add("a", strong, i%3 == 0, openrecall.NanoUSD(i%3)*1_000_000, 4_000_000)
	}
	var b bytes.Buffer
	if err := RenderSVG(&b, pts, "big"); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, b.Bytes())
	cost, base := doc.Polylines["cost"], doc.Polylines["baseline"]
	if len(cost) != MaxSVGSamples+1 || len(base) != MaxSVGSamples+1 || len(doc.Polygons["savings"]) != 2*(MaxSVGSamples+1) {
		t.Fatalf("series have %d, %d and %d points, want %d, %d and %d", len(cost), len(base), len(doc.Polygons["savings"]),
			MaxSVGSamples+1, MaxSVGSamples+1, 2*(MaxSVGSamples+1))
	}
	// The last sample is the last alert: the lines end at the totals, which
	// are the top of the chart (y = svgTop) for the baseline.
	if last := base[len(base)-1]; last[0] != svgWidth-svgRight || last[1] != svgTop {
		t.Errorf("baseline ends at %v, want (%d, %d)", last, svgWidth-svgRight, svgTop)
	}
	if first := cost[0]; first[0] != svgLeft || first[1] != svgHeight-svgBelow {
		t.Errorf("cost starts at %v, want the origin (%d, %d)", first, svgLeft, svgHeight-svgBelow)
	}
}

func TestSamples(t *testing.T) {
	tests := []struct {
		n, limit int
		want     []int
	}{
		{0, 4, []int{0}},
		{3, 4, []int{0, 1, 2, 3}},
		{4, 4, []int{0, 1, 2, 3, 4}},
		{10, 4, []int{0, 2, 5, 7, 10}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, samples(tt.n, tt.limit)); diff != "" {
			t.Errorf("samples(%d, %d) mismatch (-want +got):\n%s", tt.n, tt.limit, diff)
		}
	}
}

func TestRenderSVGNoteAndUnanalysed(t *testing.T) {
	pts := build(add{"a1", none, true, 0, 4_800_000}, add{"u1", TierUnanalysed, false, 0, 0})
	var b strings.Builder
	if err := RenderSVGNote(&b, pts, "t", EstimatedNote); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="note"`, "costs estimated, not billed", `id="unanalysed"`, "1 alerts escalated without analysis"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	b.Reset()
	if err := RenderSVG(&b, shift(), "t"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="note"`) || strings.Contains(b.String(), `id="unanalysed"`) {
		t.Error("a chart without a note or unanalysed alerts draws them")
	}
}
