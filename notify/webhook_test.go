package notify_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// update rewrites the recorded request bodies under testdata/.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./notify -run %s -update to record it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the recorded body:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// indented re-indents a JSON body for a golden file.
func indented(t *testing.T, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		t.Fatalf("the body is not JSON: %v\n%s", err, body)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

var (
	firedAt = time.Date(2026, 3, 14, 2, 17, 0, 0, time.UTC)
	madeAt  = time.Date(2026, 3, 14, 2, 17, 3, 0, time.UTC)
)

// escalatedResult is a result left to a person: the strong model judged
// it, the guard refused to close it.
func escalatedResult() openrecall.Result {
	return openrecall.Result{
		Outcome: openrecall.ResultTriaged, AnalysisID: "run1-000007", Batch: "run1",
		Alert: openrecall.Alert{ID: "am-5f1c", Format: "alertmanager", Title: "Disk almost full on db-1",
			Text: "/var/lib/postgresql is 93% full", Severity: openrecall.SeverityCritical, Service: "postgres",
			Environment: "prod", Status: openrecall.StatusFiring, Sender: "alertmanager", Rule: "DiskFull",
			Labels:      map[string]string{"alertname": "DiskFull", "instance": "db-1:9100", "severity": "critical"},
			Annotations: map[string]string{"runbook_url": "https://runbooks.example.com/disk"}, Timestamp: firedAt},
		Identity: openrecall.Identity{Rule: "DiskFull", Service: "postgres"},
		Matches: []openrecall.Match{
			{Incident: openrecall.Incident{ID: "mem-12", Decision: openrecall.DecisionKnownBenign, Analyst: "bob", Note: "autovacuum, cleared in 50 min"}, Score: 0.93},
			{Incident: openrecall.Incident{ID: "mem-40", Decision: openrecall.DecisionKnownBenign}, Score: 0.88},
			{Incident: openrecall.Incident{ID: "mem-77", Decision: openrecall.DecisionReal, Note: "disk failure"}, Score: 0.41, Related: true},
		},
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, Confidence: 0.62, Supporting: []string{"mem-12", "mem-40", "mem-99"},
			EscalationReason: "inconsistent memory"},
		Decision: openrecall.DecisionEscalated,
		Analysis: &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Confidence: 0.71,
			Summary:    "Nightly vacuum fills the disk for an hour; it cleared itself the last four times.",
			Hypotheses: []string{"autovacuum backlog"}, NextSteps: []string{"check pg_stat_progress_vacuum"},
			SkipPaths: []string{"log rotation (ruled out 2026-02-02)"}, Model: "strong-1", Live: true},
		Steps: []openrecall.RouteStep{
			{Step: openrecall.StepIntake, Reason: "alertmanager webhook", Outcome: openrecall.OutcomeOK},
			{Step: openrecall.StepAnalysis, Tier: openrecall.TierStrong, Live: true, Outcome: openrecall.OutcomeRefused,
				Reason: "severity critical above the memories' medium: a person decides"},
		},
		Cost: 1_250_000, Baseline: 9_000_000,
	}
}

// bypassedResult is a result memory closed without a model call.
func bypassedResult() openrecall.Result {
	r := escalatedResult()
	r.AnalysisID, r.Decision, r.Bypassed = "run1-000008", openrecall.DecisionKnownBenign, true
	r.Alert.Severity, r.Alert.Annotations, r.Alert.Timestamp = openrecall.SeverityLow, nil, time.Time{}
	r.Analysis = &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Confidence: 0.95, Summary: "Closed from memory.", Model: "memory"}
	r.Steps = []openrecall.RouteStep{{Step: openrecall.StepMemoryBypass, Skipped: true, Outcome: openrecall.OutcomeOK,
		Reason: "memory vouches for a benign, non-attack alert"}}
	r.Cost = 0
	return r
}

// recoveryResult is the sender's recovery of escalatedResult's alert:
// recorded, not triaged.
func recoveryResult() openrecall.Result {
	return openrecall.Result{Outcome: openrecall.ResultResolved, AnalysisID: "run1-000031", Batch: "run1",
		Alert: openrecall.Alert{ID: "am-5f1c", Title: "Disk almost full on db-1", Severity: openrecall.SeverityCritical,
			Service: "postgres", Environment: "prod", Status: openrecall.StatusResolved, Sender: "alertmanager"},
		Identity: openrecall.Identity{Rule: "DiskFull", Service: "postgres"}}
}

const reviewURL = "https://openrecall.example.com/review/run1-000007"

