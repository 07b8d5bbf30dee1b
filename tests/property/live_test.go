package property

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/model/openai"
	"github.com/openrecall/openrecall/model/openai/fake"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/workflow"
)

// liveProperties are the rules of live models (issue 13): whatever an
// OpenAI-compatible server answers, the guard, conservation and the audit
// hold.
func liveProperties() []pbt.Property {
	ex := newExtractor()
	return []pbt.Property{
		pbt.ForAll("P36_live_answers_keep_guard_cost_and_audit",
			"For any sequence of answers an OpenAI-compatible server gives (valid, invalid JSON, out-of-set decisions, benign verdicts on attacks, unknown citations, 429/5xx with Retry-After, insufficient_quota, 4xx, usage present or absent), every decision is in the closed set, no attack is closed as benign, an answer the gate or the guard refused or a model that could not answer leaves the alert escalated, a bypassed alert makes no call, the server receives exactly one request per live route step, cost ≤ baseline per alert, every route step has its audit entry, and savings stay honest (P25 on billed usage: a model that could not answer is escalated without analysis at baseline = cost = 0, a strong answer's baseline is its billed cost).",
			"LiveRunGen", gen.LiveRunGen(), func(run gen.LiveRun) error {
				return checkLiveRun(ex, run)
			},
			pbt.Expensive(2),
			pbt.Classify(classifyLiveRun),
			pbt.Cover("a model call", 30), pbt.Cover("a retried attempt", 20), pbt.Cover("a benign answer", 20),
		),
		pbt.ForAll("P135_a_call_is_booked_within_what_it_asked",
			"For any usage an OpenAI-compatible server reports (honest, none, max_tokens, 50 M prompt tokens, max_tokens + 1, negative counts, 50 M completion tokens, 50 M of both), every live analysis step books at most PromptTokenCeiling(request) prompt tokens, at most the request's max_tokens completion tokens and at most the call's ceiling (those tokens at the requested model's price); a usage outside those bounds is marked usage_anomaly, and an honest one is booked exactly as reported with no anomaly (liveness: the bound does not refuse the truth).",
			"LyingUsageRunGen", gen.LyingUsageRunGen(), func(run gen.LiveRun) error {
				return checkBookedWithinAsked(ex, run)
			},
			pbt.Expensive(2),
			pbt.Classify(classifyUsageRun),
			pbt.Cover("an anomalous usage", 30), pbt.Cover("an honest usage", 30),
		),
		pbt.ForAll("P136_anomalous_usage_never_moves_the_baseline",
			"For any run whose server reports honest and anomalous usages, the strong completions memory records (whose running mean prices the next runs' baseline) are exactly the strong analysis steps with an honest usage: no anomalous call's completion enters the mean.",
			"LyingUsageRunGen", gen.LyingUsageRunGen(), func(run gen.LiveRun) error {
				return checkMeanIgnoresAnomalies(ex, run)
			},
			pbt.Expensive(2),
			pbt.Classify(classifyUsageRun),
			pbt.Cover("an anomalous usage", 30),
		),
	}
}

