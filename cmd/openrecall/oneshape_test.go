package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCLIAndAPIAgree holds each fact the command line prints with -o json
// and the server serves to one JSON shape: the same fields, and the same
// values where both read the same memory (the server is idle while the
// commands run beside it). It covers recall, retain, results (their shape
// against analyze's, their audit against audit show), cost, audit verify,
// alert groups and the exception list; memory stats and audit head are
// not served.
func TestCLIAndAPIAgree(t *testing.T) {
	bin := buildBinary(t)
	db := seededDB(t)
	const ingest, read, retain = "ingest-shape-0123456789", "read-shape-0123456789", "retain-shape-0123456789"
	// A retain token writes in its name: alice's, named in the config.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  tokens:\n    - name: alice\n      token_env: ALICE_TOKEN\n      scopes: [retain]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENRECALL_INGEST_TOKEN=" + ingest, "OPENRECALL_READ_TOKEN=" + read, "ALICE_TOKEN=" + retain}
	s := startServe(t, bin, db, env, "--workers", "1", "--config", cfg)

	queue, err := os.ReadFile("../../examples/queue.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// One generic alert alone, so that its analysis id is known, then the
	// whole example queue.
	alert := strings.Split(string(queue), "\n")[2]
	alertFile := filepath.Join(t.TempDir(), "alert.json")
	if err := os.WriteFile(alertFile, []byte(alert+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var one, all e2eAccepted
	if code := s.call(http.MethodPost, "/api/v1/alerts", ingest, strings.NewReader(alert), &one); code != http.StatusAccepted || len(one.Analyses) != 1 {
		t.Fatalf("post one alert: %d %+v", code, one)
	}
	id := one.Analyses[0].AnalysisID
	if code := s.call(http.MethodPost, "/api/v1/alerts", ingest, strings.NewReader(string(queue)), &all); code != http.StatusAccepted {
		t.Fatalf("post the queue: %d %+v", code, all)
	}
	if got := s.allResults(read, 1+all.Accepted); len(got) != 1+all.Accepted {
		t.Fatalf("%d results, want %d", len(got), 1+all.Accepted)
	}

	// cli runs a command of the binary on the server's database and
	// decodes its -o json document.
	cli := func(stdin string, args ...string) any {
		t.Helper()
		code, out, errOut := runBinary(t, bin, stdin, append([]string{"--db", db}, args...)...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil {
			t.Fatalf("%v beside the server: exit %d, %v\n%s%s", args, code, err, out, errOut)
		}
		return v
	}
	api := func(method, path, token, body string, want int) any {
		t.Helper()
		var v any
		if code := s.call(method, path, token, strings.NewReader(body), &v); code != want {
			t.Fatalf("%s %s: %d, want %d: %v", method, path, code, want, v)
		}
		return v
	}
	same := func(what string, cliV, apiV any) {
		t.Helper()
		if diff := cmp.Diff(cliV, apiV); diff != "" {
			t.Errorf("%s: the command line and the API differ (-cli +api):\n%s", what, diff)
		}
	}

	// Retain: the API stores the decision, the command retaining it again
	// finds the same memory (created aside).
	retained := api(http.MethodPost, "/api/v1/retain", retain, `{"alert":`+alert+`,"decision":"known_benign","note":"one shape","analyst":"alice"}`, http.StatusCreated).(map[string]any)
	again := cli("", "retain", alertFile, "--decision", "known_benign", "--note", "one shape", "--analyst", "alice", "-o", "json").(map[string]any)
	if retained["created"] != true || again["created"] != false {
		t.Errorf("retain: created %v by the API and %v by the command, want true then false", retained["created"], again["created"])
	}
	delete(retained, "created")
	delete(again, "created")
	same("retain", again, retained)

	// Recall, by the alert and by its fingerprint.
	byAlert := cli(alert, "recall", "-o", "json", "-")
	same("recall", byAlert, api(http.MethodGet, "/api/v1/recall?analysis_id="+id, read, "", http.StatusOK))
	if m := byAlert.(map[string]any)["matches"].([]any); len(m) == 0 {
		t.Errorf("recall found nothing for the alert just retained: %v", byAlert)
	}
	fp := canonical(t, byAlert.(map[string]any)["fingerprint"])
	same("recall --fingerprint", cli("", "recall", "-o", "json", "--fingerprint", fp),
		api(http.MethodGet, "/api/v1/recall?fingerprint="+url.QueryEscape(fp), read, "", http.StatusOK))

	// Results: a served result has the fields analyze prints, and its
	// audit is what audit show prints.
	served := api(http.MethodGet, "/api/v1/results/"+id, read, "", http.StatusOK).(map[string]any)["result"].(map[string]any)
	r := runCLI(t, alert, "--db", seededDB(t), "analyze", "-o", "jsonl", "-")
	var analysed map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &analysed); r.code != exitOK || err != nil {
		t.Fatalf("analyze -o jsonl: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	if diff := cmp.Diff(fieldPaths(analysed, ""), fieldPaths(served, "")); diff != "" {
		t.Errorf("a result: analyze -o jsonl and GET /api/v1/results/ID name different fields (-cli +api):\n%s", diff)
	}
	same("audit show", cli("", "audit", "show", "-o", "json", id), served["audit"])

	// Cost and audit verification, value for value.
	same("cost", cli("", "cost", "-o", "json"), api(http.MethodGet, "/api/v1/cost", read, "", http.StatusOK))
	same("audit verify", cli("", "audit", "verify", "-o", "json"), api(http.MethodGet, "/api/v1/audit/verify", read, "", http.StatusOK))

	// Alert groups and exceptions, value for value (an exception written
	// by the command first, so that the list is not empty).
	groups := cli("", "groups", "--all", "-o", "json")
	same("groups", groups, api(http.MethodGet, "/api/v1/groups?all=true", read, "", http.StatusOK))
	cli("", "exception", "add", "--rule", "KubePodCrashLooping", "--service", "checkout", "--max-severity", "high",
		"--decision", "known_benign", "--expires", "4h", "--analyst", "alice", "--note", "one shape", "-o", "json")
	exceptions := cli("", "exception", "list", "-o", "json")
	if l, _ := exceptions.([]any); len(l) != 1 {
		t.Errorf("exception list after one exception add: %v", exceptions)
	}
	same("exception list", exceptions, api(http.MethodGet, "/api/v1/exceptions", read, "", http.StatusOK))
}

// canonical is the canonical string of a fingerprint as JSON decodes it.
func canonical(t *testing.T, v any) string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("fingerprint %v is not an object", v)
	}
	var parts []string
	for _, k := range []string{"error_class", "service_role", "dependency_pattern", "signal_shape", "attack_pattern", "environment"} {
		s, _ := m[k].(string)
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, ";")
}

// fieldPaths lists every field name of a decoded JSON value, with its
// path (array elements under "[]"), sorted.
func fieldPaths(v any, prefix string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			out = append(out, prefix+k)
			out = append(out, fieldPaths(e, prefix+k+".")...)
		}
	case []any:
		for _, e := range v {
			out = append(out, fieldPaths(e, prefix+"[].")...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
