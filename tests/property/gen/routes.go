package gen

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// RouteMatcher is one matcher of a generated route: a name of
// RouteLabelNames, an operator (=, !=, =~, !~) and a value of the name's
// pool (an equality value, or a regular expression for =~ and !~).
type RouteMatcher struct {
	Name, Op, Value int
}

// RouteNode is a generated route: its receiver (0 inherits its parent's,
// 1–3 name r1–r3), its matchers, continue, and its children.
type RouteNode struct {
	Receiver int
	Matchers []RouteMatcher
	Continue bool
	Routes   []RouteNode
}

// RouteCase is a route tree (its root sends to r0) and the labels of one
// result: one value index per RouteLabelNames name, 0 for none.
type RouteCase struct {
	Routes []RouteNode
	Labels [4]int
}

// RouteLabelNames are the names the generated matchers read: three of
// notify's fields and an alert label.
func RouteLabelNames() []string { return []string{"severity", "service", "decision", "team"} }

// routeValues are each name's values, "" first (no value).
var routeValues = [][]string{
	{"", "critical", "high", "low"},
	{"", "checkout", "db", "checkout-api"},
	{"", "escalated", "known_benign", "real"},
	{"", "sre", "db-oncall", "sec"},
}

// routeRegexps are each name's regular expressions.
var routeRegexps = [][]string{
	{"crit.*", "high|critical", ".*", ""},
	{"check.*", "db|checkout", ".+", "checkout"},
	{"esc.*", "known_benign|real", ".*", ""},
	{"s.*", "db-.*|sec", ".+", "sre"},
}

// RouteLabels returns the labels of c as name → value, none for 0.
func (c RouteCase) RouteLabels() map[string]string {
	out := map[string]string{}
	for i, v := range c.Labels {
		if v > 0 {
			out[RouteLabelNames()[i]] = routeValues[i][v]
		}
	}
	return out
}

// MatcherText renders m as Alertmanager writes it: name="value".
func (m RouteMatcher) MatcherText() string {
	ops := []string{"=", "!=", "=~", "!~"}
	v := routeValues[m.Name][m.Value]
	if m.Op >= 2 {
		v = routeRegexps[m.Name][m.Value]
	}
	return RouteLabelNames()[m.Name] + ops[m.Op] + strconv.Quote(v)
}

// YAML renders the tree as the route: mapping of a configuration (root
// receiver r0), indented by indent spaces.
func (c RouteCase) YAML(indent int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad + "route:\n" + pad + "  receiver: r0\n")
	writeRoutes(&b, c.Routes, indent+2)
	return b.String()
}

func writeRoutes(b *strings.Builder, routes []RouteNode, indent int) {
	if len(routes) == 0 {
		return
	}
	pad := strings.Repeat(" ", indent)
	b.WriteString(pad + "routes:\n")
	for _, r := range routes {
		b.WriteString(pad + "  - continue: " + strconv.FormatBool(r.Continue) + "\n")
		if r.Receiver > 0 {
			fmt.Fprintf(b, "%s    receiver: r%d\n", pad, r.Receiver)
		}
		if len(r.Matchers) > 0 {
			b.WriteString(pad + "    matchers:\n")
			for _, m := range r.Matchers {
				fmt.Fprintf(b, "%s      - %s\n", pad, strconv.Quote(m.MatcherText()))
			}
		}
		writeRoutes(b, r.Routes, indent+4)
	}
}

func routeMatcherGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(RouteMatcher{}), map[string]gopter.Gen{
		"Name":  gg.IntRange(0, 3),
		"Op":    gg.IntRange(0, 3),
		"Value": gg.IntRange(0, 3),
	})
}

func routeNodeGen(depth int) gopter.Gen {
	children := gg.Const([]RouteNode(nil))
	if depth > 0 {
		children = SliceUpTo(3, routeNodeGen(depth-1), reflect.TypeOf(RouteNode{}))
	}
	return gg.Struct(reflect.TypeOf(RouteNode{}), map[string]gopter.Gen{
		"Receiver": gg.IntRange(0, 3),
		"Matchers": SliceUpTo(2, routeMatcherGen(), reflect.TypeOf(RouteMatcher{})),
		"Continue": gg.Bool(),
		"Routes":   children,
	})
}

// RouteCaseGen generates route trees up to three levels below the root,
// up to three children each, and the labels of one result.
func RouteCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(RouteCase{}), map[string]gopter.Gen{
		"Routes": SliceUpTo(3, routeNodeGen(2), reflect.TypeOf(RouteNode{})),
		"Labels": gg.ArrayOfN(4, gg.IntRange(0, 3), reflect.TypeOf(0)),
	})
}

// ValidRouteCase reports whether c is a case RouteCaseGen may produce.
func ValidRouteCase(c RouteCase) error {
	var check func(rs []RouteNode, depth int) error
	check = func(rs []RouteNode, depth int) error {
		if len(rs) > 3 || (depth > 3 && len(rs) > 0) {
			return fmt.Errorf("%d routes at depth %d", len(rs), depth)
		}
		for _, r := range rs {
			if r.Receiver < 0 || r.Receiver > 3 || len(r.Matchers) > 2 {
				return fmt.Errorf("route %+v", r)
			}
			for _, m := range r.Matchers {
				if m.Name < 0 || m.Name > 3 || m.Op < 0 || m.Op > 3 || m.Value < 0 || m.Value > 3 {
					return fmt.Errorf("matcher %+v", m)
				}
			}
			if err := check(r.Routes, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, l := range c.Labels {
		if l < 0 || l > 3 {
			return fmt.Errorf("label index %d", l)
		}
	}
	return check(c.Routes, 1)
}
