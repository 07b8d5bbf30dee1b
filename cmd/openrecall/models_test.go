package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/openai/fake"
)

const liveKey = "sk-cli-" + "neverInOutput0123456789"

// realAnswer answers every request with a confident "real" analysis.
func realAnswer(fake.Received) fake.Reply {
	return fake.Answer(`{"decision":"real","confidence":0.9,"summary":"live answer","hypotheses":["h"],"verification_commands":["kubectl get pods"],"next_steps":["page the owner"],"skip_paths":[],"cited_memory_ids":[]}`, 700, 90)
}

func liveArgs(srv *fake.Server, db string, extra ...string) []string {
	return append([]string{"--db", db, "analyze", "--provider", "openai", "--base-url", srv.URL,
		"--cheap-model", "gpt-4o-mini", "--strong-model", "gpt-4o", "-o", "jsonl"}, extra...)
}

func TestAnalyzeOnAnOpenAICompatibleServer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", liveKey)
	srv := fake.New(realAnswer)
	defer srv.Close()
	db := seededDB(t)
	r := runCLI(t, "", liveArgs(srv, db, "--workers", "3", "../../examples/queue.jsonl")...)
	if r.code != exitOK && r.code != exitPartial {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/v1"), "http://")
	if !strings.Contains(r.stderr, "model=openai (live: "+host+")") {
		t.Fatalf("the mode line does not name the live server:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, liveKey) {
		t.Fatal("the API key appears in the output")
	}
	for _, got := range srv.Received() {
		if got.Header.Get("Authorization") != "Bearer "+liveKey {
			t.Fatalf("Authorization %q: the key from OPENAI_API_KEY was not sent", got.Header.Get("Authorization"))
		}
	}
	live, bypassed := 0, 0
	for _, res := range decodeResults(t, r.stdout) {
		if res.Bypassed {
			bypassed++
			for _, s := range res.Steps {
				if s.Live {
					t.Fatalf("%s: a bypassed alert has a live step", res.Position)
				}
			}
		}
		if res.Analysis != nil && res.Analysis.Live {
			live++
			if res.Analysis.Model != "gpt-4o" && res.Analysis.Model != "gpt-4o-mini" {
				t.Fatalf("%s: live analysis by %q", res.Position, res.Analysis.Model)
			}
		}
		if res.Mode.Model != "openai (live: "+host+")" {
			t.Fatalf("%s: mode %+v", res.Position, res.Mode)
		}
	}
	if live == 0 || bypassed == 0 || srv.Calls() == 0 {
		t.Fatalf("%d live analyses, %d bypasses, %d calls: want some of each", live, bypassed, srv.Calls())
	}
}

func TestAnalyzeWhenTheModelIsUnavailableExits6(t *testing.T) {
	srv := fake.New(func(fake.Received) fake.Reply { return fake.InsufficientQuota() })
	defer srv.Close()
	db := seededDB(t)
	queue := `{"id":"x1","title":"payment-api 5xx rate above 5%","service":"payment-api","severity":"critical","environment":"prod"}` + "\n" +
		`{"id":"x2","title":"orders-db connection pool exhausted","service":"orders-db","severity":"high","environment":"prod"}` + "\n"
	r := runCLI(t, queue, liveArgs(srv, db, "-")...)
	if r.code != exitUnanalysed {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitUnanalysed, r.stderr)
	}
	if !strings.Contains(r.stderr, "escalated without analysis  2 alerts (no model answered: budget spent or model unavailable)") {
		t.Fatalf("stderr does not say why:\n%s", r.stderr)
	}
	rs := decodeResults(t, r.stdout)
	if len(rs) != 2 {
		t.Fatalf("%d results: the queue must go on after an outage", len(rs))
	}
	for _, res := range rs {
		last := res.Steps[len(res.Steps)-1]
		if res.Decision != openrecall.DecisionEscalated || last.Outcome != openrecall.OutcomeUnavailable ||
			!strings.Contains(last.EscalationReason, "model unavailable") || len(res.Audit) != len(res.Steps) {
			t.Fatalf("%s: decision %s, last step %+v, %d audit entries for %d steps", res.Position, res.Decision, last, len(res.Audit), len(res.Steps))
		}
		if !res.EscalatedWithoutAnalysis || res.Cost != 0 || res.Baseline != 0 {
			t.Fatalf("%s: escalated without analysis %v, cost %s, baseline %s: an unanswered call bills and saves nothing",
				res.Position, res.EscalatedWithoutAnalysis, res.Cost, res.Baseline)
		}
	}
}

func TestModelFlagErrorsExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "--provider", "magic", "-"}, "models.provider"},
		{[]string{"analyze", "--provider", "openai", "-"}, "models.cheap"},
		{[]string{"analyze", "--provider", "openai", "--base-url", "localhost:1/v1", "--cheap-model", "a", "--strong-model", "b", "-"}, "models.base_url"},
		{[]string{"eval", "--provider", "openai", "--cheap-model", "a"}, "models.strong"},
	}
	for _, tt := range tests {
		r := runCLI(t, "", append([]string{"--db", filepath.Join(t.TempDir(), "m.db")}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func TestConfigDefaultsDocumentTheProviderKeys(t *testing.T) {
	r := runCLI(t, "", "config", "defaults")
	for _, key := range []string{"provider:", "base_url:", "api_key_env: OPENAI_API_KEY", "timeout:", "max_retries:", "concurrency:"} {
		if !strings.Contains(r.stdout, key) {
			t.Errorf("config defaults lacks %q", key)
		}
	}
}

// serve takes the provider flags too: an alert posted to the server is
// analysed by the model on the OpenAI-compatible server, with the key sent
// and never logged.
func TestServeOnAnOpenAICompatibleServer(t *testing.T) {
	srv := fake.New(realAnswer)
	defer srv.Close()
	bin := buildBinary(t)
	s := startServe(t, bin, filepath.Join(t.TempDir(), "m.db"), []string{"OPENAI_API_KEY=" + liveKey},
		"--provider", "openai", "--base-url", srv.URL, "--cheap-model", "gpt-4o-mini", "--strong-model", "gpt-4o")
	body := `{"id":"pay-1","title":"payment-api 5xx rate above 5%","service":"payment-api","severity":"critical","environment":"prod"}`
	if code := s.call(http.MethodPost, "/api/v1/alerts", "", strings.NewReader(body), nil); code != http.StatusAccepted {
		t.Fatalf("post: %d\n%s", code, s.log())
	}
	results := s.allResults("", 1)
	if len(results) != 1 {
		t.Fatalf("%d results\n%s", len(results), s.log())
	}
	var live []openrecall.RouteStep
	for _, raw := range results[0].Result.Steps {
		var st openrecall.RouteStep
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		if st.Live {
			live = append(live, st)
		}
	}
	if results[0].Result.Decision != "real" || len(live) != 1 || live[0].Model != "gpt-4o" || srv.Calls() != 1 {
		t.Fatalf("decision %s, live steps %+v, %d calls: want the strong model on the server to decide", results[0].Result.Decision, live, srv.Calls())
	}
	if got := srv.Received()[0].Header.Get("Authorization"); got != "Bearer "+liveKey {
		t.Fatalf("Authorization %q: the key from OPENAI_API_KEY was not sent", got)
	}
	if strings.Contains(s.log(), liveKey) {
		t.Fatal("serve logged the API key")
	}
}

// TestALyingProviderMovesNeitherBudgetNorBaseline is the [trust] regression
// of a model server that reports 50 M tokens for a short completion: before
// usage was bounded by the request, one run booked hundreds of dollars
// against a $0.05 budget and its completion length entered the strong
// model's running mean, so the next honest run reported a baseline in the
// tens of thousands of dollars.
func TestALyingProviderMovesNeitherBudgetNorBaseline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", liveKey)
	liar := fake.New(func(rec fake.Received) fake.Reply {
		r := realAnswer(rec)
		r.PromptTokens, r.CompletionTokens = 50_000_000, 50_000_000
		return r
	})
	defer liar.Close()
	db := seededDB(t)
	const budget = 0.05
	r := runCLI(t, "", liveArgs(liar, db, "--budget-usd", "0.05", "../../examples/queue.jsonl")...)
	if r.code != exitUnanalysed { // the budget runs out: what it could not pay for is escalated unanalysed
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var booked openrecall.NanoUSD
	calls := 0
	for _, res := range decodeResults(t, r.stdout) {
		for _, s := range res.Steps {
			booked += s.Cost
			if s.Live && s.Step == openrecall.StepAnalysis && !s.Skipped {
				calls++
				if s.UsageAnomaly == "" {
					t.Fatalf("%s: 50 M reported tokens booked without an anomaly: %+v", res.Position, s)
				}
				if s.CompletionTokens > 800 {
					t.Fatalf("%s: %d completion tokens booked, past the strong tier's max_tokens", res.Position, s.CompletionTokens)
				}
			}
		}
	}
	if calls == 0 {
		t.Fatal("the lying run made no live analysis call")
	}
	// A call is reserved at its estimated worst case and booked at most at
	// its ceiling; one call past the budget's edge may book more than it
	// reserved, never hundreds of dollars.
	if booked.Dollars() > 2*budget {
		t.Fatalf("the lying run booked $%.4f against a $%.2f budget", booked.Dollars(), budget)
	}

	honest := fake.New(realAnswer)
	defer honest.Close()
	r = runCLI(t, "", liveArgs(honest, db, "../../examples/queue.jsonl")...)
	if r.code != exitOK && r.code != exitPartial {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var baseline openrecall.NanoUSD
	for _, res := range decodeResults(t, r.stdout) {
		baseline += res.Baseline
	}
	// The example queue's honest baseline is cents; the lie made it
	// tens of thousands of dollars.
	if baseline.Dollars() > 1 {
		t.Fatalf("the honest run after the lying one reports a baseline of $%.2f: the lie moved the strong model's mean", baseline.Dollars())
	}
}