// checkLiveRun runs the input sequentially (one script, one order) against
// a fake server that answers the script, and checks P36.
func checkLiveRun(ex workflow.Fingerprinter, run gen.LiveRun) error {
	srv := fake.New(scriptResponder(run.Script))
	defer srv.Close()
	out, err := runWorkflowOn(ex, run.Input, 1, liveTiers(srv))
	if err != nil {
		return err
	}
	live := 0
	for _, r := range out.results {
		if err := auditParity(r); err != nil {
			return err
		}
		if r.Cost < 0 || r.Cost > r.Baseline {
			return fmt.Errorf("conservation: %s cost %d > baseline %d", r.Position, r.Cost, r.Baseline)
		}
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		if !r.Decision.Valid() {
			return fmt.Errorf("closed set: %s decided %q", r.Position, r.Decision)
		}
		if r.Fingerprint.HasAttack() && r.Decision.Benign() {
			return fmt.Errorf("guard: %s with attack pattern %s closed as %s", r.Position, r.Fingerprint.AttackPattern, r.Decision)
		}
		if r.Grouped() {
			if err := checkMember(out.results, r); err != nil {
				return err
			}
			continue
		}
		accepted := false
		for _, s := range r.Steps {
			if s.Live {
				live++
				if r.Bypassed {
					return fmt.Errorf("bypass: %s was bypassed yet made a call (%s)", r.Position, s.Reason)
				}
			}
			accepted = accepted || s.Outcome == openrecall.OutcomeAccepted
			if s.Outcome == openrecall.OutcomeUnavailable && !r.EscalatedWithoutAnalysis {
				return fmt.Errorf("unavailable: %s: the model was unavailable, yet the alert is not counted as escalated without analysis", r.Position)
			}
		}
		if !r.Bypassed && !accepted && r.Decision != openrecall.DecisionEscalated {
			return fmt.Errorf("escalation: %s decided %s with no accepted answer (last step %s: %s)", r.Position, r.Decision,
				r.Steps[len(r.Steps)-1].Outcome, r.Steps[len(r.Steps)-1].EscalationReason)
		}
	}
	if calls := srv.Calls(); calls != live {
		return fmt.Errorf("ledger: the server received %d requests, the route steps show %d live calls", calls, live)
	}
	return checkHonestSavings(out)
}

// liveTiers are gpt-4o-mini and gpt-4o over the OpenAI-compatible server
// srv, retrying twice without sleeping.
func liveTiers(srv *fake.Server) tiers {
	return func() (routing.Model, routing.Model, openrecall.Mode, error) {
		noSleep := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
		mk := func(name string) (routing.Model, error) {
			return openai.New(openai.Options{BaseURL: srv.URL, Model: name, MaxRetries: 2, Timeout: 10 * time.Second,
				Sleep: noSleep, Jitter: func() float64 { return 0 }, Now: fixedClock})
		}
		cheap, err := mk("gpt-4o-mini")
		if err != nil {
			return nil, nil, openrecall.Mode{}, err
		}
		strong, err := mk("gpt-4o")
		return cheap, strong, openrecall.Mode{Memory: "sqlite", Model: "fake"}, err
	}
}

// scriptResponder answers the script in order, then again from the start;
// an empty script answers "real" with confidence 0.9.
func scriptResponder(script []gen.ScriptedReply) fake.Responder {
	var mu sync.Mutex
	n := 0
	return func(req fake.Received) fake.Reply {
		mu.Lock()
		s := gen.ScriptedReply{Decision: 3, Confidence: 90, Usage: 1}
		if len(script) > 0 {
			s = script[n%len(script)]
		}
		n++
		mu.Unlock()
		return scriptedReply(s, req)
	}
}

// scriptedReply renders one scripted reply to a request. The server honours
// max_tokens in the usage it reports.
func scriptedReply(s gen.ScriptedReply, req fake.Received) fake.Reply {
	switch gen.ReplyKinds()[s.Kind] {
	case "invalid JSON":
		return withUsage(s, req, fake.Reply{Content: `{"decision": "real", "confidence": 0.9`})
	case "429 Retry-After":
		return fake.Status(http.StatusTooManyRequests, "0")
	case "500":
		return fake.Status(http.StatusInternalServerError, "")
	case "503 Retry-After date":
		return fake.Status(http.StatusServiceUnavailable, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat))
	case "insufficient_quota":
		return fake.InsufficientQuota()
	case "400 schema error":
		return fake.Reply{Status: http.StatusBadRequest, Message: "messages[1]: invalid content"}
	case "empty content":
		return withUsage(s, req, fake.Reply{})
	}
	cited := "[]"
	switch gen.Citations()[s.Cite] {
	case "a recalled memory":
		if c, err := routing.ParseCaseFile(req.Request.Text("user")); err == nil && len(c.Memories) > 0 {
			cited = strconv.Quote(c.Memories[0].ID)
			cited = "[" + cited + "]"
		}
	case "an unknown id":
		cited = `["inc-never-recalled"]`
	}
	content := fmt.Sprintf(`{"decision":%q,"confidence":%s,"summary":"scripted","hypotheses":["h"],"verification_commands":[],"next_steps":[],"skip_paths":[],"cited_memory_ids":%s}`,
		gen.AnswerDecisions()[s.Decision], strconv.FormatFloat(float64(s.Confidence)/100, 'f', -1, 64), cited)
	return withUsage(s, req, fake.Reply{Content: content})
}

