package sender

import "testing"

// Pending is firing, maintenance a notice, up resolved; the product's own
// alert object and a Kibana body are not Uptime Kuma's.
func TestUptimeKumaStatus(t *testing.T) {
	s := mapped("uptime-kuma")
	for status, want := range map[string]string{"0": "firing", "1": "resolved", "2": "firing", "3": "notice"} {
		v, err := Parse([]byte(`{"heartbeat": {"monitorID": 1, "status": ` + status + `, "time": "2024-01-02 03:04:05.000", "msg": "m"}, "monitor": {"id": 1, "name": "Site"}, "msg": "[Site] m"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Match(v) {
			t.Fatal("not matched")
		}
		events, _ := s.Map(v)
		if got := events[0].Status; got != want {
			t.Errorf("status %s: %s, want %s", status, got, want)
		}
	}
	for _, body := range []string{
		`{"id": "1", "title": "t", "text": "x", "severity": "high", "labels": {"a": "b"}}`,
		`{"rule": {"id": "r", "name": "n"}, "alert": {"id": "a", "actionGroup": "threshold met"}}`,
		`{"msg": "only a message"}`,
	} {
		v, _ := Parse([]byte(body))
		if s.Match(v) || mapped("coralogix").Match(v) || mapped("netdata").Match(v) || mapped("elastic-security").Match(v) {
			t.Errorf("%s matched by one of this file's neighbours", body)
		}
	}
}
