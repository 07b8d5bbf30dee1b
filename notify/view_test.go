package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// pagedAt is the fixtures' alert time.
var pagedAt = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// pagedResult is a result left to a person: a real incident the strong
// model judged, with two memories that voted the other way and dead ends.
func pagedResult() openrecall.Result {
	return openrecall.Result{
		AnalysisID: "b1-7", Outcome: openrecall.ResultTriaged,
		Alert: openrecall.Alert{ID: "am-1", Title: "ledger-sync-worker timeout calling ledger API",
			Severity: openrecall.SeverityHigh, Service: "ledger-sync", Environment: "prod", Sender: "alertmanager",
			Status: openrecall.StatusFiring, Timestamp: pagedAt,
			Labels: map[string]string{"alertname": "LedgerSyncTimeout", "service": "ledger-sync", "instance": "worker-3:9100",
				"severity": "warning", "kubernetes.io/pod": "ledger-7f9", "empty": ""},
			Annotations: map[string]string{"summary": "ledger-sync timeouts", "runbook_url": "https://runbooks.example.com/ledger"}},
		Identity: openrecall.Identity{Rule: "LedgerSyncTimeout", Service: "ledger-sync"},
		Decision: openrecall.DecisionReal,
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionEscalated, Supporting: []string{"inc_a", "inc_b"},
			EscalationReason: "memory split: 2 known_benign, 1 real"},
		Matches: []openrecall.Match{
			{Incident: openrecall.Incident{ID: "inc_c", Decision: openrecall.DecisionReal, DeadEnds: []string{"checked the ledger status page"}}, Score: 0.9},
			{Incident: openrecall.Incident{ID: "inc_a", Decision: openrecall.DecisionKnownBenign, Analyst: "alice",
				Note: "nightly batch\nretries", DeadEnds: []string{"restarted ledger-sync-worker — no effect", "raised the timeout"}}, Score: 1},
			{Incident: openrecall.Incident{ID: "inc_b", Decision: openrecall.DecisionKnownBenign,
				DeadEnds: []string{"Restarted  ledger-sync-worker — no effect"}}, Score: 0.95},
		},
		Analysis: &openrecall.Analysis{Decision: openrecall.DecisionReal, Confidence: 0.82,
			Summary: "high severity in prod and memory split: treat it as real."},
		Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Outcome: openrecall.OutcomeOK},
			{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Outcome: openrecall.OutcomeAccepted}},
		Cost: 1_250_000,
	}
}

// pagedTrigger is the trigger notification of pagedResult.
func pagedTrigger() Notification {
	return Notification{Kind: KindTrigger, Key: "ep-ledger-1", ID: "n-1", Result: pagedResult(),
		ReviewURL: "https://openrecall.example.com/review/b1-7", At: pagedAt.Add(time.Minute)}
}

// recoveryOf is the resolve notification of an episode: the recovery's own
// result (not triaged: no decision) and the trigger's delivery state.
func recoveryOf(trigger Notification, prior map[string]string) Notification {
	r := trigger.Result
	r.Outcome, r.Decision, r.Analysis, r.Triage, r.Matches, r.Steps = openrecall.ResultResolved, "", nil, openrecall.TriageResult{}, nil, nil
	r.Alert.Status = openrecall.StatusResolved
	r.Alert.ID = "am-1-resolved"
	return Notification{Kind: KindResolve, Key: trigger.Key, ID: "n-2", Result: r, Prior: prior,
		ReviewURL: "https://openrecall.example.com/review/b1-9", At: pagedAt.Add(30 * time.Minute)}
}

// decisionOf is the update notification of a person's decision.
func decisionOf(trigger Notification, prior map[string]string) Notification {
	return Notification{Kind: KindUpdate, Key: trigger.Key, ID: "n-3", Result: trigger.Result, Prior: prior,
		Decision:  &Decided{Decision: openrecall.DecisionReal, Analyst: "bob", Note: "ledger API rate limit changed"},
		ReviewURL: trigger.ReviewURL, At: pagedAt.Add(10 * time.Minute)}
}

