package intake

import (
	"maps"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/detectcorpus"
)

// TestFalcoAlertmanagerReadsAsWebhook holds every rule of the public
// detection corpus (Falco's and Sigma's rules) to one reading of its event
// on two paths: falcosidekick's webhook and falcosidekick's Alertmanager
// output through Alertmanager's webhook carry the same entity fields,
// service and severity, and both are security detections (issue 32: the
// Alertmanager path read no entity, so no exception was ever proposed
// there). Fails without forwarded: no entity on the Alertmanager path.
func TestFalcoAlertmanagerReadsAsWebhook(t *testing.T) {
	dir, err := detectcorpus.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := detectcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	native := detectcorpus.Render(rules, detectcorpus.Falcosidekick, 2, 32)
	am := detectcorpus.Render(rules, detectcorpus.Alertmanager, 2, 32)
	withEntities, bad := 0, 0
	for i := range native {
		a, b := parseOne(t, native[i].Payload), parseOne(t, am[i].Payload)
		if len(a.Entities) > 0 {
			withEntities++
		}
		if !maps.Equal(a.Entities, b.Entities) || a.Service != b.Service || a.Severity != b.Severity || !b.Security {
			if bad++; bad <= 5 {
				t.Errorf("%s: webhook entities %v service %q severity %s; Alertmanager entities %v service %q severity %s security %v",
					native[i].Key, a.Entities, a.Service, a.Severity, b.Entities, b.Service, b.Severity, b.Security)
			}
		}
	}
	if withEntities == 0 {
		t.Fatal("no firing of the corpus carries an entity field: the test proves nothing")
	}
	t.Logf("%d firings, %d with entity fields, %d read differently", len(native), withEntities, bad)
}

func parseOne(t *testing.T, b []byte) openrecall.Alert {
	t.Helper()
	recs, err := ParseBytes(b, Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("parse %s: %v %+v", b, err, recs)
	}
	return recs[0].Alert
}

// TestTruncatedAfterAlertsWithKeysSorted reads Alertmanager's webhook with
// its members sorted (alerts first, then receiver, truncatedAlerts,
// version, as a re-encoder that sorts keys writes it): the notice that
// alerts were left out is kept, as when the members come in Alertmanager's
// order. Found by P48 once the sender pool grew; fails without the fix in
// objectEnd (the object was read as a batch and its notice dropped).
func TestTruncatedAfterAlertsWithKeysSorted(t *testing.T) {
	body := `{"alerts":[{"annotations":{"summary":"disk 95% on db-1"},"endsAt":"0001-01-01T00:00:00Z","fingerprint":"2e9fa37b4a575e39","labels":{"alertname":"DiskFull","service":"db"},"startsAt":"2026-11-30T03:43:32Z","status":"firing"}],` +
		`"commonLabels":{"alertname":"DiskFull"},"groupKey":"{}:{alertname=\"DiskFull\"}","receiver":"openrecall","status":"firing","truncatedAlerts":2,"version":"4"}`
	recs := readAll(t, body, Options{})
	if len(recs) != 2 || recs[1].Alert.Status != openrecall.StatusNotice || recs[1].Alert.Dropped != 2 {
		for _, r := range recs {
			t.Logf("%v %q %s dropped %d", r.Err, r.Alert.Title, r.Alert.Status, r.Alert.Dropped)
		}
		t.Fatalf("%d records, want the alert and the notice of 2 alerts left out", len(recs))
	}
}
