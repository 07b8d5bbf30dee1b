package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

const ogKey = "eb243592-faa2-4ba2-a551-1afdf565c889"

// opsgenieAPI speaks the Alert API v2 as Opsgenie documents it
// (https://docs.opsgenie.com/docs/alert-api,
// https://docs.opsgenie.com/docs/response): Authorization: GenieKey; POST
// /v2/alerts with a message of at most 130 characters, an alias of at
// most 512, a priority P1–P5; POST /v2/alerts/{id}/close and /notes with
// identifierType; every accepted request answered 202 {result, took,
// requestId}; 401 for an unknown key, 422 for semantic errors, 404 for
// an unknown path.
func opsgenieAPI(t *testing.T) *FakeAPI {
	return newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		const id = `"took":0.107,"requestId":"43a29c5c-3dbf-4fa4-9c26-f4f71023e120"`
		if req.Header.Get("Authorization") != "GenieKey "+ogKey {
			return 401, nil, `{"message":"Could not authenticate",` + id + `}`
		}
		if req.Method != http.MethodPost {
			return 405, nil, `{"message":"Method not allowed",` + id + `}`
		}
		unprocessable := func(field, msg string) (int, http.Header, string) {
			b, _ := json.Marshal(map[string]any{"message": "Request body is not processable. Please check the errors.",
				"errors": map[string]string{field: msg}, "took": 0.1, "requestId": "x"})
			return 422, nil, string(b)
		}
		switch {
		case req.Path == "/v2/alerts":
			var c ogCreate
			if err := json.Unmarshal(req.Body, &c); err != nil {
				return 400, nil, `{"message":"Invalid JSON body",` + id + `}`
			}
			switch {
			case c.Message == "":
				return unprocessable("message", "Message can not be empty.")
			case utf8.RuneCountInString(c.Message) > 130:
				return unprocessable("message", "Message can not be longer than 130 characters.")
			case len(c.Alias) > 512:
				return unprocessable("alias", "Alias can not be longer than 512 characters.")
			case !strings.Contains("P1 P2 P3 P4 P5", c.Priority) || len(c.Priority) != 2:
				return unprocessable("priority", "Priority should be one of [P1, P2, P3, P4, P5]")
			}
		case strings.HasSuffix(req.Path, "/close") || strings.HasSuffix(req.Path, "/notes"):
			if req.Query != "identifierType=alias" {
				return unprocessable("identifierType", "Identifier type should be one of [id, tiny, alias]")
			}
			var a ogAction
			if err := json.Unmarshal(req.Body, &a); err != nil {
				return 400, nil, `{"message":"Invalid JSON body",` + id + `}`
			}
			if strings.HasSuffix(req.Path, "/notes") && a.Note == "" {
				return unprocessable("note", "Note can not be empty.")
			}
		default:
			return 404, nil, `{"message":"Could not find handler",` + id + `}`
		}
		return 202, nil, `{"result":"Request will be processed",` + id + `}`
	})
}

