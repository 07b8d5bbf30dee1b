package sender

import (
	"strings"
	"testing"
)

func TestSuricataNonAlertRecords(t *testing.T) {
	s := suricata()
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
	if !suricata().Match(v) {
		t.Fatal("not recognised")
	}
	events, err := suricata().Map(v)
	if err != nil || len(events) != 1 {
		t.Fatalf("Map = %v, %v", events, err)
	}
	e := events[0]
	if e.Rule != "1:2001219" || e.Severity != "" || e.Timestamp.IsZero() {
		t.Errorf("rule %q severity %q time %v", e.Rule, e.Severity, e.Timestamp)
	}
	for raw, want := range map[string]string{"1": "high", "2": "medium", "3": "low", "4": "info", "9": "info", "0": "unknown", "x": "unknown"} {
		if got := string(suricataSeverity(raw)); got != want {
			t.Errorf("severity %q = %s, want %s", raw, got, want)
		}
	}
}
