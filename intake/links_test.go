package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/intake/sender"
)

// amWebhook is an Alertmanager webhook as Alertmanager writes it: its
// externalURL after its alerts. generator and runbook are the first
// item's generatorURL and runbook_url annotation.
func amWebhook(generator, runbook, external string) string {
	return fmt.Sprintf(`{"receiver":"openrecall","status":"firing","alerts":[`+
		`{"status":"firing","labels":{"alertname":"HighErrorRate","service":"checkout-api","severity":"critical"},`+
		`"annotations":{"summary":"5xx above 5%%","runbook_url":%q},"startsAt":"2026-11-30T03:42:06Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":%q,"fingerprint":"c91d997d55db7a73"},`+
		`{"status":"firing","labels":{"alertname":"HighErrorRate","service":"cart","severity":"critical"},`+
		`"annotations":{"summary":"5xx above 5%% on cart","dashboard_url":"https://grafana.example.com/d/cart"},"startsAt":"2026-11-30T03:42:07Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"","fingerprint":"c6129a3559d89b42"}],`+
		`"groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":%q,"version":"4","groupKey":"{}","truncatedAlerts":0}`,
		runbook, generator, external)
}

// linksOf returns each record's links, or its error.
func linksOf(recs []Record) []any {
	var out []any
	for _, r := range recs {
		if r.Err != nil {
			out = append(out, r.Err.Reason)
			continue
		}
		out = append(out, r.Alert.Links)
	}
	return out
}

// TestWebhookLinks: an Alertmanager webhook's links — each item's
// generatorURL, the runbook and dashboard its annotations name, and the
// webhook's externalURL, which Alertmanager writes after the alerts — are
// read alike by the streaming reader (fast and general item paths, pretty
// or on one line, members in any order) and inside an array; a
// javascript:, data:, relative or over-long URL is no link.
func TestWebhookLinks(t *testing.T) {
	good := amWebhook("http://prometheus.local:9090/graph?g0.expr=up", "https://runbooks.example/HighErrorRate", "http://127.0.0.1:9093")
	want := []any{
		map[string]string{
			openrecall.LinkSource: "http://prometheus.local:9090/graph?g0.expr=up", openrecall.LinkRunbook: "https://runbooks.example/HighErrorRate",
			openrecall.LinkAlertmanager: "http://127.0.0.1:9093",
		},
		map[string]string{openrecall.LinkDashboard: "https://grafana.example.com/d/cart", openrecall.LinkAlertmanager: "http://127.0.0.1:9093"},
	}
	hostile := amWebhook("javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>", "/relative")
	long := amWebhook("https://prometheus.local/"+strings.Repeat("x", openrecall.MaxLinkBytes), "//evil.example.com/rb", "JAVASCRIPT:alert(1)")
	wantNone := []any{map[string]string(nil), map[string]string{openrecall.LinkDashboard: "https://grafana.example.com/d/cart"}}
	for _, tt := range []struct {
		name, body string
		want       []any
	}{
		{"links", good, want},
		{"hostile", hostile, wantNone},
		{"too long", long, wantNone},
	} {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, []byte(tt.body), "", "  "); err != nil {
			t.Fatal(err)
		}
		reads := map[string]func() []Record{
			"reader": func() []Record { return readAll(t, tt.body, Options{}) },
			"pretty": func() []Record { return readAll(t, pretty.String(), Options{}) },
			"general": func() []Record {
				recs, err := ParseBytesGeneral([]byte(tt.body), Options{})
				if err != nil {
					t.Fatal(err)
				}
				return recs
			},
			"in an array": func() []Record { return readAll(t, "["+tt.body+"]", Options{}) },
			"keys sorted": func() []Record {
				// alerts first, then the members that make it a webhook
				var m map[string]any
				if err := json.Unmarshal([]byte(tt.body), &m); err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				return readAll(t, string(b), Options{})
			},
		}
		for how, read := range reads {
			if diff := cmp.Diff(tt.want, linksOf(read())); diff != "" {
				t.Errorf("%s, %s: links (-want +got):\n%s", tt.name, how, diff)
			}
		}
	}
}

