package intake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestNestedTooDeep: JSON nested deeper than encoding/json's limit is
// rejected as nested too deep, with the record's position and the byte
// where the limit was passed — not as "unexpected character" (issue 33,
// item 10; fails without the fix). A value nested exactly to the limit is
// read.
func TestNestedTooDeep(t *testing.T) {
	nest := func(n int) string {
		return `{"title":"deep","data":` + strings.Repeat(`{"a":`, n-1) + "1" + strings.Repeat("}", n-1) + "}"
	}
	tests := []struct {
		name, in, pos string
	}{
		{"object", nest(maxJSONDepth + 5), "line 1"},
		{"array in an object", `{"title":"x","a":` + strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1) + "}", "line 1"},
		{"second line", `{"title":"ok"}` + "\n" + nest(maxJSONDepth+1), "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := readAll(t, tt.in, Options{})
			last := recs[len(recs)-1]
			if last.Err == nil {
				t.Fatalf("read as an alert: %+v", last.Alert)
			}
			if got := last.Err.Position.String(); got != tt.pos {
				t.Errorf("position %q, want %q", got, tt.pos)
			}
			if r := last.Err.Reason; !strings.Contains(r, "nested deeper than 10000 levels") || !strings.Contains(r, "at byte ") || strings.Contains(r, "unexpected character") {
				t.Errorf("reason %q, want nested too deep at a byte", r)
			}
		})
	}
	if recs := readAll(t, nest(maxJSONDepth-1), Options{}); len(recs) != 1 || recs[0].Err != nil {
		t.Errorf("a value nested to the limit: %+v", recs)
	}
}

// fixtureWithout reads a sender fixture as a JSON object and deletes the
// members at the dotted paths (each step an object key).
func fixtureWithout(t *testing.T, sender, name string, paths ...string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(senderFixtures, sender, name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		m := v
		for _, k := range parts[:len(parts)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("%s/%s has no object at %s", sender, name, k)
			}
			m = next
		}
		if _, ok := m[parts[len(parts)-1]]; !ok {
			t.Fatalf("%s/%s has no %s", sender, name, p)
		}
		delete(m, parts[len(parts)-1])
	}
	return v
}

// readOne reads a payload that must give one alert; format, when not
// empty, names its sender (as POST /api/v1/alerts/{sender} does).
func readOne(t *testing.T, v any, format ...Format) openrecall.Alert {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var opts Options
	if len(format) > 0 {
		opts.Format = format[0]
	}
	recs := readAll(t, string(body), opts)
	if len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("read as %d records: %+v", len(recs), recs)
	}
	return recs[0].Alert
}

// TestMissingSenderIDIsNoConstant: a Sentry, Graylog or PagerDuty webhooks
// v3 payload without its event id, and a Splunk ES notable without sid,
// get the payload's hash as id: two different alerts never share it (each
// after the first was answered duplicate and never triaged: "sentry-",
// "graylog-", "pdw-", and for Splunk ES a content hash that left out the
// result object), and a redelivery of one still does. Issue 33, item 2;
// fails without the fix.
func TestMissingSenderIDIsNoConstant(t *testing.T) {
	tests := []struct {
		sender, a, b string
		paths        []string
	}{
		{"sentry", "issue_alert_docs.json", "issue_alert-other.json", []string{"data.event.event_id"}},
		{"graylog", "ssh-failed-logins-bastion-1.json", "queue-1-backlog.json", []string{"event.id"}},
		{"pagerduty-webhook", "disk-full-db-7.json", "replication-lag-db-7.json", []string{"event.data.id"}},
		{"splunk-es", "brute-force-webhook-web-1.json", "brute-force-webhook-web-2.json", []string{"sid"}},
	}
	for _, tt := range tests {
		t.Run(tt.sender, func(t *testing.T) {
			// Posted to the sender's endpoint: a Splunk ES notable without
			// sid is no longer recognised by its shape.
			a := readOne(t, fixtureWithout(t, tt.sender, tt.a, tt.paths...), Format(tt.sender))
			b := readOne(t, fixtureWithout(t, tt.sender, tt.b, tt.paths...), Format(tt.sender))
			if a.Sender != tt.sender || b.Sender != tt.sender {
				t.Fatalf("read by %q and %q, want %s", a.Sender, b.Sender, tt.sender)
			}
			if a.ID == b.ID {
				t.Errorf("%s and %s without %v share the id %q", tt.a, tt.b, tt.paths, a.ID)
			}
			if !strings.HasPrefix(a.ID, "h-") || a.Episode {
				t.Errorf("id %q (episode %v), want the payload's hash", a.ID, a.Episode)
			}
			if again := readOne(t, fixtureWithout(t, tt.sender, tt.a, tt.paths...), Format(tt.sender)); again.ID != a.ID {
				t.Errorf("redelivered: id %q, first %q", again.ID, a.ID)
			}
		})
	}
}