func trigger() notify.Notification {
	return notify.Notification{Kind: notify.KindTrigger, Key: "am-5f1c", ID: "ntf-0001", Result: escalatedResult(),
		ReviewURL: reviewURL, At: madeAt}
}

func resolve(prior map[string]string) notify.Notification {
	return notify.Notification{Kind: notify.KindResolve, Key: "am-5f1c", ID: "ntf-0002", Result: recoveryResult(),
		ReviewURL: reviewURL, Prior: prior, At: madeAt.Add(40 * time.Minute)}
}

func decided(prior map[string]string) notify.Notification {
	return notify.Notification{Kind: notify.KindUpdate, Key: "am-5f1c", ID: "ntf-0003", Result: escalatedResult(),
		Decision:  &notify.Decided{Decision: openrecall.DecisionKnownBenign, Analyst: "alice", Note: "vacuum again; raised the disk alert threshold"},
		ReviewURL: reviewURL, Prior: prior, At: madeAt.Add(12 * time.Minute)}
}

func secret(t *testing.T, s string) notify.Secret {
	t.Helper()
	v, err := notify.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const hookSecret = "whsec-Zq81mN4"

var signedAt = time.Unix(1773454630, 0)

func newWebhook(t *testing.T, url string, key string) *notify.Webhook {
	t.Helper()
	cfg := notify.WebhookConfig{Name: "soar", URL: secret(t, url), Now: func() time.Time { return signedAt }, Timeout: 2 * time.Second}
	if key != "" {
		cfg.Secret = secret(t, key)
	}
	w, err := notify.NewWebhook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// verify checks a request's signature as a receiving server does: the
// timestamp within five minutes of its clock, the HMAC-SHA256 of
// "<timestamp>.<raw body>" under the shared secret, compared in constant
// time. It is written from docs/webhook.schema.json's description, not
// from the receiver's code.
func verify(key string, h http.Header, body []byte, now time.Time) error {
	ts := h.Get("X-Openrecall-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q: %v", ts, err)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %s off", ts, d)
	}
	sig, ok := strings.CutPrefix(h.Get("X-Openrecall-Signature"), "v1=")
	if !ok {
		return errors.New("no v1 signature")
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + "." + string(body)))
	if !hmac.Equal(got, m.Sum(nil)) {
		return errors.New("signature mismatch")
	}
	return nil
}

func TestWebhookSendsSignedBody(t *testing.T) {
	tests := []struct {
		name string
		n    notify.Notification
	}{
		{"webhook_trigger.json", trigger()},
		{"webhook_resolve.json", resolve(nil)},
		{"webhook_update.json", decided(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := notify.NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) { w.WriteHeader(http.StatusAccepted) })
			d, err := newWebhook(t, srv.URL+"/hooks/openrecall", hookSecret).Send(context.Background(), tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if d.State != nil {
				t.Errorf("delivery state = %v, want none", d.State)
			}
			req := srv.Only(t)
			if req.Method != http.MethodPost || req.Path != "/hooks/openrecall" {
				t.Errorf("request %s %s, want POST /hooks/openrecall", req.Method, req.Path)
			}
			for name, want := range map[string]string{"Content-Type": "application/json", "X-Openrecall-Notification-Id": tt.n.ID,
				"X-Openrecall-Timestamp": "1773454630"} {
				if got := req.Header.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if err := verify(hookSecret, req.Header, req.Body, signedAt.Add(30*time.Second)); err != nil {
				t.Errorf("a receiving server refuses the signature: %v", err)
			}
			golden(t, tt.name, indented(t, req.Body))
		})
	}
}

func TestWebhookSignatureRefusesTampering(t *testing.T) {
	srv := notify.NewFakeAPI(t, nil)
	if _, err := newWebhook(t, srv.URL, hookSecret).Send(context.Background(), trigger()); err != nil {
		t.Fatal(err)
	}
	req := srv.Only(t)
	now := signedAt.Add(time.Minute)
	if err := verify(hookSecret, req.Header, req.Body, now); err != nil {
		t.Fatalf("the untouched request is refused: %v", err)
	}
	tampered := bytes.Replace(req.Body, []byte(`"decision":"escalated"`), []byte(`"decision":"known_benign"`), 1)
	if bytes.Equal(tampered, req.Body) {
		t.Fatal("the test's tampering changed nothing")
	}
	if err := verify(hookSecret, req.Header, tampered, now); err == nil {
		t.Error("a tampered body passes verification")
	}
	h := req.Header.Clone()
	h.Set("X-Openrecall-Timestamp", "1773454631")
	if err := verify(hookSecret, h, req.Body, now); err == nil {
		t.Error("a changed timestamp passes verification")
	}
	if err := verify("another-secret", req.Header, req.Body, now); err == nil {
		t.Error("another secret verifies the signature")
	}
	if err := verify(hookSecret, req.Header, req.Body, signedAt.Add(10*time.Minute)); err == nil {
		t.Error("a replay ten minutes later passes verification")
	}
	if got, want := req.Header.Get("X-Openrecall-Signature"), "v1="+notify.WebhookSignature(hookSecret, "1773454630", req.Body); got != want {
		t.Errorf("signature header %q, WebhookSignature says %q", got, want)
	}
}

