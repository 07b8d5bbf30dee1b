package intake

import (
	"fmt"
	"strings"
	"testing"
)

// grafanaWebhook is a Grafana webhook of n alerts, each as Grafana writes
// one (silenceURL, dashboardURL, panelURL, values, valueString), their
// labels told apart by an instance.
func grafanaWebhook(n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"status":"firing","labels":{"alertname":"Disk almost full","grafana_folder":"infra","instance":"db-%d","team":"blue","severity":"warning"},`+
			`"annotations":{"summary":"Disk /data 91%% full on db-%d","description":"The disk /data of db-%d is above 90%% for 5 minutes.","runbook_url":"https://runbooks.example/disk"},`+
			`"startsAt":"2026-01-05T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"https://grafana.example/alerting/grafana/abc/view?orgId=1",`+
			`"fingerprint":"0a0b0c0d0e0f%04x","silenceURL":"https://grafana.example/alerting/silence/new?alertmanager=grafana&matcher=instance%%3Ddb-%d",`+
			`"dashboardURL":"https://grafana.example/d/disk?orgId=1","panelURL":"https://grafana.example/d/disk?orgId=1&viewPanel=2",`+
			`"values":{"B":91.2,"C":1},"valueString":"[ var='B' labels={instance=db-%d} value=91.2 ], [ var='C' labels={instance=db-%d} value=1 ]"}`, i, i, i, i, i, i, i)
	}
	return []byte(`{"receiver":"openrecall","status":"firing","orgId":1,"alerts":[` + strings.Join(items, ",") +
		`],"groupLabels":{"alertname":"Disk almost full"},"commonLabels":{"alertname":"Disk almost full","team":"blue"},"commonAnnotations":{},` +
		`"externalURL":"https://grafana.example/","version":"1","groupKey":"{}:{alertname=\"Disk almost full\"}","truncatedAlerts":0,` +
		`"title":"[FIRING] Disk almost full","state":"alerting","message":"**Firing**"}`)
}

// BenchmarkGrafanaWebhook is the cost per alert of reading a Grafana
// webhook of 1 and of 100 alerts by intake's streamed reader (the fast
// path, whose items Grafana's own members send to the general item
// reader) and by Grafana's mapping (MappedGrafanaWebhook, held equal to it
// by P171). The mapping's cost per alert grows with the webhook: each
// event's PayloadID hashes the whole payload.
func BenchmarkGrafanaWebhook(b *testing.B) {
	for _, alerts := range []int{1, 100} {
		body := grafanaWebhook(alerts)
		b.Run(fmt.Sprintf("fast_path/%d", alerts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				recs, err := ParseBytes(body, Options{})
				if err != nil || len(recs) != alerts || recs[0].Alert.Sender != "grafana" {
					b.Fatalf("%d records, %v", len(recs), err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(alerts*b.N), "ns/alert")
		})
		b.Run(fmt.Sprintf("mapping/%d", alerts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := MappedGrafanaWebhook(body, false)
				if err != nil || len(got) != alerts {
					b.Fatalf("%d alerts, %v", len(got), err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(alerts*b.N), "ns/alert")
		})
	}
}
