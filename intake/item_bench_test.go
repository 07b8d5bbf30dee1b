package intake

import "testing"

// BenchmarkFastItem is the one-pass read of one alerts[] item of the
// common shape, alone.
func BenchmarkFastItem(b *testing.B) {
	raw := []byte(`{"status":"firing","labels":{"alertname":"KubePodCrashLooping","severity":"critical","namespace":"payments","pod":"api-7f9c-x2","container":"api","job":"kube-state-metrics","env":"prod"},"annotations":{"summary":"Pod payments/api-7f9c-x2 is crash looping","description":"Pod payments/api-7f9c-x2 (api) is in waiting state (reason: \"CrashLoopBackOff\").","runbook_url":"https://runbooks.example/KubePodCrashLooping"},"startsAt":"2026-01-05T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus:9090/graph?g0.expr=x","fingerprint":"5f1a2b3c4d5e6f70"}`)
	var it amItem
	b.ReportAllocs()
	for b.Loop() {
		if !fastItem(raw, &it) {
			b.Fatal("not the fast path")
		}
	}
}
