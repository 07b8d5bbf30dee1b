package notify

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Route is one node of the route tree: the receiver its matches notify,
// the matchers a result must satisfy, whether its siblings are tried after
// it matched (Continue), and its children. The root has no matchers.
type Route struct {
	Receiver string
	Matchers []Matcher
	Continue bool
	Routes   []*Route
	// Line is the route's line in the configuration (0 when built in Go).
	Line int
}

// Match is one route a result reached: its receiver and the route's path
// from the root, as the explanation of why ("routes[1].routes[0]", "" for
// the root).
type Match struct {
	Receiver string
	Path     string
	Route    *Route
}

// Receivers returns the receivers s reaches, each once, in the order the
// walk first reached it (see the package comment), with the first route
// that reached it. A receiver named "" is no receiver: a route may send a
// result nowhere on purpose.
func (r *Route) Receivers(s Subject) []Match {
	var out []Match
	seen := map[string]bool{}
	for _, m := range r.walk(s, "", r.Receiver) {
		if m.Receiver == "" || seen[m.Receiver] {
			continue
		}
		seen[m.Receiver] = true
		out = append(out, m)
	}
	return out
}

// walk returns the matches of s under r (reached at path, inheriting
// receiver from its parent).
func (r *Route) walk(s Subject, path, inherited string) []Match {
	for _, m := range r.Matchers {
		if !m.Matches(s) {
			return nil
		}
	}
	receiver := r.Receiver
	if receiver == "" {
		receiver = inherited
	}
	var all []Match
	for i, c := range r.Routes {
		// Runs per alert: one concatenation, no fmt.
		var p string
		if path == "" {
			p = "routes[" + strconv.Itoa(i) + "]"
		} else {
			p = path + ".routes[" + strconv.Itoa(i) + "]"
		}
		got := c.walk(s, p, receiver)
		all = append(all, got...)
		if got != nil && !c.Continue {
			break
		}
	}
	if len(all) == 0 {
		all = []Match{{Receiver: receiver, Path: path, Route: r}}
	}
	return all
}

// Explain renders why s reaches each receiver, a line each:
// `pagerduty via routes[0] (severity="critical", decision="escalated")`.
func (r *Route) Explain(s Subject) []string {
	var lines []string
	for _, m := range r.Receivers(s) {
		where := "the default route"
		if m.Path != "" {
			where = m.Path
		}
		var ms []string
		for _, x := range m.Route.Matchers {
			ms = append(ms, x.String())
		}
		line := m.Receiver + " via " + where
		if len(ms) > 0 {
			line += " (" + strings.Join(ms, ", ") + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// routeYAML is a route as the configuration writes it.
type routeYAML struct {
	Receiver string      `yaml:"receiver"`
	Matchers []string    `yaml:"matchers"`
	Continue bool        `yaml:"continue"`
	Routes   []yaml.Node `yaml:"routes"`
}

// ParseRoute reads the route tree at node (the configuration's route:
// mapping). receivers names the configured receivers: a route naming
// another is an error. Every error names the line and the route's path
// ("line 14: route.routes[1]: matcher …"). The root must say its
// receiver, the default — "" sends what no child route takes to no one,
// which Alertmanager's tree cannot say — and have no matchers.
func ParseRoute(node *yaml.Node, receivers map[string]bool) (*Route, error) {
	if node == nil || node.Kind == 0 {
		return nil, errors.New("route: missing")
	}
	root, err := parseRoute(node, "route", receivers)
	if err != nil {
		return nil, err
	}
	switch {
	case len(root.Matchers) > 0:
		return nil, fmt.Errorf("line %d: route: the root route matches every result: it takes no matchers", root.Line)
	case root.Continue:
		return nil, fmt.Errorf("line %d: route: the root route has no siblings: continue means nothing there", root.Line)
	}
	return root, nil
}

func parseRoute(node *yaml.Node, path string, receivers map[string]bool) (*Route, error) {
	if node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s: want a mapping (receiver, matchers, continue, routes)", node.Line, path)
	}
	if err := knownKeys(node, path, "receiver", "matchers", "continue", "routes"); err != nil {
		return nil, err
	}
	var y routeYAML
	if err := node.Decode(&y); err != nil {
		return nil, fmt.Errorf("line %d: %s: %v", node.Line, path, err)
	}
	r := &Route{Receiver: strings.TrimSpace(y.Receiver), Continue: y.Continue, Line: node.Line}
	if r.Receiver != "" && !receivers[r.Receiver] {
		return nil, fmt.Errorf("line %d: %s.receiver: no receiver %q is configured", lineOf(node, "receiver"), path, r.Receiver)
	}
	if path == "route" && !hasKey(node, "receiver") {
		return nil, fmt.Errorf(`line %d: route.receiver: the root route names the default receiver (receiver: "" for no one)`, node.Line)
	}
	for i, s := range y.Matchers {
		m, err := ParseMatcher(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s.matchers[%d]: %v", itemLine(node, "matchers", i), path, i, err)
		}
		r.Matchers = append(r.Matchers, m)
	}
	for i := range y.Routes {
		c, err := parseRoute(&y.Routes[i], fmt.Sprintf("%s.routes[%d]", path, i), receivers)
		if err != nil {
			return nil, err
		}
		r.Routes = append(r.Routes, c)
	}
	return r, nil
}

// knownKeys refuses a key of mapping node that is not one of keys.
func knownKeys(node *yaml.Node, path string, keys ...string) error {
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i]
		found := false
		for _, want := range keys {
			if k.Value == want {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("line %d: %s: unknown key %q (want %s)", k.Line, path, k.Value, strings.Join(keys, ", "))
		}
	}
	return nil
}

// lineOf returns the line of key's value in mapping node (the node's own
// line when absent).
func lineOf(node *yaml.Node, key string) int {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1].Line
		}
	}
	return node.Line
}

// hasKey reports whether mapping node has key.
func hasKey(node *yaml.Node, key string) bool {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return true
		}
	}
	return false
}

// itemLine returns the line of item i of the sequence under key.
func itemLine(node *yaml.Node, key string, i int) int {
	for j := 0; j+1 < len(node.Content); j += 2 {
		if node.Content[j].Value == key {
			if seq := node.Content[j+1]; seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
				return seq.Content[i].Line
			}
			return node.Content[j+1].Line
		}
	}
	return node.Line
}
