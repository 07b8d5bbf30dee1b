package notify_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// TestIntents: a triaged result triggers each receiver its routes reach,
// with the episode's key; a recovery resolves the episode at every
// receiver (the store keeps those with its trigger); an acknowledgement, a
// notice or a rejection notifies no one; and a root route of receiver ""
// sends what no child takes to no one.
func TestIntents(t *testing.T) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(`route:
  receiver: ""
  routes:
    - receiver: pager
      matchers: ['decision=~"escalated|real"']
      continue: true
    - receiver: chat
      matchers: ['severity="critical"']
`), &node); err != nil {
		t.Fatal(err)
	}
	root, err := notify.ParseRoute(node.Content[0].Content[1], map[string]bool{"pager": true, "chat": true})
	if err != nil {
		t.Fatal(err)
	}
	intents := notify.Intents(root, []string{"pager", "chat"})
	res := func(outcome, status string, d openrecall.Decision, sev openrecall.Severity) openrecall.Result {
		return openrecall.Result{Outcome: outcome, Decision: d, Alert: openrecall.Alert{Status: status, Severity: sev}}
	}
	key := notify.EpisodeKey("serve-000007")
	tests := []struct {
		name string
		r    openrecall.Result
		want []openrecall.Intent
	}{
		{"escalated critical: both", res(openrecall.ResultTriaged, openrecall.StatusFiring, openrecall.DecisionEscalated, openrecall.SeverityCritical),
			[]openrecall.Intent{{Receiver: "pager", Kind: "trigger", Key: key}, {Receiver: "chat", Kind: "trigger", Key: key}}},
		{"real low: pager", res(openrecall.ResultTriaged, openrecall.StatusFiring, openrecall.DecisionReal, openrecall.SeverityLow),
			[]openrecall.Intent{{Receiver: "pager", Kind: "trigger", Key: key}}},
		{"benign low: no one (the root's receiver is \"\")", res(openrecall.ResultTriaged, openrecall.StatusFiring, openrecall.DecisionKnownBenign, openrecall.SeverityLow), nil},
		{"recovery: every receiver", res(openrecall.ResultResolved, openrecall.StatusResolved, "", openrecall.SeverityLow),
			[]openrecall.Intent{{Receiver: "pager", Kind: "resolve", Key: key}, {Receiver: "chat", Kind: "resolve", Key: key}}},
		{"acknowledgement: no one", res(openrecall.ResultResolved, openrecall.StatusAcknowledged, "", openrecall.SeverityLow), nil},
		{"notice: no one", res(openrecall.ResultResolved, openrecall.StatusNotice, "", openrecall.SeverityLow), nil},
		{"rejected: no one", res(openrecall.ResultRejected, "", "", ""), nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, intents(tt.r, "serve-000007")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := notify.Intents(nil, []string{"pager"})(tests[0].r, "e"); got != nil {
		t.Errorf("no route: %v", got)
	}
}
