package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
)

// notifyConfig is a configuration with two receivers (no secrets to read):
// pager hears of what is escalated or real and critical or high, chat of
// everything.
const notifyConfig = `notify:
  receivers:
    - name: pager
      type: webhook
      url: https://hooks.example.com/pager
    - name: chat
      type: webhook
      url: https://hooks.example.com/chat
  route:
    receiver: chat
    routes:
      - receiver: pager
        matchers: ['decision=~"escalated|real"', 'severity=~"critical|high"']
        continue: true
      - receiver: chat
        matchers: ['route!="bypass"']
`

// outboxDB is a database keyed with the test's key where serve stored two
// analyses with the intents notifyConfig's routes give them (the
// product's rule, notify.Intents): the first, critical, reaches pager and
// chat; the second, low, chat alone. Its pager trigger is a dead letter,
// its chat trigger sent; the second's waits for a retry after a failure.
// It returns the database, the configuration file and the analysis ids.
func outboxDB(t *testing.T) (db, cfgPath string, ids []string) {
	t.Helper()
	ctx := context.Background()
	k := useTestKey(t)
	dir := t.TempDir()
	db, cfgPath = filepath.Join(dir, "memory.db"), filepath.Join(dir, "openrecall.yaml")
	if err := os.WriteFile(cfgPath, []byte(notifyConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := notify.ReadSettings(&cfg.Notify)
	if err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(ctx, db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	sealer := storetest.Keyed(t, st, k)
	ds, err := st.Enqueue(ctx, []openrecall.Delivery{
		{Endpoint: "alerts", Alert: openrecall.Alert{ID: "db-down", Title: "db down", Severity: openrecall.SeverityCritical, Service: "db", Status: openrecall.StatusFiring}},
		{Endpoint: "alerts", Alert: openrecall.Alert{ID: "disk", Title: "disk filling", Severity: openrecall.SeverityLow, Service: "web", Status: openrecall.StatusFiring}},
	}, 0, func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var results []openrecall.Result
	for _, d := range ds {
		r := openrecall.Result{AnalysisID: d.AnalysisID, Batch: "serve", Outcome: openrecall.ResultTriaged, Alert: d.Alert,
			Decision: openrecall.DecisionEscalated,
			Steps:    []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Outcome: openrecall.OutcomeOK}}}
		r.Audit = audit.Entries(r, time.Now())
		results = append(results, r)
		ids = append(ids, d.AnalysisID)
	}
	sink := memory.Sink{Store: st, Seal: sealer.Seal, Notify: notify.Intents(s.Route, s.ReceiverNames())}
	if _, err := sink.PersistBatch(ctx, results, nil); err != nil {
		t.Fatal(err)
	}
	pager, err := st.ClaimIntents(ctx, 10, "pager")
	if err != nil || len(pager) != 1 {
		t.Fatalf("claim pager: %v %+v", err, pager)
	}
	if err := st.IntentDead(ctx, pager[0].ID, "PagerDuty answered 400: invalid routing key"); err != nil {
		t.Fatal(err)
	}
	chat, err := st.ClaimIntents(ctx, 10, "chat")
	if err != nil || len(chat) != 2 {
		t.Fatalf("claim chat: %v %+v", err, chat)
	}
	if err := st.IntentSent(ctx, chat[0].ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.IntentFailed(ctx, chat[1].ID, "503 Service Unavailable", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return db, cfgPath, ids
}

func decodeIntents(t *testing.T, out string) []openrecall.OutboxIntent {
	t.Helper()
	var list []openrecall.OutboxIntent
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not a JSON list of intents: %v\n%s", err, out)
	}
	return list
}

func TestOutboxCommand(t *testing.T) {
	db, cfgPath, ids := outboxDB(t)
	run := func(args ...string) runResult {
		t.Helper()
		return runCLI(t, "", append([]string{"--db", db, "--config", cfgPath}, args...)...)
	}

	r := run("outbox")
	if r.code != exitOK || strings.Count(r.stdout, "\n") != 4 || !strings.HasPrefix(r.stdout, "ID ") {
		t.Fatalf("outbox: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"dead", "sent", "pending", "pager", "chat", "openrecall-" + ids[0], "PagerDuty answered 400", "503 Service Unavailable"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("outbox lacks %q:\n%s", want, r.stdout)
		}
	}
	if r2 := run("outbox", "list"); r2.stdout != r.stdout {
		t.Errorf("outbox list differs from outbox:\n%s\n%s", r2.stdout, r.stdout)
	}

	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"--state", "dead"}, 1}, {[]string{"--state", "sent"}, 1}, {[]string{"--state", "pending"}, 1},
		{[]string{"--receiver", "chat"}, 2}, {[]string{"--analysis", ids[0]}, 2}, {[]string{"--limit", "3"}, 3},
		{[]string{"--receiver", "nobody"}, 0},
	} {
		r := run(append([]string{"outbox", "list", "-o", "json"}, tt.args...)...)
		if got := decodeIntents(t, r.stdout); r.code != exitOK || len(got) != tt.want {
			t.Errorf("outbox %v: exit %d, %d intents, want %d", tt.args, r.code, len(got), tt.want)
		}
	}
	dead := decodeIntents(t, run("outbox", "--state", "dead", "-o", "json").stdout)
	if len(dead) != 1 || dead[0].Receiver != "pager" || dead[0].AnalysisID != ids[0] || dead[0].Kind != openrecall.IntentTrigger {
		t.Fatalf("dead letters: %+v", dead)
	}

	r = run("outbox", "counts", "-o", "json")
	var counts outboxCounts
	if err := json.Unmarshal([]byte(r.stdout), &counts); err != nil || r.code != exitOK {
		t.Fatalf("outbox counts: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	want := []receiverCounts{{Receiver: "chat", Pending: 1}, {Receiver: "pager", Dead: 1}}
	if counts.Pending != 1 || counts.Dead != 1 || counts.OldestPending.IsZero() || !slices.Equal(counts.Receivers, want) {
		t.Errorf("outbox counts: %+v", counts)
	}
	if r := run("outbox", "counts"); r.code != exitOK || !strings.Contains(r.stdout, "oldest pending written") || !strings.Contains(r.stdout, "all ") {
		t.Errorf("outbox counts: exit %d\n%s", r.code, r.stdout)
	}

	id := fmt.Sprint(dead[0].ID)
	r = run("outbox", "retry", "--analyst", "bob", id)
	if r.code != exitOK || !strings.Contains(r.stdout, "retried "+id+": trigger openrecall-"+ids[0]+" to pager about "+ids[0]) {
		t.Fatalf("outbox retry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run("audit", "show", "notify-retry-"+id); r.code != exitOK || !strings.Contains(r.stdout, "retried by bob") {
		t.Errorf("the retry's audit entry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run("audit", "verify"); r.code != exitOK {
		t.Errorf("audit verify after a retry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := decodeIntents(t, run("outbox", "--state", "dead", "-o", "json").stdout); len(got) != 0 {
		t.Errorf("still dead after the retry: %+v", got)
	}
	r = run("outbox", "retry", id, "999999")
	if r.code != exitFailure || !strings.Contains(r.stderr, "not a dead letter") || !strings.Contains(r.stderr, "not found") ||
		!strings.Contains(r.stderr, "2 of 2 not retried") || r.stdout != "" {
		t.Errorf("retry of a pending and an unknown intent: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, args := range [][]string{
		{"outbox", "retry"}, {"outbox", "retry", "x"}, {"outbox", "frob"}, {"outbox", "--state", "lost"},
		{"outbox", "--limit", "-1"}, {"outbox", "counts", "-o", "yaml"},
	} {
		if r := run(args...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, want %d and nothing on stdout\n%s", args, r.code, exitUsage, r.stdout)
		}
	}
}

func TestRoutesTest(t *testing.T) {
	db, cfgPath, ids := outboxDB(t)
	run := func(stdin string, args ...string) runResult {
		t.Helper()
		return runCLI(t, stdin, append([]string{"--db", db, "--config", cfgPath}, args...)...)
	}
	reached := func(r runResult) []string {
		t.Helper()
		var tests []routeTest
		if err := json.Unmarshal([]byte(r.stdout), &tests); err != nil || r.code != exitOK {
			t.Fatalf("routes test: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		var out []string
		for _, tt := range tests {
			var names []string
			for _, rc := range tt.Receivers {
				names = append(names, rc.Receiver)
			}
			out = append(out, strings.Join(names, ",")+"|"+tt.None)
		}
		return out
	}

	// A stored analysis reaches the receivers it has intents for.
	ctx := context.Background()
	st, err := memory.Open(ctx, db, memory.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	for _, id := range ids {
		stored, err := st.Intents(ctx, openrecall.IntentFilter{AnalysisID: id})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := len(stored) - 1; i >= 0; i-- {
			want = append(want, stored[i].Receiver)
		}
		if got := reached(run("", "routes", "test", "--analysis", id, "-o", "json")); !slices.Equal(got, []string{strings.Join(want, ",") + "|"}) {
			t.Errorf("routes test --analysis %s: %v, want the receivers of its intents %v", id, got, want)
		}
	}
	r := run("", "routes", "test", "--analysis", ids[0])
	if r.code != exitOK || !strings.Contains(r.stdout, `trigger  pager via routes[0] (decision=~"escalated|real", severity=~"critical|high")`) ||
		!strings.Contains(r.stdout, `trigger  chat via routes[1] (route!="bypass")`) || !strings.Contains(r.stdout, "route=strong") {
		t.Errorf("routes test --analysis: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	alerts := `{"title":"db down","severity":"critical","service":"db"}
{"title":"disk filling","severity":"low","service":"web"}
{"title":"db down","severity":"critical","status":"resolved"}
`
	tests := []struct {
		args []string
		want []string
	}{
		{nil, []string{"pager,chat|", "chat|", "|a recovery is not routed: it resolves its episode at each receiver that heard of the alert's trigger"}},
		{[]string{"--decision", "known_benign"}, []string{"chat|", "chat|", "|a recovery is not routed: it resolves its episode at each receiver that heard of the alert's trigger"}},
		// Bypassed: chat's route does not match; a critical alert reaches
		// pager alone (a route matched), a low one the default, chat.
		{[]string{"--decision", "real", "--route", "bypass"}, []string{"pager|", "chat|", "|a recovery is not routed: it resolves its episode at each receiver that heard of the alert's trigger"}},
	}
	for _, tt := range tests {
		got := reached(run(alerts, append([]string{"routes", "test", "-o", "json"}, tt.args...)...))
		if !slices.Equal(got, tt.want) {
			t.Errorf("routes test %v: %q, want %q", tt.args, got, tt.want)
		}
	}
	r = run(alerts, "routes", "test", "--route", "bypass", "-o", "jsonl")
	if r.code != exitOK || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stdout, `"why":"chat via the default route"`) {
		t.Errorf("routes test -o jsonl: exit %d\n%s", r.code, r.stdout)
	}

	// No notify section: no receiver, and why.
	r = runCLI(t, alerts, "--db", db, "routes", "test")
	if r.code != exitOK || strings.Count(r.stdout, "no receiver: no receiver is configured (notify.receivers)") != 3 {
		t.Errorf("routes test without receivers: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A receiver whose secret is unset: the routes are read alone, with a
	// warning.
	unset := filepath.Join(t.TempDir(), "unset.yaml")
	withSecret := strings.Replace(notifyConfig, "type: webhook\n      url: https://hooks.example.com/pager",
		"type: pagerduty\n      routing_key: env:OPENRECALL_TEST_UNSET_KEY", 1)
	if err := os.WriteFile(unset, []byte(withSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, alerts, "--config", unset, "routes", "test", "-o", "json")
	if got := reached(r); !slices.Equal(got, tests[0].want) || !strings.Contains(r.stderr, "OPENRECALL_TEST_UNSET_KEY is empty or unset") {
		t.Errorf("routes test with a secret unset: %q\n%s", got, r.stderr)
	}

	// A broken route is an error that names its line.
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte(strings.Replace(notifyConfig, "- receiver: chat\n", "- receiver: nobody\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, alerts, "--config", broken, "routes", "test"); r.code != exitFailure || !strings.Contains(r.stderr, `no receiver "nobody" is configured`) {
		t.Errorf("routes test with a broken route: exit %d\n%s", r.code, r.stderr)
	}

	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"routes", "test", "--analysis", ids[0], "x.json"}, exitUsage},
		{[]string{"routes", "test", "--analysis", ids[0], "--decision", "real"}, exitUsage},
		{[]string{"routes", "test", "--decision", "maybe"}, exitUsage},
		{[]string{"routes", "test", "--route", "none"}, exitUsage},
		{[]string{"routes", "test", "--analysis", "serve-999999"}, exitFailure},
		{[]string{"routes", "frob"}, exitUsage},
	} {
		if r := run("", tt.args...); r.code != tt.code || r.stdout != "" {
			t.Errorf("%v: exit %d, want %d and nothing on stdout\n%s%s", tt.args, r.code, tt.code, r.stdout, r.stderr)
		}
	}
	if r := run("", "routes", "test"); r.code != exitPartial || !strings.Contains(r.stderr, "no alerts in standard input") {
		t.Errorf("routes test on no alerts: exit %d\n%s", r.code, r.stderr)
	}
}
