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