func withUsage(s gen.ScriptedReply, req fake.Received, r fake.Reply) fake.Reply {
	max := req.Request.MaxTokens
	switch s.Usage {
	case 0:
		r.NoUsage = true
	case 1:
		r.PromptTokens = routing.EstimateTokens(req.Request.Text("system")+req.Request.Text("user")) + routing.MessageOverheadTokens
		r.CompletionTokens = min(routing.EstimateTokens(r.Content), max)
	case 2:
		r.PromptTokens = routing.EstimateTokens(req.Request.Text("system")+req.Request.Text("user")) + routing.MessageOverheadTokens
		r.CompletionTokens = max
	default:
		// The anomalies of gen.Usages (LyingUsageRunGen only).
		r.PromptTokens = routing.EstimateTokens(req.Request.Text("system")+req.Request.Text("user")) + routing.MessageOverheadTokens
		r.CompletionTokens = min(routing.EstimateTokens(r.Content), max)
		switch gen.Usages()[s.Usage] {
		case "50 M prompt tokens":
			r.PromptTokens = 50_000_000
		case "max_tokens + 1":
			r.CompletionTokens = max + 1
		case "negative counts":
			r.PromptTokens, r.CompletionTokens = -1, -800
		case "50 M completion tokens":
			r.CompletionTokens = 50_000_000
		case "50 M of both":
			r.PromptTokens, r.CompletionTokens = 50_000_000, 50_000_000
		}
	}
	return r
}

// classifyLiveRun labels a live run by its input and script only.
func classifyLiveRun(run gen.LiveRun) []string {
	l := classifyRun(run.Input)
	seen := map[string]bool{}
	for _, s := range run.Script {
		k := gen.ReplyKinds()[s.Kind]
		switch {
		case strings.HasPrefix(k, "429"), strings.HasPrefix(k, "5"):
			seen["a retried attempt"] = true
		case k == "insufficient_quota":
			seen["model unavailable"] = true
		case k == "answer" && openrecall.Decision(gen.AnswerDecisions()[s.Decision]).Benign():
			seen["a benign answer"] = true
		}
	}
	for _, k := range []string{"a retried attempt", "model unavailable", "a benign answer"} {
		if seen[k] {
			l = append(l, k)
		}
	}
	return l
}

// checkMember checks that group member r took its head's decision and made
// no call (DESIGN §6a): its head is the result of the run it names.
func checkMember(results []openrecall.Result, r openrecall.Result) error {
	for _, h := range results {
		if h.AnalysisID != r.Group.HeadAnalysisID {
			continue
		}
		if r.Decision != memberDecision(h) || r.EscalatedWithoutAnalysis != h.EscalatedWithoutAnalysis {
			return fmt.Errorf("grouped: %s decided %s, its head %s %s", r.Position, r.Decision, h.Position, h.Decision)
		}
		for _, s := range r.Steps {
			if s.Live || s.Step == openrecall.StepAnalysis {
				return fmt.Errorf("grouped: %s made a model call (%s)", r.Position, s.Reason)
			}
		}
		return nil
	}
	return fmt.Errorf("grouped: %s names head %s, not in the run", r.Position, r.Group.HeadAnalysisID)
}
