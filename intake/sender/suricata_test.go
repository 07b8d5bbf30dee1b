package sender

import (
	"strings"
	"testing"
)

func TestSuricataNonAlertRecords(t *testing.T) {
	s := mapped("suricata")
	for _, body := range []string{
		`{"timestamp":"2017-06-06T13:52:59.583853+0000","flow_id":1180931744387312,"in_iface":"eth0","event_type":"flow","src_ip":"10.0.0.1","src_port":5000,"dest_ip":"10.0.0.2","dest_port":80,"proto":"TCP","flow":{"pkts_toserver":3}}`,
		`{"timestamp":"2017-06-06T13:52:59.583853+0000","flow_id":1180931744387312,"event_type":"dns","src_ip":"10.0.0.1","dest_ip":"10.0.0.2","proto":"UDP","dns":{"type":"query","rrname":"example.com"}}`,
		`{"timestamp":"2017-06-06T13:52:59.583853+0000","event_type":"stats","stats":{"uptime":30}}`,
	} {
		v, err := Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Match(v) {
			t.Errorf("%s: not recognised as EVE", body)
		}
		if events, err := s.Map(v); err == nil || len(events) != 0 || !strings.Contains(err.Error(), "no alert") {
			t.Errorf("%s: Map = %v, %v; want no events and an error saying it is no alert", body, events, err)
		}
	}
}

func TestSuricataLenient(t *testing.T) {
	// A gid absent and a severity of the wrong type: the alert is read, the
	// severity is absent.
	v, _ := Parse([]byte(`{"timestamp":"2017-06-06T13:52:59.583853+0000","event_type":"alert","flow_id":"7","alert":{"signature_id":"2001219","signature":"ET SCAN Potential SSH Scan","severity":{"x":1}}}`))
	if !mapped("suricata").Match(v) {
		t.Fatal("not recognised")
	}
	events, err := mapped("suricata").Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("Map = %v, %v", events, err)
	}
	e := events[0]
	if e.Rule != "1:2001219" || e.Severity != "" || e.Timestamp.IsZero() {
		t.Errorf("rule %q severity %q time %v", e.Rule, e.Severity, e.Timestamp)
	}
	for raw, want := range map[string]string{"1": "high", "2": "medium", "3": "low", "4": "info", "9": "info", "0": "unknown", "x": "unknown"} {
		if got := string(mapped("suricata").Severity(raw)); got != want {
			t.Errorf("severity %q = %s, want %s", raw, got, want)
		}
	}
}

// TestSuricataWithoutSignatureIDHasNoID is the probe's finding (scripts/probe,
// field mutations): an EVE alert without alert.signature_id got the id
// "suricata-FLOW-1:-TIME", so two records differing elsewhere were answered
// duplicate. Without it the record has no sender id (the payload's hash
// stands) and no rule.
func TestSuricataWithoutSignatureIDHasNoID(t *testing.T) {
	v := mustParse(t, `{"event_type":"alert","flow_id":987,"timestamp":"2024-02-20T11:25:02.201334+0000","alert":{"gid":1,"signature":"ET DNS Query to a *.dyndns. Domain","severity":2}}`)
	es, err := mapped("suricata").Map(v)
	if err != nil || len(es) != 1 {
		t.Fatalf("read: %v, %d events", err, len(es))
	}
	if es[0].ID != "" || es[0].Rule != "" {
		t.Fatalf("id %q, rule %q: want neither without alert.signature_id", es[0].ID, es[0].Rule)
	}
}
