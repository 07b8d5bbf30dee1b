package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// amNow is the receiver's clock in these tests.
var amNow = pagedAt.Add(45 * time.Minute)

// alertmanagerAPI speaks Alertmanager's API v2 as its OpenAPI
// specification and its 0.25 validation have it
// (https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml):
// POST /api/v2/alerts takes a JSON array of postable alerts; an alert
// needs a label, names match [a-zA-Z_][a-zA-Z0-9_]*, endsAt is not before
// startsAt; a refused alert is answered 400 with the error as a JSON
// string; 200 with no body otherwise. It keeps the alerts by label set, as
// Alertmanager identifies them, the last one posted winning.
type alertmanagerAPI struct {
	*FakeAPI
	mu     sync.Mutex
	alerts map[string]amAlert // by label set
}

var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func newAlertmanagerAPI(t *testing.T) *alertmanagerAPI {
	am := &alertmanagerAPI{alerts: map[string]amAlert{}}
	am.FakeAPI = newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		if req.Method != http.MethodPost || req.Path != "/api/v2/alerts" {
			return 404, nil, ""
		}
		var alerts []amAlert
		if err := json.Unmarshal(req.Body, &alerts); err != nil {
			return 400, nil, fmt.Sprintf("%q", "parsing alerts body from \"\" failed, because "+err.Error())
		}
		var errs []string
		for _, a := range alerts {
			if err := amValidate(a); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			am.mu.Lock()
			am.alerts[labelSetKey(a.Labels)] = a
			am.mu.Unlock()
		}
		if len(errs) > 0 {
			return 400, nil, fmt.Sprintf("%q", strings.Join(errs, ";"))
		}
		return 200, http.Header{"Content-Type": {"text/plain"}}, ""
	})
	return am
}

func amValidate(a amAlert) error {
	if len(a.Labels) == 0 {
		return errors.New("at least one label pair required")
	}
	for _, m := range []map[string]string{a.Labels, a.Annotations} {
		for k := range m {
			if !labelNameRE.MatchString(k) {
				return fmt.Errorf("invalid label set: invalid name %q", k)
			}
		}
	}
	if !a.EndsAt.IsZero() && a.EndsAt.Before(a.StartsAt) {
		return errors.New("start time must be before end time")
	}
	return nil
}

func labelSetKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k+"\xff"+l[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, "\xff")
}

// stored returns the alerts the API holds.
func (am *alertmanagerAPI) stored() []amAlert {
	am.mu.Lock()
	defer am.mu.Unlock()
	var out []amAlert
	for _, a := range am.alerts {
		out = append(out, a)
	}
	return out
}

