package sender

import "testing"

// Action groups of Kibana's rule types map to severities by their last
// part; recovered is resolved.
func TestKibanaSeverityAndRecovery(t *testing.T) {
	sev := mapped("kibana").Severity
	for raw, want := range map[string]string{"metrics.threshold.fired": "high", "logs.threshold.fired": "high",
		"metrics.inventory_threshold.warning": "medium", "slo.burnRate.alert": "critical", "recovered": "info", "query matched": "high"} {
		if got := string(sev(raw)); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
	v, _ := Parse([]byte(`{"rule": {"id": "r-1", "name": "CPU"}, "alert": {"id": "web-1", "actionGroup": "recovered"}, "date": "2024-01-02T03:04:05Z"}`))
	if !mapped("kibana").Match(v) {
		t.Fatal("not matched")
	}
	events, _ := mapped("kibana").Map(v)
	if e := events[0]; e.Status != "resolved" || e.Rule != "r-1" || e.Host != "web-1" || e.ID != "kb-r-1/web-1/2024-01-02T03:04:05Z" {
		t.Errorf("%+v", e)
	}
}