func TestWebhookWithoutSecretIsUnsigned(t *testing.T) {
	srv := notify.NewFakeAPI(t, nil)
	if _, err := newWebhook(t, srv.URL, "").Send(context.Background(), trigger()); err != nil {
		t.Fatal(err)
	}
	req := srv.Only(t)
	for _, h := range []string{"X-Openrecall-Signature", "X-Openrecall-Timestamp"} {
		if v, ok := req.Header[h]; ok {
			t.Errorf("unsigned request carries %s: %q", h, v)
		}
	}
	if req.Header.Get("X-Openrecall-Notification-Id") != "ntf-0001" {
		t.Error("unsigned request lacks the notification id")
	}
}

// TestWebhookCarriesTheEscalation holds the body to the escalation POST
// of server.webhook_url it replaces (runner.Escalation): each of that
// body's members has its place and value in the new one.
func TestWebhookCarriesTheEscalation(t *testing.T) {
	r := escalatedResult()
	b, err := json.Marshal(notify.NewWebhookBody("soar", trigger()))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	// The old member, where v1 carries it, and the value the old body had.
	old := []struct{ member, path, want string }{
		{"analysis_id", "analysis_id", r.AnalysisID},
		{"alert_id", "alert.id", r.Alert.ID},
		{"title", "alert.title", r.Alert.Title},
		{"severity", "alert.severity", string(r.Alert.Severity)},
		{"service", "alert.service", r.Alert.Service},
		{"decision", "decision", string(r.Decision)},
		{"reason", "reason", "severity critical above the memories' medium: a person decides"},
		{"result_path", "result_path", "/api/v1/results/" + r.AnalysisID},
	}
	for _, o := range old {
		var v any = body
		for _, part := range strings.Split(o.path, ".") {
			m, _ := v.(map[string]any)
			v = m[part]
		}
		if v != o.want {
			t.Errorf("the escalation's %s is %q; v1's %s is %v", o.member, o.want, o.path, v)
		}
	}
}

func TestWebhookBodyMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	bypass := trigger()
	bypass.Result, bypass.ReviewURL = bypassedResult(), ""
	unanalysed := trigger()
	unanalysed.Result.Analysis, unanalysed.Result.EscalatedWithoutAnalysis, unanalysed.Result.Triage.Supporting = nil, true, nil
	tests := []struct {
		name string
		n    notify.Notification
	}{
		{"trigger", trigger()},
		{"resolve", resolve(map[string]string{"decision": "escalated"})},
		{"update", decided(nil)},
		{"bypass", bypass},
		{"unanalysed", unanalysed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(notify.NewWebhookBody("soar", tt.n))
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if errs := schema.validate(doc); len(errs) > 0 {
				t.Errorf("the body breaks docs/webhook.schema.json:\n%s\n%s", strings.Join(errs, "\n"), b)
			}
		})
	}
}

// TestSchemaValidatorRefuses keeps the validator above honest: bodies
// that break the schema are refused, each for its reason.
func TestSchemaValidatorRefuses(t *testing.T) {
	schema := loadSchema(t)
	b, _ := json.Marshal(notify.NewWebhookBody("soar", trigger()))
	tests := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"missing key", func(m map[string]any) { delete(m, "key") }, `"key" is required`},
		{"wrong version", func(m map[string]any) { m["version"] = "openrecall.notification/v2" }, "version"},
		{"unknown kind", func(m map[string]any) { m["kind"] = "ack" }, "kind"},
		{"cost as text", func(m map[string]any) { m["cost"].(map[string]any)["nano_usd"] = "1250000" }, "nano_usd"},
		{"bad time", func(m map[string]any) { m["at"] = "yesterday" }, "date-time"},
		{"undocumented member", func(m map[string]any) { m["pages"] = 3 }, `"pages" is not in the schema`},
		{"nested undocumented member", func(m map[string]any) { m["alert"].(map[string]any)["fingerprint"] = "x" }, `"fingerprint" is not in the schema`},
		{"update without decided", func(m map[string]any) { m["kind"] = "update" }, `"decided" is required`},
		{"label not text", func(m map[string]any) { m["alert"].(map[string]any)["labels"].(map[string]any)["n"] = 1.0 }, "labels.n"},
		{"bad decision", func(m map[string]any) { m["decision"] = "ignored" }, "decision"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			tt.change(m)
			errs := schema.validate(m)
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("errors %q, want one naming %q", errs, tt.want)
			}
		})
	}
}

