package sender

import (
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func oneEvent(t *testing.T, s Sender, body string) Event {
	t.Helper()
	v := mustParse(t, body)
	if !s.Match(v) {
		t.Fatalf("%s does not match %s", s.Name, body)
	}
	events, err := s.Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("%s: %d events, %v", s.Name, len(events), err)
	}
	return events[0]
}

// The product's own alert object, and objects sharing one key with a
// sender, are no sender's payload.
func TestMineMatchNotOwnObject(t *testing.T) {
	for _, body := range []string{
		`{"id":"a1","title":"Disk full","text":"x","labels":{"service":"api"},"severity":"critical","status":"firing","timestamp":"2024-01-01T00:00:00Z"}`,
		`{"title":"x","last_updated":"1733930378000"}`,
		`{"title":"x","incident_id":12}`,
		`{"incidentId":"x","rule":"r","severity":"Critical"}`,
		`{"sid":"1","search_name":"s"}`,
		`{"rule_name":"r","urgency":"high"}`,
	} {
		v := mustParse(t, body)
		for _, s := range []Sender{mapped("datadog"), mapped("newrelic"), mapped("signalfx"), mapped("splunk"), mapped("splunk-es")} {
			if s.Match(v) {
				t.Errorf("%s matches %s", s.Name, body)
			}
		}
	}
}

func TestDatadogDefaultPayloadAndPlaceholders(t *testing.T) {
	e := oneEvent(t, mapped("datadog"), `{"body":"%%%\nCPU high\n\n@webhook-x\n[[Monitor Status](https://app.datadoghq.com/monitors/42?group=host%3Aa)]\n%%%",
		"last_updated":"1733930378000","event_type":"query_alert_monitor","title":"[P1] [Recovered on {host:a}] CPU high","date":"1733930378000",
		"org":{"id":"1","name":"o"},"id":"99","tags":"$TAGS","alert_id":"$ALERT_ID"}`)
	if e.Rule != "42" || e.ID != "dd-99" || e.Severity != "P1" || e.Status != openrecall.StatusResolved {
		t.Errorf("rule %q id %q severity %q status %q", e.Rule, e.ID, e.Severity, e.Status)
	}
	if e.Service != "" || len(e.Labels["tags"]) != 0 {
		t.Errorf("an unrendered $TAGS gave service %q", e.Service)
	}
	if e.Timestamp.IsZero() {
		t.Error("last_updated not read")
	}
	if strings.Contains(e.Text, "%%%") || strings.Contains(e.Text, "@webhook") || !strings.HasPrefix(e.Text, "CPU high") {
		t.Errorf("text %q", e.Text)
	}
}

func TestDatadogNoMonitorIDFallsBackToName(t *testing.T) {
	e := oneEvent(t, mapped("datadog"), `{"title":"[Triggered on {host:a}] Queue backlog","alert_transition":"Triggered","last_updated":"1","tags":["service:queue","env:staging"]}`)
	if e.Rule != "Queue backlog" || e.Service != "queue" || e.Environment != "staging" || e.Severity != "Triggered" {
		t.Errorf("%+v", e)
	}
	if got := mapped("datadog").Severity("4"); got != openrecall.SeverityLow {
		t.Errorf("priority 4 reads %s", got)
	}
}

// A Datadog Security Signal is datadog-signal's, a monitor notification
// datadog's: detection tries datadog first, and neither reads the other's.
func TestDatadogToldApartFromSignals(t *testing.T) {
	monitors, signals := mapped("datadog"), mapped("datadog-signal")
	for _, body := range fixtureBodies(t, "datadog-signal") {
		if monitors.Match(mustParse(t, string(body))) {
			t.Errorf("datadog matches the signal %s", body)
		}
	}
	for _, body := range fixtureBodies(t, "datadog") {
		if signals.Match(mustParse(t, string(body))) {
			t.Errorf("datadog-signal matches the notification %s", body)
		}
	}
}
