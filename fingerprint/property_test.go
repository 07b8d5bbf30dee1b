package fingerprint

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/openrecall/openrecall"
)

// noise is one draw of the high-cardinality values that differ between
// alerts of one family.
type noise struct {
	Num, Num2  int
	IP         []int
	Port       int
	IPv6       []string
	Hash       string
	Suffix     string
	Ordinal    int
	DurN       int
	DurUnit    string
	Unix       int64
	UUID       string
	Hex        string
	Percentage int
}

func noiseGen() gopter.Gen {
	number := gen.OneGenOf(gen.IntRange(0, 999), gen.IntRange(0, 1_000_000))
	return gen.Struct(reflect.TypeOf(noise{}), map[string]gopter.Gen{
		"Num":        number,
		"Num2":       number,
		"IP":         gen.SliceOfN(4, gen.IntRange(0, 255)),
		"Port":       gen.IntRange(1, 65535),
		"IPv6":       gen.SliceOfN(8, gen.RegexMatch(`^[0-9a-f]{1,4}$`)),
		"Hash":       gen.RegexMatch(`^[bcdfghjklmnpqrstvwxz2456789]{8,10}$`),
		"Suffix":     gen.RegexMatch(`^[bcdfghjklmnpqrstvwxz2456789]{5}$`),
		"Ordinal":    gen.IntRange(0, 50),
		"DurN":       gen.IntRange(1, 600),
		"DurUnit":    gen.OneConstOf("ms", "s", "m", "h"),
		"Unix":       gen.Int64Range(1_500_000_000, 2_000_000_000),
		"UUID":       gen.RegexMatch(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`),
		"Hex":        gen.RegexMatch(`^[0-9a-f]{12,16}$`),
		"Percentage": gen.IntRange(0, 100),
	})
}

func (n noise) replacer() *strings.Replacer {
	ip := fmt.Sprintf("%d.%d.%d.%d", n.IP[0], n.IP[1], n.IP[2], n.IP[3])
	ts := time.Unix(n.Unix, 0).UTC()
	return strings.NewReplacer(
		"{num}", fmt.Sprint(n.Num),
		"{num2}", fmt.Sprint(n.Num2),
		"{ip}", ip,
		"{ipport}", fmt.Sprintf("%s:%d", ip, n.Port),
		"{ipv6}", "["+strings.Join(n.IPv6, ":")+"]:"+fmt.Sprint(n.Port),
		"{pod}", n.Hash+"-"+n.Suffix,
		"{ord}", fmt.Sprint(n.Ordinal),
		"{dur}", fmt.Sprintf("%d%s", n.DurN, n.DurUnit),
		"{ts}", ts.Format(time.RFC3339Nano),
		"{date}", ts.Format("2006-01-02 15:04:05"),
		"{uuid}", n.UUID,
		"{hex}", n.Hex,
		"{pct}", fmt.Sprintf("%d.%d%%", n.Percentage, n.Ordinal%10),
	)
}

// familyTemplates returns alerts with noise slots; every filling of one
// template must give the same fingerprint.
func familyTemplates() []openrecall.Alert {
	return []openrecall.Alert{
		{
			Title:  "Pod shop/checkout-api-{pod} is crash looping",
			Text:   "restarted {num} times in the last {dur} at {ts}; missing key in configmap checkout-{ord}",
			Labels: map[string]string{"alertname": "KubePodCrashLooping", "pod": "checkout-api-{pod}", "container": "checkout-api-{pod}", "cluster": "prod-eu-{ord}"},
		},
		{
			Title: "queue has {num} items, {num2} consumers",
			Text:  "consumer lag on topic orders partition {ord} for the last {dur}; broker {ipport}",
		},
		{
			Title:   "Upstream errors on orders-api",
			Text:    "GET /v1/orders returned 503 {num} times in {dur} from {ipv6}; trace {hex} request {uuid}",
			Service: "orders-api-{pod}",
		},
		{
			Title:  "SSH brute force on bastion-{ord}",
			Text:   "Failed password for root from {ip} port {num} ssh2 ({num2} attempts) at {date}",
			Labels: map[string]string{"category": "security", "host": "bastion-{ord}", "env": "prod"},
		},
		{
			Title:  "disk {pct} on db-{ord}",
			Labels: map[string]string{"alertname": "DiskFull", "service": "db-{ord}", "instance": "{ipport}"},
		},
		{
			Title: "p99 latency {num}ms on search-api-{ord}",
			Text:  "error rate {pct} since the last deploy at {ts}; {num2} requests",
		},
		{
			Title: "fetch from image-proxy-{pod}",
			Text:  "image-proxy fetched http://169.254.169.254/latest/meta-data/ for request {uuid} from {ip}",
		},
	}
}

func fill(a openrecall.Alert, r *strings.Replacer) openrecall.Alert {
	out := a
	out.Title, out.Text, out.Service = r.Replace(a.Title), r.Replace(a.Text), r.Replace(a.Service)
	out.Labels = map[string]string{}
	for k, v := range a.Labels {
		out.Labels[k] = r.Replace(v)
	}
	return out
}

// TestPropertyNoiseInvariance is a law: two alerts of one family that differ
// only in numbers, addresses, pods, durations, timestamps, UUIDs and hex ids
// have the same fingerprint.
func TestPropertyNoiseInvariance(t *testing.T) {
	e := newDefault(t)
	params := gopter.DefaultTestParametersWithSeed(20261130)
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	for i, tmpl := range familyTemplates() {
		props.Property(fmt.Sprintf("template %d %q", i, tmpl.Title), prop.ForAll(
			func(a, b noise) string {
				x, y := fill(tmpl, a.replacer()), fill(tmpl, b.replacer())
				fx, fy := e.Extract(x), e.Extract(y)
				if fx != fy {
					return fmt.Sprintf("%q -> %s\n%q -> %s", x.Text+" | "+x.Title, fx, y.Text+" | "+y.Title, fy)
				}
				if fx.IsZero() {
					return "empty fingerprint: the template proves nothing"
				}
				return ""
			},
			noiseGen(), noiseGen(),
		))
	}
	props.TestingRun(t)
}

// TestPropertyByteSetsAreContainsAny is an equivalence: hasByteIn over each
// byte set Template uses says what strings.ContainsAny says over the set's
// characters, on any string (ASCII, other Unicode, invalid UTF-8).
func TestPropertyByteSetsAreContainsAny(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(20261204)
	params.MinSuccessfulTests = 500
	props := gopter.NewProperties(params)
	sets := []struct {
		chars string
		set   *byteSet
	}{{partSeparators, &partSeparatorSet}, {",;", &listSeparators}, {"[]()", &brackets}}
	text := gen.OneGenOf(
		gen.AnyString(),
		gen.RegexMatch(`^[a-z0-9\-_./@#\[\](),;:=é\x{2028}]{0,12}$`),
		gen.SliceOf(gen.UInt8()).Map(func(b []uint8) string { return string(b) }),
	)
	for _, s := range sets {
		props.Property(fmt.Sprintf("set %q", s.chars), prop.ForAll(
			func(v string) bool { return hasByteIn(v, s.set) == strings.ContainsAny(v, s.chars) },
			text,
		))
	}
	props.TestingRun(t)
}

// TestPropertyMatcherFindsLiterals is an equivalence: the prefilter
// automaton reports set g for a string exactly when the string contains one
// of set g's literals (strings.Contains), with 16-bit transitions and, past
// 32,767 states, 32-bit ones.
func TestPropertyMatcherFindsLiterals(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(20261204)
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	word := gen.RegexMatch(`^[a-d:<>_]{1,4}$`)
	sets := gen.SliceOfN(6, gen.SliceOfN(3, word))
	text := gen.RegexMatch(`^[a-e:<>_ ]{0,40}$`)
	check := func(m *matcher, sets [][]string, s string) bool {
		found := make([]uint64, m.words)
		m.scan(s, found)
		for g, set := range sets {
			want := false
			for _, l := range set {
				want = want || strings.Contains(s, l)
			}
			if got := found[g/64]&(1<<(g%64)) != 0; got != want {
				return false
			}
		}
		return true
	}
	props.Property("16-bit transitions", prop.ForAll(func(sets [][]string, s string) bool {
		m := newMatcher(sets)
		return m.next16 != nil && check(m, sets, s)
	}, sets, text))
	// Enough long literals to pass 32,767 states.
	var big [][]string
	for i := range 8000 {
		big = append(big, []string{fmt.Sprintf("%014d", i*7919)})
	}
	wide := newMatcher(big)
	if wide.next32 == nil {
		t.Fatalf("%d states: want 32-bit transitions", len(wide.outAt)-1)
	}
	props.Property("32-bit transitions", prop.ForAll(func(i, j int) bool {
		s := fmt.Sprintf("x%014d %014d7", i*7919, j)
		return check(wide, big, s)
	}, gen.IntRange(0, 8100), gen.IntRange(0, 70_000_000)))
	props.TestingRun(t)
}
