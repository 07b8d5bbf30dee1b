package notify

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
)

// PagingReceiver names the one receiver of DefaultPagingRoute.
const PagingReceiver = "page"

// formatAlertmanager is intake's format of an Alertmanager or Grafana
// webhook's alerts[] items (intake.FormatAlertmanager).
const formatAlertmanager = "alertmanager"

// DefaultPagingRoute returns the route pages are counted with when the
// configuration has no notify route: a result a person must look at —
// decided real, or escalated (openrecall could not close it) — pages
// receiver PagingReceiver, and nothing else notifies anyone. It is the
// route a team would give its pager, and what server.webhook_url means.
// Each call returns a new tree.
func DefaultPagingRoute() *Route {
	value := string(openrecall.DecisionEscalated) + "|" + string(openrecall.DecisionReal)
	m := Matcher{Name: FieldDecision, Op: OpRegexp, Value: value, re: regexp.MustCompile("^(?:" + value + ")$")}
	return &Route{Routes: []*Route{{Receiver: PagingReceiver, Matchers: []Matcher{m}}}}
}

// ReadRoute reads the route tree of the notify: mapping at node with the
// configured receivers' names alone: no receiver is built and no secret
// read, so the tree can be walked where the secrets are not present (to
// count pages, say). It returns nil when the section names no route. Its
// errors are ParseRoute's, which name the line.
func ReadRoute(node *yaml.Node) (*Route, error) {
	if node == nil || node.Kind == 0 || isNull(node) {
		return nil, nil
	}
	if node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: notify: want a mapping (external_url, max_age, concurrency, backoff, receivers, route)", node.Line)
	}
	receivers, route := mappingValue(node, "receivers"), mappingValue(node, "route")
	if route == nil {
		return nil, nil
	}
	names := map[string]bool{}
	if receivers != nil && receivers.Kind == yaml.SequenceNode {
		for _, r := range receivers.Content {
			if r.Kind != yaml.MappingNode {
				continue
			}
			if n := mappingValue(r, "name"); n != nil && n.Kind == yaml.ScalarNode {
				names[strings.TrimSpace(n.Value)] = true
			}
		}
	}
	return ParseRoute(route, names)
}

// mappingValue returns the value of key in mapping node (an alias
// resolved), nil when key is absent or null.
func mappingValue(node *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value != key {
			continue
		}
		v := node.Content[i+1]
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		if v == nil || isNull(v) {
			return nil
		}
		return v
	}
	return nil
}

// Pages are the notifications a team gets for a run of results, without
// openrecall and with it.
type Pages struct {
	// Firings counts the triaged results: each a firing a sender sent.
	Firings int `json:"firings"`
	// Without counts the pages the firings would make without openrecall:
	// one per firing, except that the firings of one Alertmanager
	// notification (one webhook body: one notification group) make one.
	Without int `json:"without"`
	// With counts the pages they make with openrecall: the firings the
	// route tree sends to at least one receiver, each one page — openrecall
	// notifies per alert episode, so the firings of one Alertmanager
	// notification that it sends on are as many pages as firings.
	With int `json:"with"`
	// Notifications counts the trigger intents the route tree writes for
	// the firings: one per firing and receiver it reaches (Intents).
	Notifications int `json:"notifications"`
}

// Avoided returns the pages openrecall spared: Without − With.
func (p Pages) Avoided() int { return p.Without - p.With }

// AvoidedPercent returns Avoided as a percentage of Without, 0 when
// Without is 0.
func (p Pages) AvoidedPercent() float64 {
	if p.Without == 0 {
		return 0
	}
	return 100 * float64(p.Avoided()) / float64(p.Without)
}

// String renders p for people: "without openrecall 40, with 12 (avoided
// 28, 70.0%)".
func (p Pages) String() string {
	return fmt.Sprintf("without openrecall %d, with %d (avoided %d, %.1f%%)", p.Without, p.With, p.Avoided(), p.AvoidedPercent())
}

// PageCounter adds results up into Pages over a route tree. Results are
// added in input order, as analyze emits them and eval replays them: the
// firings of one Alertmanager notification then come one after another
// (its alerts[] items, in index order), and the counter remembers only
// the notification of the last firing. A PageCounter is not safe for
// concurrent use.
type PageCounter struct {
	intents func(r openrecall.Result, episode string) []openrecall.Intent
	pages   Pages
	// last is the position of the last firing, grouped when it was an
	// Alertmanager notification's.
	last    openrecall.Position
	grouped bool
}

// NewPageCounter returns a counter of the pages root sends (nil sends
// none: every page is avoided).
func NewPageCounter(root *Route) *PageCounter {
	return &PageCounter{intents: Intents(root, nil)}
}

// Add counts r: a triaged result is a firing; any other (a recovery, an
// acknowledgement, a notice, a rejected record) pages no one, with or
// without openrecall, and is not counted.
func (c *PageCounter) Add(r openrecall.Result) {
	if r.Outcome != openrecall.ResultTriaged {
		return
	}
	c.pages.Firings++
	reached := false
	for _, in := range c.intents(r, "") {
		if in.Kind == openrecall.IntentTrigger {
			c.pages.Notifications++
			reached = true
		}
	}
	if !c.sameNotification(r) {
		c.pages.Without++
	}
	if reached {
		c.pages.With++
	}
	c.last, c.grouped = r.Position, r.Alert.Format == formatAlertmanager
}

// sameNotification reports whether firing r came in the Alertmanager
// notification of the last firing: both are a webhook's alerts[] items
// (intake's Alertmanager format) at the same source and line, r after it.
// An index that does not grow starts another webhook on the same line (a
// one-line JSON array of webhooks).
func (c *PageCounter) sameNotification(r openrecall.Result) bool {
	p := r.Position
	return c.grouped && r.Alert.Format == formatAlertmanager &&
		p.Source == c.last.Source && p.Line == c.last.Line && p.Index > c.last.Index
}

// Pages returns the pages counted so far.
func (c *PageCounter) Pages() Pages { return c.pages }