// TestWebhookLinksHeld: the records of an Alertmanager webhook wait for
// its externalURL only up to the record limit, so memory stays bounded by
// it: past it they flow without the Alertmanager link. An externalURL
// that comes first needs no wait.
func TestWebhookLinksHeld(t *testing.T) {
	body := amWebhook("http://prometheus.local:9090/graph", "", "http://127.0.0.1:9093")
	recs := readAll(t, body, Options{MaxRecordBytes: 400})
	if len(recs) != 2 || recs[0].Err != nil || recs[1].Err != nil {
		t.Fatalf("records %+v", recs)
	}
	if _, ok := recs[0].Alert.Links[openrecall.LinkAlertmanager]; ok {
		t.Errorf("first item, read past the hold's limit: links %v, want no Alertmanager link", recs[0].Alert.Links)
	}
	if recs[0].Alert.Links[openrecall.LinkSource] != "http://prometheus.local:9090/graph" {
		t.Errorf("first item: links %v, want its generatorURL", recs[0].Alert.Links)
	}

	first := `{"externalURL":"http://am.example.com:9093","receiver":"r","status":"firing","alerts":[` +
		`{"status":"firing","labels":{"alertname":"A"},"startsAt":"2026-11-30T03:42:06Z"},` +
		`{"status":"firing","labels":{"alertname":"B"},"startsAt":"2026-11-30T03:42:06Z"}]}`
	for _, max := range []int{0, 100} {
		for i, rec := range readAll(t, first, Options{MaxRecordBytes: max}) {
			if rec.Err != nil || rec.Alert.Links[openrecall.LinkAlertmanager] != "http://am.example.com:9093" {
				t.Errorf("limit %d, item %d: %+v, want the Alertmanager link", max, i, rec)
			}
		}
	}
}

// TestLinksAreNoIdentity: two deliveries that differ only in their links
// are one alert — the same id, identity and Alert DNA.
func TestLinksAreNoIdentity(t *testing.T) {
	ex, err := fingerprint.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, a, b openrecall.Alert) {
		t.Helper()
		if len(a.Links) == 0 || cmp.Equal(a.Links, b.Links) {
			t.Fatalf("%s: links %v and %v: want two different sets", name, a.Links, b.Links)
		}
		if a.ID != b.ID {
			t.Errorf("%s: ids %s and %s differ", name, a.ID, b.ID)
		}
		if ia, ib := ex.Identify(a), ex.Identify(b); ia != ib {
			t.Errorf("%s: identities %v and %v differ", name, ia, ib)
		}
		if fa, fb := ex.Extract(a), ex.Extract(b); fa != fb {
			t.Errorf("%s: Alert DNA %v and %v differ", name, fa, fb)
		}
	}
	one := func(body string) openrecall.Alert {
		t.Helper()
		recs := readAll(t, body, Options{})
		if len(recs) == 0 || recs[0].Err != nil {
			t.Fatalf("records %+v", recs)
		}
		return recs[0].Alert
	}

	same("alertmanager",
		one(amWebhook("http://prometheus.local:9090/graph?g0.expr=up", "", "http://127.0.0.1:9093")),
		one(amWebhook("http://prometheus-2.local:9090/graph?g0.expr=up", "", "http://am-2.local:9093")))

	dd, err := os.ReadFile(filepath.Join(senderFixtures, "datadog", "cpu-high-web-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer
	if err := json.Compact(&other, bytes.Replace(dd, []byte("https://app.datadoghq.com/event/event?id="), []byte("https://app.datadoghq.eu/event/event?id="), 1)); err != nil {
		t.Fatal(err)
	}
	same("datadog", one(string(dd)), one(other.String()))

	// A sender's event without an id of its own: the content id.
	s, _ := sender.Lookup("datadog")
	ev := func(link string) openrecall.Alert {
		e := sender.Event{Title: "High CPU on api hosts", Service: "api", Rule: "51840021"}
		e.Link(openrecall.LinkSource, link)
		a, err := eventAlert(s, e, string(FormatJSON))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a.ID, "h-") {
			t.Fatalf("id %s: want the content id", a.ID)
		}
		return a
	}
	same("content id", ev("https://app.datadoghq.com/event/1"), ev("https://app.datadoghq.com/event/2"))
}

// TestSenderLinksDropped: a sender's link that is no http or https URL
// (a hostile payload's javascript:) is dropped at intake, whoever read it.
func TestSenderLinksDropped(t *testing.T) {
	s, _ := sender.Lookup("datadog")
	e := sender.Event{Title: "x", Links: map[string]string{openrecall.LinkSource: "javascript:alert(1)", openrecall.LinkRunbook: "https://wiki.example.com/rb"}}
	a, err := eventAlert(s, e, string(FormatJSON))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{openrecall.LinkRunbook: "https://wiki.example.com/rb"}, a.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}

	dd, err := os.ReadFile(filepath.Join(senderFixtures, "datadog", "cpu-high-web-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := bytes.Replace(dd, []byte(`"https://app.datadoghq.com/event/event?id=7312894401987012001"`), []byte(`"javascript:alert(1)//https://app.datadoghq.com/"`), 1)
	recs := readAll(t, string(hostile), Options{})
	if len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Alert.Links != nil {
		t.Errorf("links %v: want none", recs[0].Alert.Links)
	}
}
