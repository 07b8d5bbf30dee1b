package notify_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

var receivers = map[string]bool{"pager": true, "slack": true, "sec": true, "nowhere": true}

func parse(t *testing.T, conf string) (*notify.Route, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		t.Fatal(err)
	}
	return notify.ParseRoute(doc.Content[0].Content[1], receivers)
}

// A tree in the shape README documents: what is left to a person pages,
// a detection goes to security as well, what memory closed goes nowhere.
const tree = `route:
  receiver: slack
  routes:
    - matchers: ['route=~"bypass|exception|group"']
      receiver: nowhere
    - matchers: ['attack_pattern!=""']
      receiver: sec
      continue: true
    - matchers: ['decision="escalated"', 'severity=~"critical|high"']
      receiver: pager
`

// subjectWith is the subject whose fields are fields, by name.
func subjectWith(t *testing.T, fields map[string]string) notify.Subject {
	t.Helper()
	var s notify.Subject
	for name, v := range fields {
		if !s.Fields.Set(name, v) {
			t.Fatalf("%q is not a field", name)
		}
	}
	return s
}

func TestRouteReceivers(t *testing.T) {
	root, err := parse(t, tree)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"closed by memory", map[string]string{"route": "bypass", "decision": "known_benign", "severity": "critical"}, "nowhere via routes[0]"},
		{"escalated and critical", map[string]string{"route": "strong", "decision": "escalated", "severity": "critical"}, "pager via routes[2]"},
		{"escalated but low: the default", map[string]string{"route": "strong", "decision": "escalated", "severity": "low"}, "slack via the default route"},
		{"a detection: security, then on", map[string]string{"route": "strong", "decision": "escalated", "severity": "high", "attack_pattern": "credential_access"},
			`sec via routes[1]|pager via routes[2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, m := range root.Receivers(subjectWith(t, tt.fields)) {
				where := m.Path
				if where == "" {
					where = "the default route"
				}
				got = append(got, m.Receiver+" via "+where)
			}
			if strings.Join(got, "|") != tt.want {
				t.Errorf("receivers %q, want %q", got, tt.want)
			}
		})
	}
	lines := root.Explain(notify.Subject{Fields: notify.SubjectFields{Decision: "escalated", Severity: "high"}})
	if len(lines) != 1 || lines[0] != `pager via routes[2] (decision="escalated", severity=~"critical|high")` {
		t.Errorf("explain %q", lines)
	}
}

// A label the alert carries is matched by its name, a field by its.
func TestRouteMatchesLabels(t *testing.T) {
	root, err := parse(t, "route:\n  receiver: slack\n  routes:\n    - matchers: [team=\"db\"]\n      receiver: pager\n")
	if err != nil {
		t.Fatal(err)
	}
	got := root.Receivers(notify.Subject{Labels: map[string]string{"team": "db"}})
	if len(got) != 1 || got[0].Receiver != "pager" {
		t.Errorf("label team=db: %+v", got)
	}
}

func TestParseRouteErrorsNameTheLine(t *testing.T) {
	tests := map[string]struct{ conf, want string }{
		"unknown receiver": {"route:\n  receiver: slack\n  routes:\n    - receiver: pagerduty\n",
			`line 4: route.routes[0].receiver: no receiver "pagerduty" is configured`},
		"bad matcher": {"route:\n  receiver: slack\n  routes:\n    - matchers:\n        - 'severity=\"high\"'\n        - 'severity~\"x\"'\n",
			`line 6: route.routes[0].matchers[1]: matcher "severity~\"x\""`},
		"bad regexp": {"route:\n  receiver: slack\n  routes:\n    - matchers: ['service=~\"(\"']\n",
			`line 4: route.routes[0].matchers[0]: matcher "service=~\"(\""`},
		"unknown key": {"route:\n  receiver: slack\n  routes:\n    - receiver: pager\n      match: {a: b}\n",
			`line 5: route.routes[0]: unknown key "match"`},
		"root without receiver": {"route:\n  routes: []\n", `line 2: route.receiver: the root route names the default receiver (receiver: "" for no one)`},
		"root with matchers":    {"route:\n  receiver: slack\n  matchers: ['a=\"b\"']\n", `line 2: route: the root route matches every result`},
		"deep":                  {"route:\n  receiver: slack\n  routes:\n    - routes:\n        - receiver: x\n", `line 5: route.routes[0].routes[0].receiver: no receiver "x"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := parse(t, tt.conf)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want it to begin %q", err, tt.want)
			}
		})
	}
}

func TestParseMatcher(t *testing.T) {
	for in, want := range map[string]string{
		`severity="critical"`:   `severity="critical"`,
		`severity = critical`:   `severity="critical"`,
		`service!="db"`:         `service!="db"`,
		`service=~"check.*"`:    `service=~"check.*"`,
		`team!~ "db|sre"`:       `team!~"db|sre"`,
		`attack_pattern!=""`:    `attack_pattern!=""`,
		`note="a \"quoted\" b"`: `note="a \"quoted\" b"`,
	} {
		m, err := notify.ParseMatcher(in)
		if err != nil || m.String() != want {
			t.Errorf("ParseMatcher(%q) = %v, %v; want %s", in, m, err, want)
		}
	}
	for _, bad := range []string{"", "severity", `="x"`, `1a="x"`, `a-b="x"`, `a="x`, `a=~"("`} {
		if _, err := notify.ParseMatcher(bad); err == nil {
			t.Errorf("ParseMatcher(%q) accepted", bad)
		}
	}
}

func TestRouteOf(t *testing.T) {
	strong := []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong}}
	cheap := []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierCheap}}
	triaged := openrecall.ResultTriaged
	tests := map[string]struct {
		r    openrecall.Result
		want string
	}{
		"not triaged":   {openrecall.Result{Outcome: "resolved"}, notify.RouteNone},
		"bypass":        {openrecall.Result{Outcome: triaged, Bypassed: true}, notify.RouteBypass},
		"exception":     {openrecall.Result{Outcome: triaged, Exception: &openrecall.ExceptionRef{}}, notify.RouteException},
		"group member":  {openrecall.Result{Outcome: triaged, Group: &openrecall.GroupRef{Role: openrecall.GroupRoleMember}}, notify.RouteGroup},
		"unanalysed":    {openrecall.Result{Outcome: triaged, EscalatedWithoutAnalysis: true}, notify.RouteUnanalysed},
		"cheap":         {openrecall.Result{Outcome: triaged, Steps: cheap}, notify.RouteCheap},
		"strong":        {openrecall.Result{Outcome: triaged, Steps: strong}, notify.RouteStrong},
		"a group head":  {openrecall.Result{Outcome: triaged, Group: &openrecall.GroupRef{Role: openrecall.GroupRoleHead}, Steps: strong}, notify.RouteStrong},
		"skipped model": {openrecall.Result{Outcome: triaged, Steps: []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Skipped: true}}}, notify.RouteUnanalysed},
	}
	for name, tt := range tests {
		if got := notify.RouteOf(tt.r); got != tt.want {
			t.Errorf("%s: %q, want %q", name, got, tt.want)
		}
	}
}
