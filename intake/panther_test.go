package intake

import (
	"strings"
	"testing"
)

// TestPantherAlertsAreDistinct: Panther's Custom Webhook names the rule in
// id and the alert in alertId; two alerts of one rule read as two alerts of
// that rule, from the panther sender, security detections. Without an
// alertId the id is a hash of the alert's content: the same body twice is
// one id, two bodies that differ in their alert context are two. (Before
// the Panther sender, the generic reader took id, the rule's, as the
// alert's id: every alert of a rule was one alert.)
func TestPantherAlertsAreDistinct(t *testing.T) {
	body := func(alertID, user string) string {
		return `{"id":"Okta.Admin.Login","createdAt":"2026-03-04T08:15:42Z","severity":"HIGH","type":"RULE",` +
			`"link":"https://acme.runpanther.net/alerts/x","title":"[Okta] ` + user + ` logged in","name":"Okta Admin Login",` +
			`"alertId":` + alertID + `,"alertContext":{"actor_email":"` + user + `"},"description":"d","runbook":"","tags":["Okta"],"version":"v1"}`
	}
	recs := readAll(t, strings.Join([]string{
		body(`"a1"`, "alice@example.com"), body(`"a2"`, "bob@example.com"),
		body(`null`, "carol@example.com"), body(`null`, "carol@example.com"), body(`null`, "dave@example.com"),
	}, "\n")+"\n", Options{})
	var ids []string
	for i, r := range recs {
		if r.Err != nil {
			t.Fatalf("record %d rejected: %v", i, r.Err)
		}
		a := r.Alert
		if a.Sender != "panther" || !a.Security || a.Rule != "Okta.Admin.Login" {
			t.Errorf("record %d: sender %q, security %v, rule %q; want panther, true, the rule's id", i, a.Sender, a.Security, a.Rule)
		}
		ids = append(ids, a.ID)
	}
	if ids[0] != "panther-a1" || ids[1] != "panther-a2" {
		t.Errorf("ids %q, %q: want panther- and each alert's alertId", ids[0], ids[1])
	}
	if ids[2] == "" || ids[2] != ids[3] || ids[2] == ids[4] || ids[2] == "Okta.Admin.Login" {
		t.Errorf("ids without alertId %q, %q, %q: want one content hash for one body and another for another", ids[2], ids[3], ids[4])
	}
}
