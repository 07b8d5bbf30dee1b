package notify

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/fakereceivers"
)

// pdKey is a routing key of the documented shape (32 characters).
const pdKey = "R0UTINGKEY0123456789abcdefABCDEF"

// pagerDutyAPI speaks the Events API v2 as PagerDuty documents it
// (https://developer.pagerduty.com/docs/send-alert-event and
// https://github.com/PagerDuty/api-schema/blob/main/reference/events-v2/openapiv3.json):
// POST /v2/enqueue; a routing_key of 32 characters; event_action trigger,
// acknowledge or resolve; dedup_key required but for a trigger; a
// trigger's payload with summary, source and a severity of the four; 202
// {status, message, dedup_key}; 400 {status, message, errors[]} otherwise.
func pagerDutyAPI(t *testing.T) *FakeAPI {
	return newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		if req.Method != http.MethodPost || req.Path != "/v2/enqueue" {
			return 404, nil, `{"status":"Not found"}`
		}
		// The API's rules, as the end-to-end run's PagerDuty applies them.
		key, refusal := fakereceivers.PagerDutyRefusal(req.Body, "")
		if refusal != nil {
			return 400, nil, string(refusal)
		}
		return 202, nil, `{"status":"success","message":"Event processed","dedup_key":"` + key + `"}`
	})
}

