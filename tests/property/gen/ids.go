package gen

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// IDChange is an adapter sender's fixture whose id fields are removed, then
// one value of what is left changed or removed (P120), and the same
// payload written again in another member order and layout (P121).
type IDChange struct {
	Fixture FixtureRef
	// Leaf picks the value changed, modulo the places of the payload
	// without its id fields (pre-order).
	Leaf int
	// Remove removes the value instead of changing it.
	Remove bool
	// Order, Seed and Layout write the redelivery (JSONNode.Write).
	Order, Seed, Layout int
}

// Changed returns the tree with the value at place leaf (modulo its places)
// changed — a string with "x" appended, a number plus one, a boolean
// flipped, null as "x", an object or array given one more member — or
// removed, and the place's path.
func (c IDChange) Changed(n JSONNode) (JSONNode, string) {
	places := n.Places()
	if len(places) == 0 {
		return n, ""
	}
	pl := places[c.Leaf%len(places)]
	if c.Remove {
		return n.Remove(pl.Steps), pl.Path
	}
	v := pl.Node
	switch {
	case v.Kind == '"':
		var s string
		if err := jsonUnquote(v.Raw, &s); err != nil {
			s = v.Raw
		}
		v = JSONNode{Kind: '"', Raw: strconv.Quote(s + "x")}
	case v.Raw == "true", v.Raw == "false":
		v = JSONNode{Kind: 'a', Raw: strconv.FormatBool(v.Raw != "true")}
	case v.Raw == "null":
		v = JSONNode{Kind: '"', Raw: `"x"`}
	case v.Kind == 'a':
		f, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil {
			panic(fmt.Sprintf("number %q: %v", v.Raw, err))
		}
		v = JSONNode{Kind: 'a', Raw: strconv.FormatFloat(f+1, 'g', -1, 64)}
	case v.Kind == '{':
		v.Keys = append(append([]string(nil), v.Keys...), `"zz_added"`)
		v.Kids = append(append([]JSONNode(nil), v.Kids...), JSONNode{Kind: '"', Raw: `"x"`})
	default:
		v.Kids = append(append([]JSONNode(nil), v.Kids...), JSONNode{Kind: '"', Raw: `"x"`})
	}
	return n.Replace(pl.Steps, v), pl.Path
}

// IDChangeGen generates IDChanges over every adapter sender's fixtures.
func IDChangeGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(IDChange{}), map[string]gopter.Gen{
		"Fixture": fixtureRefGen(AdapterSenders),
		"Leaf":    Index(4096, 0),
		"Remove":  gg.Bool(),
		"Order":   Index(len(Orders()), 0),
		"Seed":    Index(1024, 0),
		"Layout":  Index(len(Layouts()), 0),
	})
}

// ValidIDChange reports indexes outside their pools.
func ValidIDChange(c IDChange) error {
	if err := validFixtureRef(c.Fixture, AdapterSenders); err != nil {
		return err
	}
	if err := indexesIn([]int{c.Leaf, c.Seed}, 4096, "leaf or seed"); err != nil {
		return err
	}
	if err := indexesIn([]int{c.Order}, len(Orders()), "order"); err != nil {
		return err
	}
	return indexesIn([]int{c.Layout}, len(Layouts()), "layout")
}

// AMShapes are the ways an Alertmanager-like alert reaches openrecall.
func AMShapes() []string { return []string{"alertmanager", "grafana", "prometheus"} }

// AMLabelValues are the values of the labels of P122's alerts, by label;
// "" leaves the label out.
func AMLabelValues() [][]string {
	return [][]string{
		{"DiskFull", "HighLatency"}, // alertname
		{"", "db-1", "db-2"},        // instance
		{"", "critical", "info"},    // severity
		{"", "a", "a,b=c", "b"},     // note
	}
}

// AMLabelNames are the names of AMLabelValues' labels.
func AMLabelNames() []string { return []string{"alertname", "instance", "severity", "note"} }

// AMStarts are startsAt offsets in seconds from 2026-11-30T03:00:00Z.
func AMStarts() []int { return []int{0, 1, 3600} }

// AMFingerprints are the fingerprints an alert may carry (P122): none, one
// of a few hex strings (another alert's included), a number, an object.
func AMFingerprints() []string {
	return []string{"", `"0123456789abcdef"`, `"fedcba9876543210"`, `123`, `{"x":1}`, `""`}
}

