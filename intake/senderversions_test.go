package intake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
)

// readFixture reads a sender fixture as a file with the options given.
func readFixture(t *testing.T, dir, name string, opts Options) []Record {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(senderFixtures, dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, string(body), opts)
}

// onlyAlert returns the one alert of recs, failing the test otherwise.
func onlyAlert(t *testing.T, recs []Record) openrecall.Alert {
	t.Helper()
	if len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("want one alert, got %d records: %+v", len(recs), recs)
	}
	return recs[0].Alert
}

// TestGrafanaLegacy: Grafana's legacy alerting notification is Grafana's
// wherever Grafana's webhooks are read — detected (a file, a JSON Lines
// line, POST /api/v1/alerts) and at Grafana's endpoint (FormatAlertmanager,
// which /api/v1/alerts/grafana reads) — and its state is its status: ok
// resolved, paused and pending notices, alerting and no_data firing. An
// object with an alerts array is a webhook, whatever else it holds.
func TestGrafanaLegacy(t *testing.T) {
	for _, format := range []Format{FormatAuto, FormatAlertmanager} {
		a := onlyAlert(t, readFixture(t, "grafana", "legacy_alerting_zulip.json", Options{Format: format}))
		if a.Sender != "grafana" || a.Rule != "Test rule" || a.Status != openrecall.StatusFiring || a.Episode {
			t.Errorf("%s: sender %q rule %q status %q episode %v", format, a.Sender, a.Rule, a.Status, a.Episode)
		}
	}
	tests := []struct{ state, want string }{
		{"alerting", openrecall.StatusFiring}, {"no_data", openrecall.StatusFiring}, {"ok", openrecall.StatusResolved},
		{"paused", openrecall.StatusNotice}, {"pending", openrecall.StatusNotice}, {"OK", openrecall.StatusResolved},
	}
	for _, tt := range tests {
		body := `{"ruleId": 7, "ruleName": "API latency", "ruleUrl": "http://grafana/d/x", "state": "` + tt.state +
			`", "evalMatches": [{"metric": "p99", "value": 2.4, "tags": {"service": "api"}}], "tags": {"service": "api", "severity": "critical"}, "message": "p99 above 2s"}`
		a := onlyAlert(t, readAll(t, body, Options{Format: FormatAlertmanager}))
		if a.Status != tt.want || a.Service != "api" || a.Severity != openrecall.SeverityCritical || a.Title != "API latency" {
			t.Errorf("state %s: status %q service %q severity %q title %q, want %s, api, critical, API latency", tt.state, a.Status, a.Service, a.Severity, a.Title, tt.want)
		}
		if !strings.Contains(a.Text, `p99 {"service":"api"}: 2.4`) {
			t.Errorf("state %s: text %q lacks the evaluated series", tt.state, a.Text)
		}
	}
	// A Grafana rule state without a rule is no legacy notification.
	recs := readAll(t, `{"state": "alerting", "ruleUrl": "http://grafana/d/x", "title": "disk full"}`, Options{})
	if a := onlyAlert(t, recs); a.Sender == "grafana" {
		t.Errorf("an object without ruleName or ruleId read as Grafana's")
	}
	if recs := readAll(t, `{"state": "alerting", "ruleUrl": "x"}`, Options{Format: FormatAlertmanager}); len(recs) != 1 || recs[0].Err == nil {
		t.Errorf("at Grafana's endpoint, an object that is neither a webhook nor a legacy notification: %+v, want rejected", recs)
	}
}