func newTestPagerDuty(t *testing.T, url string, acknowledge bool) *PagerDuty {
	t.Helper()
	key, err := ParseSecret(pdKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPagerDuty(PagerDutyConfig{Name: "pager", RoutingKey: key, URL: url, Acknowledge: acknowledge})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPagerDutyTrigger(t *testing.T) {
	api := pagerDutyAPI(t)
	p := newTestPagerDuty(t, api.URL+"/v2/enqueue", false)
	d, err := p.Send(context.Background(), pagedTrigger())
	if err != nil {
		t.Fatal(err)
	}
	if d.State["dedup_key"] != "ep-ledger-1" {
		t.Errorf("state %v, want the dedup_key PagerDuty answered", d.State)
	}
	req := api.Last(t)
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	got := decodeJSON[map[string]any](t, req.Body)
	want := map[string]any{
		"routing_key":  pdKey,
		"event_action": "trigger",
		"dedup_key":    "ep-ledger-1",
		"client":       "openrecall",
		"client_url":   "https://openrecall.example.com/review/b1-7",
		"links": []any{
			map[string]any{"href": "https://openrecall.example.com/review/b1-7", "text": "Review in openrecall"},
			map[string]any{"href": "https://runbooks.example.com/ledger", "text": "Runbook"},
		},
		"payload": map[string]any{
			"summary":   "ledger-sync-worker timeout calling ledger API",
			"source":    "worker-3:9100",
			"severity":  "error",
			"timestamp": "2026-03-01T10:00:00Z",
			"component": "ledger-sync",
			"group":     "prod",
			"class":     "LedgerSyncTimeout",
			"custom_details": map[string]any{
				"decision":    "real",
				"route":       "strong",
				"reason":      "high severity in prod and memory split: treat it as real.",
				"confidence":  0.82,
				"identity":    "LedgerSyncTimeout @ ledger-sync",
				"severity":    "high",
				"service":     "ledger-sync",
				"environment": "prod",
				"sender":      "alertmanager",
				"memories": []any{
					map[string]any{"id": "inc_a", "decision": "known_benign", "score": 1.0, "analyst": "alice", "note": "nightly batch retries"},
					map[string]any{"id": "inc_b", "decision": "known_benign", "score": 0.95},
				},
				"dead_ends":     []any{"restarted ledger-sync-worker — no effect", "raised the timeout", "checked the ledger status page"},
				"cost":          "$0.001250",
				"cost_nano_usd": 1250000.0,
				"review_url":    "https://openrecall.example.com/review/b1-7",
			},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("trigger event (-want +got):\n%s", d)
	}
}

func TestPagerDutyResolveAndAcknowledge(t *testing.T) {
	api := pagerDutyAPI(t)
	trigger := pagedTrigger()
	prior := map[string]string{"dedup_key": trigger.Key}
	for _, ack := range []bool{false, true} {
		p := newTestPagerDuty(t, api.URL+"/v2/enqueue", ack)
		before := len(api.Requests())
		if _, err := p.Send(context.Background(), decisionOf(trigger, prior)); err != nil {
			t.Fatal(err)
		}
		sent := api.Requests()[before:]
		switch {
		case !ack && len(sent) != 0:
			t.Errorf("without acknowledge an update sent %d events, want none", len(sent))
		case ack && len(sent) != 1:
			t.Fatalf("with acknowledge an update sent %d events, want one", len(sent))
		case ack:
			want := map[string]any{"routing_key": pdKey, "event_action": "acknowledge", "dedup_key": "ep-ledger-1"}
			if d := cmp.Diff(want, decodeJSON[map[string]any](t, sent[0].Body)); d != "" {
				t.Errorf("acknowledge (-want +got):\n%s", d)
			}
		}
	}
	p := newTestPagerDuty(t, api.URL+"/v2/enqueue", false)
	d, err := p.Send(context.Background(), recoveryOf(trigger, prior))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"routing_key": pdKey, "event_action": "resolve", "dedup_key": "ep-ledger-1"}
	if diff := cmp.Diff(want, decodeJSON[map[string]any](t, api.Last(t).Body)); diff != "" {
		t.Errorf("resolve (-want +got):\n%s", diff)
	}
	if d.State["dedup_key"] != trigger.Key {
		t.Errorf("resolve's state %v, want the trigger's kept", d.State)
	}
}

func TestPagerDutySeverities(t *testing.T) {
	// The table of PagerDuty's doc comment.
	want := map[openrecall.Severity]string{
		openrecall.SeverityCritical: "critical", openrecall.SeverityHigh: "error", openrecall.SeverityMedium: "warning",
		openrecall.SeverityLow: "warning", openrecall.SeverityInfo: "info", openrecall.SeverityUnknown: "critical", "": "critical",
	}
	api := pagerDutyAPI(t)
	p := newTestPagerDuty(t, api.URL+"/v2/enqueue", false)
	for sev, pd := range want {
		n := pagedTrigger()
		n.Result.Alert.Severity = sev
		if _, err := p.Send(context.Background(), n); err != nil {
			t.Fatalf("%q: %v", sev, err)
		}
		got := decodeJSON[pdEvent](t, api.Last(t).Body)
		if got.Payload.Severity != pd {
			t.Errorf("severity %q paged as %q, want %q", sev, got.Payload.Severity, pd)
		}
	}
}

func TestPagerDutyBoundsTheEvent(t *testing.T) {
	api := pagerDutyAPI(t)
	p := newTestPagerDuty(t, api.URL+"/v2/enqueue", false)
	n := pagedTrigger()
	n.Result.Alert.Title = strings.Repeat("disk full ", 500)
	n.Result.Alert.Labels = nil
	n.Result.Alert.Service = ""
	n.Result.Identity.Service = ""
	n.Result.Alert.Source = ""
	n.Result.Analysis.Summary = strings.Repeat("why ", 5000)
	for i := range 100 {
		n.Result.Matches[1].Incident.DeadEnds = append(n.Result.Matches[1].Incident.DeadEnds, strings.Repeat("x", 1000)+string(rune('a'+i%26))+strings.Repeat("y", i))
	}
	if _, err := p.Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	req := api.Last(t)
	got := decodeJSON[pdEvent](t, req.Body)
	if c := utf8.RuneCountInString(got.Payload.Summary); c != 1024 || !strings.HasSuffix(got.Payload.Summary, "…") {
		t.Errorf("summary of %d characters, want cut to 1024", c)
	}
	if got.Payload.Source != "alertmanager" {
		t.Errorf("source %q, want the sender when there is no host or service", got.Payload.Source)
	}
	if len(req.Body) > 64<<10 {
		t.Errorf("event of %d bytes: the analysis is not bounded", len(req.Body))
	}
	// A key PagerDuty would refuse is refused here, permanently.
	n.Key = strings.Repeat("k", 256)
	if _, err := p.Send(context.Background(), n); err == nil || !asSendError(err).Permanent {
		t.Errorf("a 256-character key: %v, want a permanent error", err)
	}
}

func TestPagerDutyErrorAnswers(t *testing.T) {
	api := pagerDutyAPI(t)
	p := newTestPagerDuty(t, api.URL+"/v2/enqueue", false)
	// PagerDuty's own 400, from the fake that checks the documented rules.
	short, _ := ParseSecret("too-short")
	bad := &PagerDuty{name: "bad", url: api.URL + "/v2/enqueue", client: "openrecall", key: short}
	_, err := bad.Send(context.Background(), pagedTrigger())
	checkClassified(t, err, errorAnswer{status: 400, permanent: true, bodyHas: `"errors":["Length of 'routing_key' is incorrect (should be 32 characters)"]`})

	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, tt := range []errorAnswer{
		{name: "400 invalid event", status: 400, body: `{"status":"invalid event","message":"Event object is invalid","errors":["'payload.severity' is invalid"]}`,
			permanent: true, bodyHas: `'payload.severity' is invalid`},
		{name: "401", status: 401, body: `{"status":"Unauthorized"}`, permanent: true, bodyHas: "Unauthorized"},
		{name: "403", status: 403, body: `{"status":"Forbidden"}`, permanent: true, bodyHas: "Forbidden"},
		{name: "429 with Retry-After", status: 429, header: http.Header{"Retry-After": {"12"}}, retryAfter: 12 * time.Second},
		{name: "500", status: 500, body: `{"status":"error"}`, bodyHas: "error"},
		{name: "502 from a proxy", status: 502, body: "<html>bad gateway</html>", bodyHas: "bad gateway"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api.Handle(Replies(func(APIRequest) (int, http.Header, string) { return tt.status, tt.header, tt.body }))
			_, err := p.Send(context.Background(), pagedTrigger())
			checkClassified(t, err, tt)
		})
	}
	t.Run("503 with Retry-After as a date", func(t *testing.T) {
		api.Handle(Replies(func(APIRequest) (int, http.Header, string) { return 503, http.Header{"Retry-After": {date}}, "" }))
		_, err := p.Send(context.Background(), pagedTrigger())
		if se := asSendError(err); se.Permanent || se.RetryAfter < 59*time.Minute || se.RetryAfter > time.Hour {
			t.Errorf("%+v, want retried after about an hour", se)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		_ = CheckNoAnswerInTime(t, newTestPagerDuty(t, HangingAPI(t).URL, false), pagedTrigger(), 150*time.Millisecond)
	})
	t.Run("refused", func(t *testing.T) {
		_, err := newTestPagerDuty(t, RefusedURL(t), false).Send(context.Background(), pagedTrigger())
		if se := asSendError(err); se.Permanent || se.Status != 0 {
			t.Errorf("%v, want retried", err)
		}
	})
}

// TestPagerDutyNeverShowsTheKey: the routing key is in the body PagerDuty
// receives, never in an error — even when the answer echoes it.
func TestPagerDutyNeverShowsTheKey(t *testing.T) {
	api := newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		return 400, nil, `{"status":"invalid event","message":"Event object is invalid","errors":["unknown routing_key ` + pdKey + `"]}`
	})
	p := newTestPagerDuty(t, api.URL, false)
	for _, kind := range []string{KindTrigger, KindResolve} {
		n := pagedTrigger()
		n.Kind = kind
		_, err := p.Send(context.Background(), n)
		if err == nil {
			t.Fatal("no error")
		}
		if se := asSendError(err); strings.Contains(err.Error(), pdKey) || strings.Contains(se.Body, pdKey) {
			t.Errorf("%s: error shows the routing key: %v", kind, err)
		}
	}
	for _, s := range []string{"", "0123456789abcdef0123456789abcdef0", "0123456789abcdef0123456789abcde\x01"} {
		key, _ := ParseSecret(s)
		_, err := NewPagerDuty(PagerDutyConfig{Name: "pager", RoutingKey: key})
		if err == nil || !strings.Contains(err.Error(), "routing_key") || (s != "" && strings.Contains(err.Error(), s)) {
			t.Errorf("routing key %q: %v, want an error naming routing_key, not showing it", s, err)
		}
	}
}

func TestNewPagerDutyValidates(t *testing.T) {
	key, _ := ParseSecret(pdKey)
	for _, tt := range []struct {
		c     PagerDutyConfig
		field string
	}{
		{PagerDutyConfig{RoutingKey: key}, "name"},
		{PagerDutyConfig{Name: "p"}, "routing_key"},
		{PagerDutyConfig{Name: "p", RoutingKey: key, URL: "ftp://events.example.com"}, "url"},
		{PagerDutyConfig{Name: "p", RoutingKey: key, URL: "/v2/enqueue"}, "url"},
		{PagerDutyConfig{Name: "p", RoutingKey: key, URL: "http://events.example.com/v2/enqueue"}, "url"}, // the key in clear text
	} {
		if _, err := NewPagerDuty(tt.c); err == nil || !strings.Contains(err.Error(), tt.field+":") {
			t.Errorf("%+v: %v, want an error naming %s", tt.c, err, tt.field)
		}
	}
	p, err := NewPagerDuty(PagerDutyConfig{Name: "p", RoutingKey: key})
	if err != nil || p.url != DefaultPagerDutyURL || p.Name() != "p" || p.Type() != TypePagerDuty {
		t.Errorf("defaults: %+v, %v", p, err)
	}
}
