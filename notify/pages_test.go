package notify_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/notify"
)

// pagesQueue is a small queue as intake reads it: one Alertmanager
// notification of three firings (line 1), two alerts of their own (lines
// 2 and 3) and a recovery (line 4, an Alertmanager notification too).
const pagesQueue = `{"receiver":"team","status":"firing","version":"4","groupKey":"{}:{service=\"checkout\"}","alerts":[` +
	`{"status":"firing","labels":{"alertname":"CheckoutErrors","service":"checkout","severity":"critical"},"startsAt":"2026-11-30T03:00:00Z"},` +
	`{"status":"firing","labels":{"alertname":"CheckoutLatency","service":"checkout","severity":"warning"},"startsAt":"2026-11-30T03:00:01Z"},` +
	`{"status":"firing","labels":{"alertname":"CheckoutSaturation","service":"checkout","severity":"critical"},"startsAt":"2026-11-30T03:00:02Z"}]}
{"id":"disk-1","title":"DiskFull","text":"/var at 97% on db-1","severity":"high","service":"db"}
{"id":"lag-1","title":"QueueLag","text":"orders queue 20k behind","severity":"medium","service":"orders"}
{"receiver":"team","status":"resolved","version":"4","groupKey":"{}:{service=\"checkout\"}","alerts":[` +
	`{"status":"resolved","labels":{"alertname":"CheckoutErrors","service":"checkout","severity":"critical"},"startsAt":"2026-11-30T03:00:00Z","endsAt":"2026-11-30T03:10:00Z"}]}
`

// pagesDecisions is what triage decided of each firing, by title.
var pagesDecisions = map[string]openrecall.Decision{
	"CheckoutErrors":     openrecall.DecisionEscalated,
	"CheckoutLatency":    openrecall.DecisionKnownBenign,
	"CheckoutSaturation": openrecall.DecisionEscalated,
	"DiskFull":           openrecall.DecisionEscalated,
	"QueueLag":           openrecall.DecisionReal,
}

// pagesResults reads queue with intake and makes each record the result
// a run would: a firing triaged with its decision from pagesDecisions, a
// recovery recorded.
func pagesResults(t *testing.T, queue string) []openrecall.Result {
	t.Helper()
	rd := intake.NewReader(strings.NewReader(queue), intake.Options{Source: "queue.jsonl"})
	var out []openrecall.Result
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Err != nil {
			t.Fatalf("intake refused %s: %s", rec.Err.Position, rec.Err.Reason)
		}
		a := rec.Alert
		r := openrecall.Result{Position: a.Position, Alert: a, Outcome: openrecall.ResultResolved}
		if openrecall.Triaged(a.Status) {
			d, ok := pagesDecisions[a.Title]
			if !ok {
				t.Fatalf("no decision for %q", a.Title)
			}
			r.Outcome, r.Decision = openrecall.ResultTriaged, d
		}
		out = append(out, r)
	}
}

