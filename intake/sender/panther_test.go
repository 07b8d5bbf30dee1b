package sender

import (
	"testing"

	"github.com/openrecall/openrecall"
)

// Two alerts of one Panther rule are two alerts: the id is the alert's
// (alertId), never the rule's (id), which is the rule exactly as sent.
func TestPantherAlertIDIsNotTheRuleID(t *testing.T) {
	a := oneEvent(t, mapped("panther"), `{"id":"AWS.CloudTrail.Created","alertId":"aaa1","type":"RULE","severity":"LOW","name":"CloudTrail Created","title":"CloudTrail created in 111","alertContext":{"user":"alice"}}`)
	b := oneEvent(t, mapped("panther"), `{"id":"AWS.CloudTrail.Created","alertId":"bbb2","type":"RULE","severity":"LOW","name":"CloudTrail Created","title":"CloudTrail created in 222","alertContext":{"user":"bob"}}`)
	if a.ID != "panther-aaa1" || b.ID != "panther-bbb2" {
		t.Errorf("ids %q and %q, want panther- and the alertId", a.ID, b.ID)
	}
	if a.Rule != "AWS.CloudTrail.Created" || a.Origin[PartRule] != "id" {
		t.Errorf("rule %q from %q, want the detection's id exactly", a.Rule, a.Origin[PartRule])
	}
	if a.Title != "CloudTrail Created" || a.Entities["user"] != "alice" || b.Entities["user"] != "bob" {
		t.Errorf("title %q, users %v %v", a.Title, a.Entities, b.Entities)
	}
}

// Without an alertId the event carries no id, so intake's content hash
// over everything the alert carries names it, never a constant.
func TestPantherWithoutAlertID(t *testing.T) {
	e := oneEvent(t, mapped("panther"), `{"id":"AWS.S3.Public","alertId":null,"type":"POLICY","severity":"MEDIUM","name":"S3 Public","link":"https://x.runpanther.net/policies/AWS.S3.Public","alertContext":{"bucket":"logs-1"}}`)
	if e.ID != "" || e.Origin[PartID] != "" {
		t.Errorf("id %q from %q, want none (a content hash)", e.ID, e.Origin[PartID])
	}
	if e.Rule != "AWS.S3.Public" {
		t.Errorf("rule %q", e.Rule)
	}
}

// The detection's reports pass through as labels as sent; the tags too.
func TestPantherReportsAndTags(t *testing.T) {
	e := oneEvent(t, mapped("panther"), `{"id":"Okta.BruteForce","alertId":"c3","type":"SCHEDULED_RULE","severity":"HIGH","name":"Okta Brute Force","alertContext":{},
		"tags":["Okta","Credential Access","env:prod"],"reports":{"MITRE ATT&CK":["TA0006:T1110","TA0001:T1078"],"CIS":["3.1"]}}`)
	if e.Labels["mitre_attack"] != "TA0006:T1110, TA0001:T1078" || e.Labels["report_cis"] != "3.1" {
		t.Errorf("labels %v", e.Labels)
	}
	if e.Labels["tags"] != "Okta, Credential Access, env:prod" || e.Environment != "prod" || e.Labels["panther_type"] != "SCHEDULED_RULE" {
		t.Errorf("labels %v, environment %q", e.Labels, e.Environment)
	}
}

// Panther's scale maps every level; a status member follows Panther's
// alert states; the early "New Alert: " title prefix is not the title.
func TestPantherSeverityStatusTitle(t *testing.T) {
	for raw, want := range map[string]openrecall.Severity{"INFO": openrecall.SeverityInfo, "LOW": openrecall.SeverityLow, "MEDIUM": openrecall.SeverityMedium, "HIGH": openrecall.SeverityHigh, "CRITICAL": openrecall.SeverityCritical} {
		if got := mapped("panther").Severity(raw); got != want {
			t.Errorf("%s reads %q, want %q", raw, got, want)
		}
	}
	for status, want := range map[string]string{"OPEN": openrecall.StatusFiring, "TRIAGED": openrecall.StatusAcknowledged, "RESOLVED": openrecall.StatusResolved, "CLOSED": openrecall.StatusResolved} {
		e := oneEvent(t, mapped("panther"), `{"id":"r","alertId":"a","type":"RULE","severity":"LOW","alertContext":{},"status":"`+status+`","title":"New Alert: Something odd"}`)
		if e.Status != want {
			t.Errorf("status %s reads %q, want %q", status, e.Status, want)
		}
		if e.Title != "Something odd" {
			t.Errorf("title %q", e.Title)
		}
	}
}

// Detection holds for Panther's shape alone.
func TestPantherMatch(t *testing.T) {
	for _, body := range []string{
		`{"id":"r","alertId":"a","type":"RULE","alertContext":{}}`,
		`{"id":"r","alertId":null,"type":"POLICY","link":"https://acme.runpanther.net/policies/r"}`,
		`{"id":"r","alertId":"a","type":"RULE","link":"https://runpanther.io/alerts/a"}`,
		`{"id":"r","alertId":"a","type":"SCHEDULED_RULE","name":"R","severity":"LOW"}`,
		// No alertId, yet Panther's own members: never generic JSON, whose
		// "id" (the detection's) would name every alert of the detection
		// (P120 found it).
		`{"id":"r","type":"RULE","alertContext":{},"link":"https://acme.runpanther.net/alerts/a"}`,
	} {
		if !mapped("panther").Match(mustParse(t, body)) {
			t.Errorf("%s: not recognised", body)
		}
	}
	for _, body := range []string{
		`{"id":"r","type":"RULE","name":"R","severity":"LOW"}`,                                         // no alertId, no Panther member
		`{"id":"r","alertId":"a","type":"incident","alertContext":{}}`,                                 // not a Panther type
		`{"id":"r","alertId":"a","type":"RULE"}`,                                                       // nothing else of Panther's
		`{"id":"r","alertId":"a","type":"RULE","link":"https://evil.example/runpanther.net/alerts/a"}`, // a link elsewhere
		`[{"id":"r","alertId":"a","type":"RULE","alertContext":{}}]`,
	} {
		if mapped("panther").Match(mustParse(t, body)) {
			t.Errorf("%s: recognised as Panther's", body)
		}
	}
}
