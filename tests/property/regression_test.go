package property

import (
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/triage"
)

// TestRegressions holds a named regression test for each counterexample a
// property found, as a subtest named after the property's ID, so that
// `-run '/^P6_'` runs a property and its regressions. Each value is also
// pinned on its property (pbt.Found) and runs under every seed.
func TestRegressions(t *testing.T) {
	t.Run("P6_one_incident_id_on_two_decisions", regressionOneIncidentIDOnTwoDecisions)
	t.Run("P2_duration_in_a_duration_slot", regressionDurationInADurationSlot)
	t.Run("P27_foreign_wal_file", regressionForeignWALFile)
	t.Run("P48_grafana_webhook_keys_sorted", regressionGrafanaWebhookKeysSorted)
	t.Run("P48_truncation_notice_receiver_after_alerts", regressionTruncationReceiverAfterAlerts)
	t.Run("P171_grafana_org_id_alone_is_a_batch", regressionGrafanaOrgIDAloneIsABatch)
}

// regressionGrafanaOrgIDAloneIsABatch: P171's shrunk counterexample. An
// object with an orgId and alerts but no other member of a webhook
// (receiver, groupKey, groupLabels, commonLabels, version, status) is a
// batch of alerts of any shape to intake, each item read by its own
// shape; Grafana's mapping first read it as a Grafana webhook, dropping
// the item without labels. Now the mapping does not recognise it (as
// alertmanager.yaml does not recognise such an Alertmanager batch), and at
// Grafana's endpoint, where intake reads it as a webhook, the two agree.
func regressionGrafanaOrgIDAloneIsABatch(t *testing.T) {
	body := []byte(`{"orgId":1,"alerts":[{"status":"firing","labels":{"alertname":"HighErrorRate"},"annotations":{"summary":""}},{"status":"firing","startsAt":"2026-11-29T21:10:00Z","generatorURL":"disk full on db-1"}]}`)
	recs, err := intake.ParseBytes(body, intake.Options{})
	if err != nil || len(recs) != 2 || recs[0].Err != nil || recs[1].Err != nil {
		t.Fatalf("read %s: %v %+v", body, err, recs)
	}
	if recs[0].Alert.Sender != "grafana" || recs[1].Alert.Sender == "grafana" {
		t.Fatalf("senders %q and %q, want grafana and the second item's own", recs[0].Alert.Sender, recs[1].Alert.Sender)
	}
	if _, err := intake.MappedGrafanaWebhook(body, false); err == nil {
		t.Fatalf("Grafana's mapping recognises a batch as its webhook")
	}
	if compared, err := checkGrafanaFastPathIsMapping(body, gen.GrafanaGroup{Before: true, Batch: true}); !compared || err != nil {
		t.Fatalf("compared %v: %v", compared, err)
	}
}

// regressionGrafanaWebhookKeysSorted: P48's shrunk counterexample. A
// Grafana webhook written with its keys sorted puts alerts before orgId;
// the streaming reader decided the sender before the alerts and read them
// as Alertmanager's.
func regressionGrafanaWebhookKeysSorted(t *testing.T) {
	body := `{"alerts":[{"labels":{"alertname":"Disk almost full"},"panelURL":"","silenceURL":"https://grafana/silence","status":"firing"}],"orgId":1,"receiver":"hook","status":"firing"}`
	recs, err := intake.ParseBytes([]byte(body), intake.Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("read %s: %v %+v", body, err, recs)
	}
	if a := recs[0].Alert; a.Sender != "grafana" || a.Source != "grafana" {
		t.Fatalf("sender %q source %q, want grafana", a.Sender, a.Source)
	}
}

// regressionTruncationReceiverAfterAlerts: P48's second counterexample.
// The notice of a truncated Alertmanager webhook names its receiver (and
// its id hashes it) whether the receiver comes before or after the alerts.
func regressionTruncationReceiverAfterAlerts(t *testing.T) {
	item := `{"labels":{"alertname":"DiskFull"},"status":"firing"}`
	before := `{"receiver":"openrecall","status":"firing","alerts":[` + item + `],"version":"4","truncatedAlerts":2}`
	after := `{"status":"firing","alerts":[` + item + `],"version":"4","truncatedAlerts":2,"receiver":"openrecall"}`
	a, _ := intake.ParseBytes([]byte(before), intake.Options{})
	b, _ := intake.ParseBytes([]byte(after), intake.Options{})
	if len(a) != 2 || len(b) != 2 || a[1].Err != nil || b[1].Err != nil {
		t.Fatalf("want an alert and a notice each: %+v %+v", a, b)
	}
	if a[1].Alert.ID != b[1].Alert.ID || !strings.Contains(b[1].Alert.Text, "receiver: openrecall") {
		t.Fatalf("notices differ: %q %q / %q", a[1].Alert.ID, b[1].Alert.ID, b[1].Alert.Text)
	}
}

// regressionOneIncidentIDOnTwoDecisions: P6's shrunk counterexample. Two
// strong matches share an incident id but carry different decisions; triage
// counts decisions, not ids, so real (two matches) dominates and adding a
// strong real match raises the consistent count from 2 to 3.
func regressionOneIncidentIDOnTwoDecisions(t *testing.T) {
	cfg := triage.DefaultConfig()
	ms := []openrecall.Match{
		{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch()}, Score: 0.85},
		{Incident: openrecall.Incident{ID: "inc_09", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.95},
		{Incident: openrecall.Incident{ID: "inc_01", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.85},
	}
	before := triage.Triage(openrecall.Fingerprint{}, openrecall.SeverityMedium, ms, cfg)
	if before.ConsistentCount != 2 || before.StrongCount != 3 || before.Decision != openrecall.DecisionEscalated {
		t.Fatalf("before: %+v, want 2 of 3 strong matches agreeing and escalated", before)
	}
	extra := openrecall.Match{Incident: openrecall.Incident{ID: "inc_added", Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}, Score: 0.85}
	after := triage.Triage(openrecall.Fingerprint{}, openrecall.SeverityMedium, append(ms, extra), cfg)
	if after.ConsistentCount != 3 {
		t.Fatalf("after adding a strong real match: consistent count %d, want 3", after.ConsistentCount)
	}
}

// regressionDurationInADurationSlot: P2's shrunk counterexample, a
// generator artifact ("for 5mm") fixed by giving durations their own
// placeholder. Two TargetDown alerts that differ only in the duration get one
// fingerprint, and "for <duration>" reads as a sustained signal.
func regressionDurationInADurationSlot(t *testing.T) {
	ex := newExtractor()
	r := gen.RawAlert{Family: 3, B: gen.Noise{N: 8, Dur: 2}}
	a, b := ex.Extract(r.First()), ex.Extract(r.Second())
	if a != b {
		t.Fatalf("%s != %s for %q and %q", a, b, r.First().Text, r.Second().Text)
	}
	if a.SignalShape != "sustained" {
		t.Fatalf("signal shape %q for %q, want sustained", a.SignalShape, r.First().Text)
	}
}