func matcher(t *testing.T, s string) notify.Matcher {
	t.Helper()
	m, err := notify.ParseMatcher(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func countPages(root *notify.Route, results []openrecall.Result) notify.Pages {
	c := notify.NewPageCounter(root)
	for _, r := range results {
		c.Add(r)
	}
	return c.Pages()
}

// TestPagesHandCounted counts the pages of pagesQueue by hand. Without
// openrecall: the notification of line 1 is one page for its three
// firings, lines 2 and 3 one each, the recovery none: 3. With a route
// that sends only what was escalated: the notification of line 1 (two of
// its firings escalated) and line 2: 2 pages, from 3 trigger intents.
func TestPagesHandCounted(t *testing.T) {
	results := pagesResults(t, pagesQueue)
	if len(results) != 6 {
		t.Fatalf("intake read %d records, want 6 (3 firings of one webhook, 2 alerts, a recovery)", len(results))
	}
	escalatedOnly := &notify.Route{Routes: []*notify.Route{{Receiver: "pager", Matchers: []notify.Matcher{matcher(t, `decision="escalated"`)}}}}
	twoReceivers := &notify.Route{Routes: []*notify.Route{
		{Receiver: "pager", Matchers: []notify.Matcher{matcher(t, `decision="escalated"`)}, Continue: true},
		{Receiver: "chat", Matchers: []notify.Matcher{matcher(t, `severity="critical"`)}},
	}}
	tests := []struct {
		name    string
		root    *notify.Route
		want    notify.Pages
		avoided int
		percent string
	}{
		{"escalated only", escalatedOnly, notify.Pages{Firings: 5, Without: 3, With: 3, Notifications: 3}, 0, "0.0%"},
		// Escalated or real: QueueLag (real) pages too. openrecall pages
		// per alert episode, so the webhook's firings it sends on are a
		// page each: more pages than Alertmanager's one, said as it is.
		{"default paging route", notify.DefaultPagingRoute(), notify.Pages{Firings: 5, Without: 3, With: 4, Notifications: 4}, -1, "-33.3%"},
		// Two receivers for CheckoutErrors and CheckoutSaturation (escalated
		// and critical): more notifications, the same pages.
		{"two receivers", twoReceivers, notify.Pages{Firings: 5, Without: 3, With: 3, Notifications: 5}, 0, "0.0%"},
		{"no route", nil, notify.Pages{Firings: 5, Without: 3, With: 0, Notifications: 0}, 3, "100.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := countPages(tt.root, results)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
			if got.Avoided() != tt.avoided {
				t.Errorf("Avoided() = %d, want %d", got.Avoided(), tt.avoided)
			}
			if s := got.String(); !strings.HasSuffix(s, ", "+tt.percent+")") {
				t.Errorf("String() = %q, want it to end with %s", s, tt.percent)
			}
		})
	}
}

// TestPagesNotificationGroups holds the grouping rule to intake's
// positions: the alerts[] items of one webhook share its source and line;
// another line, another source, another format or an index that starts
// again is another notification.
func TestPagesNotificationGroups(t *testing.T) {
	firing := func(format, source string, line, index int) openrecall.Result {
		return openrecall.Result{Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionEscalated,
			Alert:    openrecall.Alert{Format: format},
			Position: openrecall.Position{Source: source, Line: line, Index: index, HasIndex: index >= 0}}
	}
	const am = "alertmanager"
	tests := []struct {
		name    string
		results []openrecall.Result
		without int
	}{
		{"one webhook", []openrecall.Result{firing(am, "q", 1, 0), firing(am, "q", 1, 1), firing(am, "q", 1, 2)}, 1},
		{"two lines", []openrecall.Result{firing(am, "q", 1, 0), firing(am, "q", 2, 0)}, 2},
		{"two sources", []openrecall.Result{firing(am, "a", 1, 0), firing(am, "b", 1, 1)}, 2},
		{"a JSON array's elements on one line", []openrecall.Result{firing("json", "q", 1, 0), firing("json", "q", 1, 1)}, 2},
		{"two webhooks in a one-line array", []openrecall.Result{firing(am, "q", 1, 0), firing(am, "q", 1, 1), firing(am, "q", 1, 0)}, 2},
		{"an item refused or recovered between", []openrecall.Result{firing(am, "q", 1, 0),
			{Outcome: openrecall.ResultResolved, Alert: openrecall.Alert{Format: am}, Position: openrecall.Position{Source: "q", Line: 1, Index: 1, HasIndex: true}},
			firing(am, "q", 1, 2)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := countPages(notify.DefaultPagingRoute(), tt.results)
			want := notify.Pages{Firings: 0, Without: tt.without}
			for _, r := range tt.results {
				if r.Outcome == openrecall.ResultTriaged {
					want.Firings++
					want.With++
					want.Notifications++
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPagesWithCountsEachFiringSent: with openrecall, each firing the
// route sends is a page (one per alert episode), whichever of a
// notification's firings they are; without it, the notification is one.
func TestPagesWithCountsEachFiringSent(t *testing.T) {
	item := func(i int, d openrecall.Decision) openrecall.Result {
		return openrecall.Result{Outcome: openrecall.ResultTriaged, Decision: d, Alert: openrecall.Alert{Format: "alertmanager"},
			Position: openrecall.Position{Source: "q", Line: 1, Index: i, HasIndex: true}}
	}
	got := countPages(notify.DefaultPagingRoute(), []openrecall.Result{
		item(0, openrecall.DecisionKnownBenign), item(1, openrecall.DecisionReal), item(2, openrecall.DecisionEscalated)})
	if want := (notify.Pages{Firings: 3, Without: 1, With: 2, Notifications: 2}); got != want {
		t.Errorf("pages = %+v, want %+v", got, want)
	}
}

func TestDefaultPagingRoute(t *testing.T) {
	root := notify.DefaultPagingRoute()
	for _, d := range []openrecall.Decision{openrecall.DecisionEscalated, openrecall.DecisionReal,
		openrecall.DecisionKnownBenign, openrecall.DecisionFalsePositive, openrecall.DecisionDuplicate} {
		got := root.Explain(notify.Subject{Fields: notify.SubjectFields{Decision: string(d)}})
		want := []string(nil)
		if d == openrecall.DecisionEscalated || d == openrecall.DecisionReal {
			want = []string{`page via routes[0] (decision=~"escalated|real")`}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", d, diff)
		}
	}
}

// TestReadRoute reads the route of a notify: section without its
// receivers' secrets (none of the environment variables is set).
func TestReadRoute(t *testing.T) {
	const receiversYAML = `  receivers:
    - name: pager
      type: pagerduty
      routing_key: env:OPENRECALL_TEST_UNSET_PD_KEY
    - name: chat
      type: slack
      token: env:OPENRECALL_TEST_UNSET_SLACK
      channel: "#oncall"
`
	tests := []struct {
		name    string
		conf    string
		want    []string // the receivers an escalated critical result and a benign one reach; nil for no route
		wantErr string
	}{
		{"no section", "", nil, ""},
		{"no route", "notify:\n" + receiversYAML, nil, ""},
		{"route", "notify:\n" + receiversYAML + `  route:
    receiver: chat
    routes:
      - receiver: pager
        matchers: ['decision=~"escalated|real"', 'severity="critical"']
        continue: true
`, []string{"pager", "chat"}, ""},
		{"unknown receiver", "notify:\n" + receiversYAML + "  route:\n    receiver: email\n", nil, `line 11: route.receiver: no receiver "email" is configured`},
		{"not a mapping", "notify: [1]\n", nil, "line 1: notify: want a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc struct {
				Notify yaml.Node `yaml:"notify"`
			}
			if err := yaml.Unmarshal([]byte(tt.conf), &doc); err != nil {
				t.Fatal(err)
			}
			root, err := notify.ReadRoute(&doc.Notify)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if root != nil {
					t.Fatalf("route = %+v, want none", root)
				}
				return
			}
			var got []string
			for _, d := range []string{"escalated", "known_benign"} {
				for _, m := range root.Receivers(notify.Subject{Fields: notify.SubjectFields{Decision: d, Severity: "critical"}}) {
					got = append(got, m.Receiver)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("receivers (-want +got):\n%s", diff)
			}
		})
	}
}