// TestGraylogLegacy: Graylog's legacy HTTP alarm callback is Graylog's,
// detected and forced, one alert per firing of a condition; a check result
// that did not trigger (which Graylog does not send) is a resolution.
func TestGraylogLegacy(t *testing.T) {
	for _, format := range []Format{FormatAuto, Format("graylog")} {
		a := onlyAlert(t, readFixture(t, "graylog", "legacy-nginx-5xx-1.json", Options{Format: format}))
		if a.Sender != "graylog" || a.Rule != "Too many 5xx responses" || a.Service != "nginx production" || a.Source != "web-1" || !a.Episode {
			t.Errorf("%s: sender %q rule %q service %q host %q episode %v", format, a.Sender, a.Rule, a.Service, a.Source, a.Episode)
		}
	}
	body, err := os.ReadFile(filepath.Join(senderFixtures, "graylog", "legacy-nginx-5xx-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	resolved := strings.Replace(string(body), `"triggered": true`, `"triggered": false`, 1)
	if a := onlyAlert(t, readAll(t, resolved, Options{})); a.Status != openrecall.StatusResolved || a.Sender != "graylog" {
		t.Errorf("triggered false: sender %q status %q, want graylog resolved", a.Sender, a.Status)
	}
}

// TestPagerDutyWebhookVersions: one incident has one id, title, service,
// severity and identity whichever webhook version sent it — a v3 event and
// a v2 or v1 message carrying the same facts read alike — and each message
// of a v1 or v2 webhook is one alert.
func TestPagerDutyWebhookVersions(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	v3 := onlyAlert(t, readFixture(t, "pagerduty-webhook", "triggered_v3.json", Options{}))
	// The incident of triggered_v3.json, as a v2 and a v1 webhook state it.
	v2 := map[string]any{"messages": []any{map[string]any{
		"event": "incident.trigger", "id": "69a7ced0-a2cd-11e7-a799-22000a15839c", "created_on": "2021-06-04T13:35:29Z",
		"incident": map[string]any{"id": "PFQZPSY", "incident_number": 9, "title": "Test Incident 3", "status": "triggered",
			"urgency": "high", "service": map[string]any{"id": "PA2P440", "name": "pig208", "summary": "pig208"},
			"html_url": "https://pig208.pagerduty.com/incidents/PFQZPSY"},
	}}}
	v1 := map[string]any{"messages": []any{map[string]any{
		"type": "incident.trigger", "id": "44df6240-af12-11e4-8e1e-22000ae31361", "created_on": "2021-06-04T13:35:29Z",
		"data": map[string]any{"incident": map[string]any{"id": "PFQZPSY", "incident_number": 9, "status": "triggered", "urgency": "high",
			"trigger_summary_data": map[string]any{"subject": "Test Incident 3"}, "service": map[string]any{"id": "PA2P440", "name": "pig208"}}},
	}}}
	for name, payload := range map[string]any{"v2": v2, "v1": v1} {
		body, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []Format{FormatAuto, Format("pagerduty-webhook")} {
			a := onlyAlert(t, readAll(t, string(body), Options{Format: format}))
			if a.Sender != v3.Sender || a.ID != v3.ID || a.Title != v3.Title || a.Service != v3.Service || a.Severity != v3.Severity ||
				a.Status != v3.Status || a.Rule != v3.Rule || ex.Identify(a) != ex.Identify(v3) {
				t.Errorf("%s (%s): sender %q id %q title %q service %q severity %q status %q identity %v; v3 reads %q %q %q %q %q %q %v",
					name, format, a.Sender, a.ID, a.Title, a.Service, a.Severity, a.Status, ex.Identify(a),
					v3.Sender, v3.ID, v3.Title, v3.Service, v3.Severity, v3.Status, ex.Identify(v3))
			}
		}
	}
	recs := readFixture(t, "pagerduty-webhook", "acknowledge_v1.json", Options{})
	if len(recs) != 2 || recs[0].Alert.Status != openrecall.StatusNotice || recs[1].Alert.Status != openrecall.StatusAcknowledged ||
		recs[0].Alert.ID == recs[1].Alert.ID || recs[1].Alert.ID != "pdw-PO1XIJ5" {
		t.Errorf("v1 assign and acknowledge: %+v, want a notice and the incident acknowledged", rows(recs))
	}
	events := map[string]string{"incident.unacknowledge": openrecall.StatusFiring, "incident.escalate": openrecall.StatusNotice,
		"incident.delegate": openrecall.StatusNotice, "incident.annotate": openrecall.StatusNotice, "incident.assign": openrecall.StatusNotice}
	for ev, want := range events {
		body := `{"messages": [{"event": "` + ev + `", "id": "m-1", "incident": {"id": "PX1", "title": "Disk full", "service": {"name": "db"}}}]}`
		if a := onlyAlert(t, readAll(t, body, Options{})); a.Status != want || a.Sender != "pagerduty-webhook" {
			t.Errorf("%s: sender %q status %q, want %s", ev, a.Sender, a.Status, want)
		}
	}
}
