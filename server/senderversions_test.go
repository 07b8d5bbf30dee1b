package server_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestSenderVersions: a sender's older payloads are that sender's, at its
// named endpoint (DESIGN §3, "Versions matter"). Grafana's legacy alerting
// notification at /api/v1/alerts/grafana, Graylog's legacy HTTP alarm
// callback at /api/v1/alerts/graylog and PagerDuty's v2 and v1 webhooks at
// /api/v1/alerts/pagerduty-webhook are posted to a real loopback server:
// each is answered 202 and stored as its sender's alert, with the status
// and identity the sender's payload states; a recovery (and an
// acknowledgement, and a v1 assignment notice) is recorded, never triaged.
//
// Before these versions were read (checked on the tree before the change),
// the Grafana and Graylog POSTs were answered 400 ("the object is not an
// Alertmanager webhook (it needs an alerts array)"; "Graylog: empty alert:
// no title, text or labels"), and the PagerDuty v2 and v1 webhooks were
// answered 202 but read as a v3 event they are not: one notice titled
// "PagerDuty" with a payload hash for its id and no identity, whose
// trigger was recorded and never triaged, and a v1 webhook of two
// messages was one alert.
func TestSenderVersions(t *testing.T) {
	e := newEnv(t, options{})
	type want struct {
		status, id, title string
		identity          openrecall.Identity
		outcome           string
	}
	tests := []struct {
		name, path, fixture string
		want                []want
	}{
		{"grafana legacy alerting", "/api/v1/alerts/grafana", "grafana/legacy_alerting_zulip.json",
			[]want{{openrecall.StatusFiring, "", "Test rule", openrecall.Identity{Rule: "Test rule"}, openrecall.ResultTriaged}}},
		{"grafana legacy ok", "/api/v1/alerts/grafana", "grafana/legacy_ok_zulip.json",
			[]want{{openrecall.StatusResolved, "", "Test rule", openrecall.Identity{Rule: "Test rule"}, openrecall.ResultResolved}}},
		{"grafana legacy paused", "/api/v1/alerts/grafana", "grafana/legacy_paused_zulip.json",
			[]want{{openrecall.StatusNotice, "", "Test rule", openrecall.Identity{Rule: "Test rule"}, openrecall.ResultResolved}}},
		{"graylog legacy alarm callback", "/api/v1/alerts/graylog", "graylog/legacy-nginx-5xx-1.json",
			[]want{{openrecall.StatusFiring, "graylog-9b1f7c2e-4d3a-4e8b-a6f0-2c5d8e9b1a47/2018-03-05T14:03:11.902Z", "Too many 5xx responses",
				openrecall.Identity{Rule: "Too many 5xx responses", Service: "nginx production"}, openrecall.ResultTriaged}}},
		{"graylog legacy documentation sample", "/api/v1/alerts/graylog", "graylog/legacy_http_alarm_callback_docs.json",
			[]want{{openrecall.StatusFiring, "graylog-5e7a9c8d-9bb1-47b6-b8db-4a3a83a25e0c/2015-09-10T09:45:54.749Z",
				"Stream had 2 messages in the last 1 minutes with trigger condition more than 1 messages. (Current grace time: 1 minutes)",
				openrecall.Identity{Rule: "5e7a9c8d-9bb1-47b6-b8db-4a3a83a25e0c", Service: "test"}, openrecall.ResultTriaged}}},
		{"pagerduty v2 trigger", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/trigger_v2.json",
			[]want{{openrecall.StatusFiring, "pdw-PRORDTY", "My new incident", pdIdentity, openrecall.ResultTriaged}}},
		{"pagerduty v2 acknowledge", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/acknowledge_v2.json",
			[]want{{openrecall.StatusAcknowledged, "pdw-PRORDTY", "My new incident", pdIdentity, openrecall.ResultResolved}}},
		{"pagerduty v2 resolve", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/resolve_v2.json",
			[]want{{openrecall.StatusResolved, "pdw-PRORDTY", "My new incident", pdIdentity, openrecall.ResultResolved}}},
		{"pagerduty v1 trigger", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/trigger_v1.json",
			[]want{{openrecall.StatusFiring, "pdw-P140S4Y", "foo", openrecall.Identity{Rule: "foo", Service: "test service"}, openrecall.ResultTriaged}}},
		{"pagerduty v1 assign and acknowledge", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/acknowledge_v1.json",
			[]want{
				{openrecall.StatusNotice, "pdw-a710cfd0-af0d-11e4-8aca-f23c91739642", "PagerDuty incident.assign: It is on fire",
					openrecall.Identity{Rule: "pagerduty incident.assign: it is on fire", Service: "test service"}, openrecall.ResultResolved},
				{openrecall.StatusAcknowledged, "pdw-PO1XIJ5", "It is on fire", openrecall.Identity{Rule: "it is on fire", Service: "test service"}, openrecall.ResultResolved},
			}},
		{"pagerduty v1 resolve", "/api/v1/alerts/pagerduty-webhook", "pagerduty-webhook/resolved_v1.json",
			[]want{{openrecall.StatusResolved, "pdw-PO1XIJ5", "It is on fire", openrecall.Identity{Rule: "it is on fire", Service: "test service"}, openrecall.ResultResolved}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("../intake/testdata/senders", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			sender := filepath.Dir(tt.fixture)
			var acc accepted
			resp, b := e.do(http.MethodPost, tt.path, "", bytes.NewReader(body), nil, &acc)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("POST %s %s: %d %s, want 202", tt.path, tt.fixture, resp.StatusCode, b)
			}
			if acc.Accepted != len(tt.want) || len(acc.Analyses) != len(tt.want) {
				t.Fatalf("POST %s: %+v, want %d alerts", tt.path, acc, len(tt.want))
			}
			for i, w := range tt.want {
				sv := e.wait(acc.Analyses[i].AnalysisID, "")
				a := sv.Alert
				if a.Sender != sender || a.Status != w.status || a.Title != w.title || (w.id != "" && a.ID != w.id) {
					t.Errorf("alert %d: sender %q status %q title %q id %q, want %q %q %q %q", i, a.Sender, a.Status, a.Title, a.ID, sender, w.status, w.title, w.id)
				}
				if sv.Result == nil || sv.Result.Identity != w.identity || sv.Result.Outcome != w.outcome {
					t.Errorf("alert %d: result %+v, want identity %v and outcome %s", i, sv.Result, w.identity, w.outcome)
				}
			}
		})
	}
}

// pdIdentity is the identity of the incident of PagerDuty's v2 fixtures:
// its title's template at its service, as a v3 event of it reads.
var pdIdentity = openrecall.Identity{Rule: "my new incident", Service: "production xdb cluster"}