func TestViewOf(t *testing.T) {
	a := viewOf(pagedTrigger())
	want := view{
		SummaryLine: "ledger-sync-worker timeout calling ledger API", Severity: openrecall.SeverityHigh,
		Decision: "real", Route: RouteStrong, Conclusion: "high severity in prod and memory split: treat it as real.",
		Confidence: 0.82, Identity: "LedgerSyncTimeout @ ledger-sync", Service: "ledger-sync", Environment: "prod",
		Host: "worker-3:9100", Sender: "alertmanager",
		// What the messages (Slack, Teams, mail, the webhook) read of it.
		Kind: KindTrigger, Title: "ledger-sync-worker timeout calling ledger API", Headline: "Judged a real incident", Verb: "real",
		Reason: "memory split: 2 known_benign, 1 real", AnalysisSummary: "high severity in prod and memory split: treat it as real.",
		AwaitsPerson: true, Proposed: openrecall.DecisionReal,
		Memories: []vote{{ID: "inc_a", Decision: "known_benign", Score: 1, Analyst: "alice", Note: "nightly batch retries"},
			{ID: "inc_b", Decision: "known_benign", Score: 0.95}},
		// Supporting memories' dead ends first, each once (case and white
		// space folded), then the other matches'.
		DeadEnds:  []string{"restarted ledger-sync-worker — no effect", "raised the timeout", "checked the ledger status page"},
		Cost:      1_250_000,
		ReviewURL: "https://openrecall.example.com/review/b1-7",
	}
	if d := cmp.Diff(want, a); d != "" {
		t.Errorf("viewOf (-want +got):\n%s", d)
	}
	if got := a.details()["cost"]; got != "$0.001250" {
		t.Errorf("cost = %v, want $0.001250 (integer nano-dollars shown as dollars)", got)
	}
	if got := a.details()["cost_nano_usd"]; got != int64(1_250_000) {
		t.Errorf("cost_nano_usd = %v", got)
	}
	text := ogDescription(a)
	for _, want := range []string{"Decision: real (strong)", "Reason: high severity", "- inc_a known_benign 1.00 by alice: nightly batch retries",
		"- raised the timeout", "Cost: $0.001250", "Review: https://openrecall.example.com/review/b1-7"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestViewReasonAndSummaryFallbacks(t *testing.T) {
	r := pagedResult()
	r.Analysis = nil
	r.Steps = append(r.Steps, openrecall.RouteStep{Step: openrecall.StepAnalysis, EscalationReason: "cheap answer gate-failed: no evidence; escalated to a person"})
	if got := decisionReason(r); got != "cheap answer gate-failed: no evidence; escalated to a person" {
		t.Errorf("reason without an analysis = %q, want the last step's escalation reason", got)
	}
	r.Steps = nil
	if got := decisionReason(r); got != "memory split: 2 known_benign, 1 real" {
		t.Errorf("reason = %q, want triage's escalation reason", got)
	}
	r.Alert.Title, r.Alert.Text = "", "\n  disk full on db-1\nmore"
	if got := summaryLine(r); got != "disk full on db-1" {
		t.Errorf("summary without a title = %q", got)
	}
	r.Alert.Text = ""
	if got := summaryLine(r); got != "LedgerSyncTimeout @ ledger-sync" {
		t.Errorf("summary without title or text = %q", got)
	}
	// A review link that is not http(s) is never shown.
	n := pagedTrigger()
	n.ReviewURL = "javascript:alert(1)"
	if got := viewOf(n).ReviewURL; got != "" {
		t.Errorf("ReviewURL = %q, want none", got)
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 4, "abc…"},
		{"ééééé", 3, "éé…"},
		{"x", 0, ""},
		{"bad\xffutf8", 20, "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := clip(tt.s, tt.n); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