// jsonSchema is the subset of JSON Schema (2020-12) the webhook's schema
// uses: type, const, enum, properties, required, additionalProperties,
// items, minLength, maxLength, minimum, maximum, pattern, format
// (date-time, uri), $ref to #/$defs, if/then, allOf. It is strict where the schema
// is lenient: a member the schema does not describe is an error, so the
// body cannot grow a member the documentation lacks.
type jsonSchema struct{ root map[string]any }

func loadSchema(t *testing.T) jsonSchema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "webhook.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatalf("docs/webhook.schema.json: %v", err)
	}
	return jsonSchema{root}
}

func (s jsonSchema) validate(doc any) []string { return s.check(s.root, doc, "", true) }

// check validates v at path at against sch; strict refuses members sch
// does not describe (off inside if and then, which describe a part).
func (s jsonSchema) check(sch map[string]any, v any, at string, strict bool) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, a...)) }
	if ref, ok := sch["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		def, _ := s.root["$defs"].(map[string]any)[name].(map[string]any)
		if !found || def == nil {
			return []string{at + ": unresolvable $ref " + ref}
		}
		errs = append(errs, s.check(def, v, at, strict)...)
	}
	if c, ok := sch["const"]; ok && v != c {
		fail("%v is not the constant %v", v, c)
	}
	if enum, ok := sch["enum"].([]any); ok && !slices.Contains(enum, v) {
		fail("%v is not one of %v", v, enum)
	}
	if typ, ok := sch["type"].(string); ok && !isType(v, typ) {
		fail("%v (%T) is not of type %s", v, v, typ)
		return errs
	}
	switch x := v.(type) {
	case string:
		if n, ok := sch["minLength"].(float64); ok && float64(len([]rune(x))) < n {
			fail("shorter than %v", n)
		}
		if n, ok := sch["maxLength"].(float64); ok && float64(len([]rune(x))) > n {
			fail("longer than %v", n)
		}
		if p, ok := sch["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			fail("%q does not match %s", x, p)
		}
		switch sch["format"] {
		case "date-time":
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				fail("%q is not a date-time", x)
			}
		case "uri":
			if !regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(x) {
				fail("%q is not a URI", x)
			}
		}
	case float64:
		if n, ok := sch["minimum"].(float64); ok && x < n {
			fail("%v is below %v", x, n)
		}
		if n, ok := sch["maximum"].(float64); ok && x > n {
			fail("%v is above %v", x, n)
		}
	case []any:
		if items, ok := sch["items"].(map[string]any); ok {
			for i, it := range x {
				errs = append(errs, s.check(items, it, fmt.Sprintf("%s[%d]", at, i), strict)...)
			}
		}
	case map[string]any:
		props, _ := sch["properties"].(map[string]any)
		for _, r := range asStrings(sch["required"]) {
			if _, ok := x[r]; !ok {
				fail("%q is required", r)
			}
		}
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			path := strings.TrimPrefix(at+"."+k, ".")
			switch p, ok := props[k].(map[string]any); {
			case ok:
				errs = append(errs, s.check(p, x[k], path, strict)...)
			case sch["additionalProperties"] != nil:
				if ap, ok := sch["additionalProperties"].(map[string]any); ok {
					errs = append(errs, s.check(ap, x[k], path, strict)...)
				}
			case strict && props != nil:
				fail("%q is not in the schema", k)
			}
		}
	}
	if all, ok := sch["allOf"].([]any); ok {
		for _, sub := range all {
			if m, ok := sub.(map[string]any); ok {
				errs = append(errs, s.check(m, v, at, false)...)
			}
		}
	}
	if cond, ok := sch["if"].(map[string]any); ok && len(s.check(cond, v, at, false)) == 0 {
		if then, ok := sch["then"].(map[string]any); ok {
			errs = append(errs, s.check(then, v, at, false)...)
		}
	}
	return errs
}

func isType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "null":
		return v == nil
	}
	return false
}

func asStrings(v any) []string {
	var out []string
	xs, _ := v.([]any)
	for _, x := range xs {
		out = append(out, x.(string))
	}
	return out
}