// TestAlertmanagerIDIsNotTheSentFingerprint: a harmless alert sent with a
// critical alert's fingerprint and start gets an id of its own — the
// critical one is no longer answered as its duplicate — and the fingerprint
// as sent is kept; the same alert redelivered (another fingerprint,
// annotations, endsAt, resolved) keeps its id. Issue 33, item 2; fails
// without the fix.
func TestAlertmanagerIDIsNotTheSentFingerprint(t *testing.T) {
	webhook := func(labels, fp, summary, status string) string {
		return `{"version":"4","status":"` + status + `","receiver":"r","groupKey":"g","alerts":[{"status":"` + status + `","labels":` + labels +
			`,"annotations":{"summary":"` + summary + `"},"startsAt":"2026-11-30T03:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"` + fp + `"}]}`
	}
	critical := readOne(t, json.RawMessage(webhook(`{"alertname":"DatabaseDown","severity":"critical"}`, "c0ffee0000000001", "database down", "firing")))
	harmless := readOne(t, json.RawMessage(webhook(`{"alertname":"Watchdog","severity":"info"}`, "c0ffee0000000001", "all is well", "firing")))
	if critical.ID == harmless.ID {
		t.Errorf("a harmless alert with the critical one's fingerprint shares its id %q", critical.ID)
	}
	if harmless.SentFingerprint != "c0ffee0000000001" {
		t.Errorf("sent fingerprint kept as %q", harmless.SentFingerprint)
	}
	again := readOne(t, json.RawMessage(webhook(`{"severity":"critical","alertname":"DatabaseDown"}`, "ffff", "database down again", "resolved")))
	if again.ID != critical.ID {
		t.Errorf("redelivered: id %q, first %q", again.ID, critical.ID)
	}
	prom := readOne(t, json.RawMessage(`[{"labels":{"alertname":"DatabaseDown","severity":"critical"},"startsAt":"2026-11-30T03:00:00Z"}]`))
	if prom.ID != critical.ID {
		t.Errorf("posted by Prometheus: id %q, Alertmanager's webhook %q", prom.ID, critical.ID)
	}
}

// TestAlertmanagerOptionalFieldOfAnotherType: an Alertmanager, Grafana or
// Prometheus alert is not rejected for an optional field of an unexpected
// type (DESIGN §3): a fingerprint that is a number is kept as its text,
// annotations that are no object are left out, an endsAt or generatorURL
// of another type is ignored. Issue 33, item 10; fails without the fix.
func TestAlertmanagerOptionalFieldOfAnotherType(t *testing.T) {
	item := `"status":"firing","labels":{"alertname":"DiskFull","instance":"db-1"},"startsAt":"2026-11-30T03:00:00Z"`
	tests := []struct{ name, in, fp string }{
		{"fingerprint number", `{"version":"4","status":"firing","alerts":[{` + item + `,"fingerprint":123}]}`, "123"},
		{"annotations string", `{"version":"4","status":"firing","alerts":[{` + item + `,"annotations":"str","fingerprint":"abc"}]}`, "abc"},
		{"endsAt object", `{"version":"4","status":"firing","alerts":[{` + item + `,"endsAt":{"a":1}}]}`, ""},
		{"version number", `{"version":4,"status":"firing","receiver":"r","alerts":[{` + item + `}]}`, ""},
		{"grafana", `{"version":"1","orgId":1,"status":"firing","alerts":[{` + item + `,"annotations":["x"],"fingerprint":false,"silenceURL":"u"}]}`, "false"},
		{"prometheus", `[{"labels":{"alertname":"DiskFull","instance":"db-1"},"startsAt":"2026-11-30T03:00:00Z","annotations":"str","endsAt":5.5e99,"generatorURL":7}]`, ""},
	}
	var id string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := readOne(t, json.RawMessage(tt.in))
			if a.Title != "DiskFull" || a.SentFingerprint != tt.fp {
				t.Errorf("title %q, sent fingerprint %q; want DiskFull, %q", a.Title, a.SentFingerprint, tt.fp)
			}
			if id == "" {
				id = a.ID
			} else if a.ID != id {
				t.Errorf("id %q, want %q (the same labels and startsAt)", a.ID, id)
			}
		})
	}
}

// TestPagerDutyWithoutDedupKey: two PagerDuty Events v2 triggers without a
// dedup_key that differ only in a field the reading leaves out (client,
// links) get different ids; the same event sent again the same id.
// Fails without the fix (their content hash was equal).
func TestPagerDutyWithoutDedupKey(t *testing.T) {
	event := func(client string) json.RawMessage {
		return json.RawMessage(`{"routing_key":"r","event_action":"trigger","client":"` + client + `","links":[{"href":"https://` + client + `"}],"payload":{"summary":"Disk full on db-1","source":"db-1","severity":"error"}}`)
	}
	a, b := readOne(t, event("monitor-a")), readOne(t, event("monitor-b"))
	if a.ID == b.ID {
		t.Errorf("two events without dedup_key share the id %q", a.ID)
	}
	if again := readOne(t, event("monitor-a")); again.ID != a.ID {
		t.Errorf("sent again: id %q, first %q", again.ID, a.ID)
	}
}