// AMAlert is one Alertmanager, Grafana or Prometheus alert of P122.
type AMAlert struct {
	Shape       int
	Labels      []int // an index into each AMLabelValues pool
	Start       int
	Fingerprint int
	// Resolved sends it resolved (not for Prometheus); Note changes its
	// annotations and endsAt, as a redelivery does.
	Resolved bool
	Note     int
}

// LabelSet returns the alert's labels.
func (a AMAlert) LabelSet() map[string]string {
	out := map[string]string{}
	for i, v := range AMLabelValues() {
		if s := v[a.Labels[i]%len(v)]; s != "" {
			out[AMLabelNames()[i]] = s
		}
	}
	return out
}

// Body returns the payload that carries the alert.
func (a AMAlert) Body() []byte {
	var labels []string
	for _, k := range AMLabelNames() {
		if v, ok := a.LabelSet()[k]; ok {
			labels = append(labels, strconv.Quote(k)+":"+strconv.Quote(v))
		}
	}
	start := fmt.Sprintf("%q", "2026-11-30T03:00:00Z")
	if s := AMStarts()[a.Start%len(AMStarts())]; s != 0 {
		start = strconv.Itoa(1796007600 + s)
	}
	item := `"labels":{` + strings.Join(labels, ",") + `},"startsAt":` + start +
		fmt.Sprintf(`,"annotations":{"summary":"note %d"},"endsAt":"2026-11-30T0%d:00:00Z"`, a.Note, a.Note%10)
	shape := AMShapes()[a.Shape%len(AMShapes())]
	if shape == "prometheus" {
		return []byte("[{" + item + "}]")
	}
	status := "firing"
	if a.Resolved {
		status = "resolved"
	}
	item += `,"status":"` + status + `"`
	if fp := AMFingerprints()[a.Fingerprint%len(AMFingerprints())]; fp != "" {
		item += `,"fingerprint":` + fp
	}
	version := "4"
	if shape == "grafana" {
		version = "1"
		item += `,"silenceURL":"http://grafana/silence"`
	}
	return []byte(`{"version":"` + version + `","status":"` + status + `","receiver":"r","groupKey":"g","alerts":[{` + item + `}]}`)
}

// AMPair is two alerts of P122; with Same, the second takes the first's
// labels and start (a redelivery: its shape, status, annotations and
// fingerprint its own).
type AMPair struct {
	A, B AMAlert
	Same bool
}

// Second returns the second alert.
func (p AMPair) Second() AMAlert {
	b := p.B
	if p.Same {
		b.Labels, b.Start = append([]int(nil), p.A.Labels...), p.A.Start
	}
	return b
}

func amAlertGen() gopter.Gen {
	pools := AMLabelValues()
	labels := make([]gopter.Gen, len(pools))
	for i, p := range pools {
		labels[i] = Index(len(p), 0)
	}
	return gg.Struct(reflect.TypeOf(AMAlert{}), map[string]gopter.Gen{
		"Shape":       Index(len(AMShapes()), 0),
		"Labels":      gg.SliceOfN(len(pools), Index(4, 0)),
		"Start":       Index(len(AMStarts()), 0),
		"Fingerprint": Index(len(AMFingerprints()), 0),
		"Resolved":    gg.Bool(),
		"Note":        Index(10, 0),
	})
}

// AMPairGen generates pairs of Alertmanager, Grafana and Prometheus alerts
// from small pools, so that equal label sets and starts are frequent.
func AMPairGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(AMPair{}), map[string]gopter.Gen{"A": amAlertGen(), "B": amAlertGen(), "Same": gg.Bool()})
}

// ValidAMPair reports indexes outside their pools.
func ValidAMPair(p AMPair) error {
	for _, a := range []AMAlert{p.A, p.B} {
		if len(a.Labels) != len(AMLabelValues()) {
			return fmt.Errorf("%d labels, want %d", len(a.Labels), len(AMLabelValues()))
		}
		if err := indexesIn(a.Labels, 4, "label"); err != nil {
			return err
		}
		if err := indexesIn([]int{a.Shape, a.Start, a.Fingerprint, a.Note}, 10, "alert"); err != nil {
			return err
		}
	}
	return nil
}
