package sender

import (
	"strconv"
	"testing"
)

// TestSenders3Strict holds the adapters of PagerDuty webhooks v3, Sentry,
// Zabbix, Dynatrace and Graylog to their own shapes: the product's own
// alert object, a PagerDuty Events v2 event and a generic object with a
// status are none of theirs.
func TestSenders3Strict(t *testing.T) {
	others := []string{
		`{"id":"a1","title":"Disk full","text":"x","labels":{"service":"api"},"severity":"high","status":"firing"}`,
		`{"routing_key":"k","event_action":"trigger","payload":{"summary":"Disk full","source":"db-1","severity":"critical"}}`,
		`{"status":"OK","severity":"High","host":"db-1","message":"fine"}`,
		`{"event":{"type":"x"},"status":"PROBLEM"}`,
	}
	for _, s := range []Sender{mapped("pagerduty-webhook"), mapped("sentry"), mapped("zabbix"), mapped("dynatrace"), mapped("graylog")} {
		for _, raw := range others {
			v, err := Parse([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			if s.Match(v) {
				t.Errorf("%s matches %s", s.Name, raw)
			}
		}
	}
}

// TestZabbixHostMacro: a trigger name rendered with its host reads as the
// template's trigger, the same on every host; a host name shorter than 3
// bytes is not written back.
func TestZabbixHostMacro(t *testing.T) {
	z, ok := Lookup("zabbix")
	if !ok {
		t.Fatal("no zabbix sender")
	}
	rule := func(trigger, host string) string {
		t.Helper()
		v, err := Parse([]byte(`{"trigger_name": ` + strconv.Quote(trigger) + `, "host_name": ` + strconv.Quote(host) + `, "trigger_status": "PROBLEM"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !z.Match(v) {
			t.Fatalf("zabbix does not recognise %s", v.Compact())
		}
		events, err := z.Map(v)
		if err != nil || len(events) != 1 {
			t.Fatalf("Map = %v, %v", events, err)
		}
		return events[0].Rule
	}
	for _, h := range []string{"web-01", "web-02"} {
		got := rule("Zabbix agent on "+h+" is unreachable for 5 minutes", h)
		if want := "Zabbix agent on {HOST.NAME} is unreachable for 5 minutes"; got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if got := rule("Interface eth0: Link down", "db"); got != "Interface eth0: Link down" {
		t.Errorf("a short host name rewrote %q", got)
	}
	if got := rule("Disk full on é1", "é1"); got != "Disk full on {HOST.NAME}" {
		t.Errorf("a host name of 3 bytes (2 characters) was not written back: %q", got)
	}
}
