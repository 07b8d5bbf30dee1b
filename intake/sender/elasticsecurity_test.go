package sender

import "testing"

func mustParseElasticSecurity(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An Elasticsearch hit of a detection alert reads as the alert, with its
// document id when the alert has no uuid; a source object or a string
// never rejects it; the kibana adapter leaves it alone.
func TestElasticSecurityHitAndSource(t *testing.T) {
	s := mapped("elastic-security")
	for _, body := range []string{
		`{"_id": "abc", "_source": {"signal": {"status": "open", "rule": {"name": "R", "rule_id": "r-1", "severity": "high"}}, "source": {"ip": "10.0.0.1"}}}`,
		`{"_id": "abc", "_source": {"signal": {"status": "open", "rule": {"name": "R", "rule_id": "r-1", "severity": "high"}}, "source": "a string"}}`,
	} {
		v := mustParseElasticSecurity(t, body)
		if !s.Match(v) || mapped("kibana").Match(v) {
			t.Fatalf("%s: elastic-security %v, kibana %v", body, s.Match(v), mapped("kibana").Match(v))
		}
		events, err := s.Map(v)
		if err != nil || len(events) != 1 {
			t.Fatal(events, err)
		}
		if e := events[0]; e.ID != "es-abc" || e.Rule != "r-1" || e.Title != "R" || e.Status != "firing" {
			t.Errorf("%+v", e)
		}
	}
}

// Without a severity the risk score is read in Elastic's bands.
func TestElasticSecurityRiskScore(t *testing.T) {
	sev := mapped("elastic-security").Severity
	for raw, want := range map[string]string{"21": "low", "47": "medium", "73": "high", "99": "critical", "High": "high", "101": "unknown"} {
		if got := string(sev(raw)); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
}