func newTestOpsgenie(t *testing.T, api string) *Opsgenie {
	t.Helper()
	key, _ := ParseSecret(ogKey)
	o, err := NewOpsgenie(OpsgenieConfig{Name: "ops", APIKey: key, APIURL: api, Tags: []string{"team:ledger"}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOpsgenieCreate(t *testing.T) {
	api := opsgenieAPI(t)
	o := newTestOpsgenie(t, api.URL)
	d, err := o.Send(context.Background(), pagedTrigger())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alias": "ep-ledger-1", "request_id": "43a29c5c-3dbf-4fa4-9c26-f4f71023e120"}
	if diff := cmp.Diff(want, d.State); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	req := api.Last(t)
	if req.Path != "/v2/alerts" || req.Query != "" || req.Header.Get("Authorization") != "GenieKey "+ogKey {
		t.Errorf("request %s ?%s auth %q", req.Path, req.Query, req.Header.Get("Authorization"))
	}
	got := decodeJSON[ogCreate](t, req.Body)
	wantBody := ogCreate{
		Message:  "ledger-sync-worker timeout calling ledger API",
		Alias:    "ep-ledger-1",
		Tags:     []string{"openrecall", "decision:real", "route:strong", "severity:high", "service:ledger-sync", "env:prod", "team:ledger"},
		Entity:   "worker-3:9100",
		Source:   "openrecall",
		Priority: "P2",
		Description: "Decision: real (strong)\n" +
			"Reason: high severity in prod and memory split: treat it as real.\n" +
			"Alert: LedgerSyncTimeout @ ledger-sync\nSeverity: high\nService: ledger-sync\nHost: worker-3:9100\n" +
			"Memories that voted:\n- inc_a known_benign 1.00 by alice: nightly batch retries\n- inc_b known_benign 0.95\n" +
			"Dead ends (tried before, did not help):\n- restarted ledger-sync-worker — no effect\n- raised the timeout\n- checked the ledger status page\n" +
			"Cost: $0.001250\nReview: https://openrecall.example.com/review/b1-7",
		Details: map[string]string{
			"decision": "real", "route": "strong", "reason": "high severity in prod and memory split: treat it as real.",
			"confidence": "0.82", "identity": "LedgerSyncTimeout @ ledger-sync", "severity": "high", "service": "ledger-sync",
			"environment": "prod", "sender": "alertmanager",
			"memories":  "inc_a known_benign 1.00 by alice: nightly batch retries; inc_b known_benign 0.95",
			"dead_ends": "restarted ledger-sync-worker — no effect; raised the timeout; checked the ledger status page",
			"cost":      "$0.001250", "cost_nano_usd": "1250000", "review_url": "https://openrecall.example.com/review/b1-7",
		},
	}
	if diff := cmp.Diff(wantBody, got); diff != "" {
		t.Errorf("create alert (-want +got):\n%s", diff)
	}
}

func TestOpsgenieNoteAndClose(t *testing.T) {
	api := opsgenieAPI(t)
	o := newTestOpsgenie(t, api.URL+"/") // a trailing slash is one address
	trigger := pagedTrigger()
	trigger.Key = "ep/ledger 1" // escaped in the path
	prior := map[string]string{"alias": trigger.Key}

	if _, err := o.Send(context.Background(), decisionOf(trigger, prior)); err != nil {
		t.Fatal(err)
	}
	req := api.Last(t)
	if req.Path != "/v2/alerts/ep%2Fledger%201/notes" || req.Query != "identifierType=alias" {
		t.Errorf("note posted to %s?%s", req.Path, req.Query)
	}
	want := ogAction{User: "bob", Source: "openrecall",
		Note: "bob decided real: ledger API rate limit changed\nReview in openrecall: https://openrecall.example.com/review/b1-7"}
	if d := cmp.Diff(want, decodeJSON[ogAction](t, req.Body)); d != "" {
		t.Errorf("note (-want +got):\n%s", d)
	}

	if _, err := o.Send(context.Background(), recoveryOf(trigger, prior)); err != nil {
		t.Fatal(err)
	}
	req = api.Last(t)
	if req.Path != "/v2/alerts/ep%2Fledger%201/close" || req.Query != "identifierType=alias" {
		t.Errorf("close posted to %s?%s", req.Path, req.Query)
	}
	want = ogAction{User: "openrecall", Source: "openrecall", Note: "recovered: ledger-sync-worker timeout calling ledger API"}
	if d := cmp.Diff(want, decodeJSON[ogAction](t, req.Body)); d != "" {
		t.Errorf("close (-want +got):\n%s", d)
	}
}

func TestOpsgeniePriorities(t *testing.T) {
	want := map[openrecall.Severity]string{
		openrecall.SeverityCritical: "P1", openrecall.SeverityHigh: "P2", openrecall.SeverityMedium: "P3",
		openrecall.SeverityLow: "P4", openrecall.SeverityInfo: "P5", openrecall.SeverityUnknown: "P1", "": "P1",
	}
	api := opsgenieAPI(t)
	o := newTestOpsgenie(t, api.URL)
	for sev, p := range want {
		n := pagedTrigger()
		n.Result.Alert.Severity = sev
		if _, err := o.Send(context.Background(), n); err != nil {
			t.Fatalf("%q: %v", sev, err)
		}
		if got := decodeJSON[ogCreate](t, api.Last(t).Body).Priority; got != p {
			t.Errorf("severity %q: priority %s, want %s", sev, got, p)
		}
	}
}

func TestOpsgenieBoundsTheAlert(t *testing.T) {
	api := opsgenieAPI(t)
	o := newTestOpsgenie(t, api.URL)
	n := pagedTrigger()
	n.Result.Alert.Title = strings.Repeat("é", 400)
	n.Result.Analysis.Summary = strings.Repeat("reason ", 3000)
	n.Result.Alert.Service = strings.Repeat("s", 80)
	for i := range 40 {
		n.Result.Matches[1].Incident.DeadEnds = append(n.Result.Matches[1].Incident.DeadEnds, strings.Repeat("d", 290)+string(rune('A'+i)))
	}
	if _, err := o.Send(context.Background(), n); err != nil {
		t.Fatal(err) // the fake refuses what Opsgenie refuses
	}
	got := decodeJSON[ogCreate](t, api.Last(t).Body)
	if c := utf8.RuneCountInString(got.Message); c != 130 {
		t.Errorf("message of %d characters, want cut to 130", c)
	}
	total := 0
	for k, v := range got.Details {
		total += utf8.RuneCountInString(k) + utf8.RuneCountInString(v)
	}
	if total > 8000 || got.Details["decision"] != "real" || got.Details["review_url"] == "" {
		t.Errorf("details of %d characters (want ≤8000, the decision and review link kept): %v", total, got.Details)
	}
	for _, tag := range got.Tags {
		if utf8.RuneCountInString(tag) > 50 {
			t.Errorf("tag %q longer than 50", tag)
		}
	}
}

func TestOpsgenieErrorAnswers(t *testing.T) {
	api := opsgenieAPI(t)
	// Opsgenie's own answers, from the fake that checks the documented rules.
	wrong, _ := ParseSecret("not-the-key")
	o, err := NewOpsgenie(OpsgenieConfig{Name: "ops", APIKey: wrong, APIURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Send(context.Background(), pagedTrigger())
	checkClassified(t, err, errorAnswer{status: 401, permanent: true, bodyHas: "Could not authenticate"})

	o = newTestOpsgenie(t, api.URL)
	for _, tt := range []errorAnswer{
		{name: "400", status: 400, body: `{"message":"Invalid JSON body","took":0.01,"requestId":"r"}`, permanent: true, bodyHas: "Invalid JSON body"},
		{name: "401", status: 401, body: `{"message":"Key format is not valid!"}`, permanent: true, bodyHas: "Key format is not valid!"},
		{name: "403", status: 403, body: `{"message":"You are not authorized to perform this operation"}`, permanent: true, bodyHas: "not authorized"},
		{name: "404", status: 404, body: `{"message":"Alert with alias [x] does not exist"}`, permanent: true, bodyHas: "does not exist"},
		{name: "422", status: 422, body: `{"message":"Request body is not processable. Please check the errors.","errors":{"message":"Message can not be empty."}}`,
			permanent: true, bodyHas: `"errors":{"message":"Message can not be empty."}`},
		{name: "429", status: 429, header: http.Header{"Retry-After": {"3"}}, body: `{"message":"Too many requests"}`, retryAfter: 3 * time.Second, bodyHas: "Too many requests"},
		{name: "500", status: 500, body: `{"message":"Internal error"}`, bodyHas: "Internal error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api.Handle(Replies(func(APIRequest) (int, http.Header, string) { return tt.status, tt.header, tt.body }))
			for _, n := range []Notification{pagedTrigger(), recoveryOf(pagedTrigger(), nil)} {
				_, err := o.Send(context.Background(), n)
				checkClassified(t, err, tt)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		_ = CheckNoAnswerInTime(t, newTestOpsgenie(t, HangingAPI(t).URL), pagedTrigger(), 150*time.Millisecond)
	})
}

func TestOpsgenieNeverShowsTheKey(t *testing.T) {
	api := newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		return 403, nil, `{"message":"key ` + strings.TrimPrefix(req.Header.Get("Authorization"), "GenieKey ") + ` may not create alerts"}`
	})
	o := newTestOpsgenie(t, api.URL)
	for _, n := range []Notification{pagedTrigger(), recoveryOf(pagedTrigger(), nil), decisionOf(pagedTrigger(), nil)} {
		_, err := o.Send(context.Background(), n)
		if err == nil || strings.Contains(err.Error(), ogKey) || strings.Contains(asSendError(err).Body, ogKey) {
			t.Errorf("%s: %v shows the key", n.Kind, err)
		}
	}
	bad, _ := ParseSecret("key\nwith a newline")
	if _, err := NewOpsgenie(OpsgenieConfig{Name: "o", APIKey: bad}); err == nil || !strings.Contains(err.Error(), "api_key") || strings.Contains(err.Error(), "newline") {
		t.Errorf("%v, want an error naming api_key, not showing it", err)
	}
}

func TestNewOpsgenieValidates(t *testing.T) {
	key, _ := ParseSecret(ogKey)
	for _, tt := range []struct {
		c     OpsgenieConfig
		field string
	}{
		{OpsgenieConfig{APIKey: key}, "name"},
		{OpsgenieConfig{Name: "o"}, "api_key"},
		{OpsgenieConfig{Name: "o", APIKey: key, APIURL: "api.opsgenie.com"}, "api_url"},
		{OpsgenieConfig{Name: "o", APIKey: key, APIURL: "https://api.opsgenie.com?x=1"}, "api_url"},
		{OpsgenieConfig{Name: "o", APIKey: key, APIURL: "http://api.opsgenie.com"}, "api_url"}, // the key in clear text
		{OpsgenieConfig{Name: "o", APIKey: key, Tags: []string{""}}, "tags[0]"},
		{OpsgenieConfig{Name: "o", APIKey: key, Tags: make([]string, 15)}, "tags"},
	} {
		if _, err := NewOpsgenie(tt.c); err == nil || !strings.Contains(err.Error(), tt.field+":") {
			t.Errorf("%+v: %v, want an error naming %s", tt.c, err, tt.field)
		}
	}
	o, err := NewOpsgenie(OpsgenieConfig{Name: "o", APIKey: key, APIURL: "https://api.eu.opsgenie.com"})
	if err != nil || o.api != "https://api.eu.opsgenie.com" || o.Type() != TypeOpsgenie {
		t.Errorf("EU: %+v %v", o, err)
	}
	if o, _ := NewOpsgenie(OpsgenieConfig{Name: "o", APIKey: key}); o.api != DefaultOpsgenieURL {
		t.Errorf("default API %q", o.api)
	}
}