func newTestAlertmanager(t *testing.T, token string, urls ...string) *Alertmanager {
	t.Helper()
	var tok Secret
	if token != "" {
		tok, _ = ParseSecret(token)
	}
	a, err := NewAlertmanager(AlertmanagerConfig{Name: "am", URLs: urls, BearerToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	a.now = func() time.Time { return amNow }
	return a
}

func TestAlertmanagerTrigger(t *testing.T) {
	api := newAlertmanagerAPI(t)
	a := newTestAlertmanager(t, "am-token", api.URL+"/")
	n := pagedTrigger()
	n.Result.Alert.Labels["a.b"] = "dotted"
	n.Result.Alert.Labels["a_b"] = "underscored"
	n.Result.Alert.Labels["9lives"] = "digit"
	n.Result.Alert.Labels[LabelDecision] = "forged"
	d, err := a.Send(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	req := api.Last(t)
	if req.Header.Get("Authorization") != "Bearer am-token" {
		t.Errorf("Authorization %q", req.Header.Get("Authorization"))
	}
	got := decodeJSON[[]amAlert](t, req.Body)
	labels := map[string]string{
		"alertname": "LedgerSyncTimeout", "service": "ledger-sync", "instance": "worker-3:9100", "severity": "warning",
		"kubernetes_io_pod": "ledger-7f9", "a_b": "underscored", "_9lives": "digit",
		LabelEpisode: "ep-ledger-1", LabelDecision: "real", LabelRoute: "strong", LabelSeverity: "high",
	}
	want := []amAlert{{
		Labels: labels,
		Annotations: map[string]string{
			"summary": "ledger-sync timeouts", "runbook_url": "https://runbooks.example.com/ledger",
			AnnotationSummary:  "ledger-sync-worker timeout calling ledger API",
			AnnotationReason:   "high severity in prod and memory split: treat it as real.",
			AnnotationReview:   "https://openrecall.example.com/review/b1-7",
			AnnotationMemories: "inc_a known_benign 1.00 by alice: nightly batch retries; inc_b known_benign 0.95",
			AnnotationDeadEnds: "restarted ledger-sync-worker — no effect; raised the timeout; checked the ledger status page",
			AnnotationCost:     "$0.001250",
		},
		StartsAt:     pagedAt,
		EndsAt:       amNow.Add(DefaultAlertmanagerResolveTimeout),
		GeneratorURL: "https://openrecall.example.com/review/b1-7",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("posted alerts (-want +got):\n%s", diff)
	}
	var kept map[string]string
	if err := json.Unmarshal([]byte(d.State[amStateLabels]), &kept); err != nil || !cmp.Equal(kept, labels) {
		t.Errorf("state keeps labels %v (%v), want the posted set", kept, err)
	}
	if d.State[amStateStartsAt] != "2026-03-01T10:00:00Z" {
		t.Errorf("state %v", d.State)
	}
	// An alert without labels of its own still has an alertname.
	n.Result.Alert.Labels = nil
	n.Result.Identity.Rule = ""
	if _, err := a.Send(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if got := decodeJSON[[]amAlert](t, api.Last(t).Body)[0].Labels["alertname"]; got != "ledger-sync-worker timeout calling ledger API" {
		t.Errorf("alertname %q, want the summary line when there is no rule", got)
	}
}

// TestAlertmanagerResolveIsTheSameAlert: the resolve carries the trigger's
// label set exactly, whatever the recovery's result says, so Alertmanager
// (which identifies an alert by its labels) resolves the alert it has
// rather than opening a second one.
func TestAlertmanagerResolveIsTheSameAlert(t *testing.T) {
	api := newAlertmanagerAPI(t)
	a := newTestAlertmanager(t, "", api.URL)
	trigger := pagedTrigger()
	d, err := a.Send(context.Background(), trigger)
	if err != nil {
		t.Fatal(err)
	}
	posted := decodeJSON[[]amAlert](t, api.Last(t).Body)[0]

	resolve := recoveryOf(trigger, d.State)
	// The recovery differs: no decision, a new label, another annotation.
	resolve.Result.Alert.Labels = map[string]string{"alertname": "LedgerSyncTimeout", "pod": "ledger-new"}
	resolve.Result.Alert.Annotations = map[string]string{"summary": "ledger-sync recovered"}
	rd, err := a.Send(context.Background(), resolve)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeJSON[[]amAlert](t, api.Last(t).Body)
	want := []amAlert{{
		Labels: posted.Labels,
		Annotations: map[string]string{"summary": "ledger-sync recovered",
			AnnotationSummary: posted.Annotations[AnnotationSummary], AnnotationReason: posted.Annotations[AnnotationReason],
			AnnotationReview: posted.Annotations[AnnotationReview], AnnotationMemories: posted.Annotations[AnnotationMemories],
			AnnotationDeadEnds: posted.Annotations[AnnotationDeadEnds], AnnotationCost: posted.Annotations[AnnotationCost]},
		StartsAt:     pagedAt,
		EndsAt:       resolve.At, // before the clock: the recovery's time
		GeneratorURL: posted.GeneratorURL,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resolve (-want +got):\n%s", diff)
	}
	stored := api.stored()
	if len(stored) != 1 || !stored[0].EndsAt.Equal(resolve.At) {
		t.Errorf("Alertmanager holds %d alerts %+v, want the one, ended", len(stored), stored)
	}
	if !cmp.Equal(rd.State, d.State) {
		t.Errorf("resolve's state %v, want the trigger's", rd.State)
	}

	// A later trigger of the episode, decided otherwise, is still the
	// same alert.
	again := pagedTrigger()
	again.Prior = d.State
	again.Result.Decision = "escalated"
	again.Result.Alert.Timestamp = pagedAt.Add(time.Hour)
	if _, err := a.Send(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if got := decodeJSON[[]amAlert](t, api.Last(t).Body)[0]; !cmp.Equal(got.Labels, posted.Labels) || !got.StartsAt.Equal(pagedAt) {
		t.Errorf("a later trigger posted labels %v from %s, want the first's", got.Labels, got.StartsAt)
	}

	// A recovery stamped after the clock ends now.
	resolve.At = amNow.Add(time.Hour)
	if _, err := a.Send(context.Background(), resolve); err != nil {
		t.Fatal(err)
	}
	if got := decodeJSON[[]amAlert](t, api.Last(t).Body)[0].EndsAt; !got.Equal(amNow) {
		t.Errorf("endsAt %s, want now %s", got, amNow)
	}
}

func TestAlertmanagerSendsNothingWithoutAnAlert(t *testing.T) {
	api := newAlertmanagerAPI(t)
	a := newTestAlertmanager(t, "", api.URL)
	// No trigger was posted here: nothing to resolve.
	if d, err := a.Send(context.Background(), recoveryOf(pagedTrigger(), nil)); err != nil || d.State != nil {
		t.Errorf("resolve without state: %v %v", d, err)
	}
	// Updates are never posted (an alert that resolved would fire again).
	prior := map[string]string{amStateLabels: `{"alertname":"x"}`}
	if d, err := a.Send(context.Background(), decisionOf(pagedTrigger(), prior)); err != nil || !cmp.Equal(d.State, prior) {
		t.Errorf("update: %v %v", d, err)
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	// A state that is not the trigger's is refused, never guessed at.
	_, err := a.Send(context.Background(), recoveryOf(pagedTrigger(), map[string]string{amStateLabels: "{not json"}))
	if err == nil || !asSendError(err).Permanent {
		t.Errorf("corrupt state: %v, want a permanent error", err)
	}
}

func TestAlertmanagerHighAvailability(t *testing.T) {
	one, two := newAlertmanagerAPI(t), newAlertmanagerAPI(t)
	a := newTestAlertmanager(t, "", one.URL, two.URL)
	if _, err := a.Send(context.Background(), pagedTrigger()); err != nil {
		t.Fatal(err)
	}
	if len(one.stored()) != 1 || len(two.stored()) != 1 {
		t.Errorf("stored %d and %d alerts, want the alert in every member", len(one.stored()), len(two.stored()))
	}
	// One member down: the delivery is retried (to both; a second post is
	// the same alert).
	two.Handle(Replies(func(APIRequest) (int, http.Header, string) { return 503, http.Header{"Retry-After": {"4"}}, "" }))
	_, err := a.Send(context.Background(), pagedTrigger())
	checkClassified(t, err, errorAnswer{status: 503, retryAfter: 4 * time.Second})
	if len(one.Requests()) != 2 {
		t.Errorf("the healthy member got %d posts, want 2", len(one.Requests()))
	}
}

func TestAlertmanagerErrorAnswers(t *testing.T) {
	api := newAlertmanagerAPI(t)
	a := newTestAlertmanager(t, "s3cret-bearer", api.URL)
	// Alertmanager's own 400, from the fake that validates as it does: a
	// startsAt after endsAt.
	n := pagedTrigger()
	n.Result.Alert.Timestamp = amNow.Add(48 * time.Hour)
	if _, err := a.Send(context.Background(), n); err != nil {
		t.Fatalf("a future startsAt: %v (endsAt must follow it)", err)
	}
	for _, tt := range []errorAnswer{
		{name: "400", status: 400, body: `"start time must be before end time"`, permanent: true, bodyHas: "start time must be before end time"},
		{name: "401 from a proxy", status: 401, body: "unauthorized", permanent: true, bodyHas: "unauthorized"},
		{name: "500", status: 500, body: `"failed to create alerts"`, bodyHas: "failed to create alerts"},
		{name: "429 from a proxy", status: 429, header: http.Header{"Retry-After": {"2"}}, retryAfter: 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api.Handle(Replies(func(APIRequest) (int, http.Header, string) { return tt.status, tt.header, tt.body + " s3cret-bearer" }))
			_, err := a.Send(context.Background(), pagedTrigger())
			checkClassified(t, err, tt)
			if strings.Contains(err.Error(), "s3cret-bearer") {
				t.Errorf("error %v shows the bearer token", err)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		_ = CheckNoAnswerInTime(t, newTestAlertmanager(t, "", HangingAPI(t).URL), pagedTrigger(), 150*time.Millisecond)
	})
}

func TestNewAlertmanagerValidates(t *testing.T) {
	tok, _ := ParseSecret("tok\nen")
	for _, tt := range []struct {
		c     AlertmanagerConfig
		field string
	}{
		{AlertmanagerConfig{URLs: []string{"http://am:9093"}}, "name"},
		{AlertmanagerConfig{Name: "am"}, "urls"},
		{AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093", "am:9093"}}, "urls[1]"},
		{AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093?x=1"}}, "urls[0]"},
		{AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093", "http://am:9093/"}}, "urls[1]"},
		{AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093"}, BearerToken: tok}, "bearer_token"},
		{AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093"}, ResolveTimeout: -time.Second}, "resolve_timeout"},
	} {
		_, err := NewAlertmanager(tt.c)
		if err == nil || !strings.Contains(err.Error(), tt.field+":") || strings.Contains(err.Error(), "tok\nen") {
			t.Errorf("%+v: %v, want an error naming %s", tt.c, err, tt.field)
		}
	}
	a, err := NewAlertmanager(AlertmanagerConfig{Name: "am", URLs: []string{"http://am:9093/prefix/"}})
	if err != nil || a.urls[0] != "http://am:9093/prefix/api/v2/alerts" || a.timeout != DefaultAlertmanagerResolveTimeout || a.Type() != TypeAlertmanager {
		t.Errorf("%+v %v", a, err)
	}
}
