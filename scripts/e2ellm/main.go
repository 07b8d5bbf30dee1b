package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
)

const (
	mockPackage = "@dwmkerr/mock-llm@0.1.29"
	apiKey      = "sk-e2e-" + "mustNeverAppearInOutput42"
	cheapModel  = "gpt-4o-mini"
	strongModel = "gpt-4o"
)

// usage is what the rules file reports per kind of answer.
var usage = map[string][2]int{
	"strong": {1200, 200}, "cheap": {900, 90}, "attack": {1100, 60}, "prose": {1000, 12},
}

// listPrice is the vendor's list price of the two models in nano-dollars
// per token (input, output), written here from openai.com/api/pricing
// rather than read from the product's price table, so a wrong table fails
// the check: gpt-4o $2.50 and $10.00 per million tokens, gpt-4o-mini $0.15
// and $0.60.
var listPrice = map[string][2]openrecall.NanoUSD{
	strongModel: {2500, 10_000},
	cheapModel:  {150, 600},
}

// expectedCompletion is the strong model's expected completion a run on a
// fresh memory prices baselines with (DESIGN §7: no strong completion is
// recorded yet, so models.strong_expected_completion_tokens, 220; never the
// 800-token cap).
const expectedCompletion = 220

// price returns what model costs for the tokens at its list price.
func price(model string, prompt, completion int) (openrecall.NanoUSD, error) {
	p, ok := listPrice[model]
	if !ok {
		return 0, fmt.Errorf("no list price for model %q", model)
	}
	return openrecall.NanoUSD(prompt)*p[0] + openrecall.NanoUSD(completion)*p[1], nil
}

// promptTokens is openrecall's documented prompt estimate: the bytes of the
// system and user messages over four, rounded up, plus 8 for the chat
// framing.
func promptTokens(system, user string) int { return (len(system)+len(user)+3)/4 + 8 }

func main() {
	o := options{out: os.Stdout}
	flag.StringVar(&o.bin, "bin", "./bin/openrecall", "the openrecall binary")
	flag.StringVar(&o.dir, "dir", ".e2e-llm", "where mock-llm is installed (git-ignored)")
	flag.StringVar(&o.rules, "rules", "scripts/e2ellm/mock-llm.yaml", "mock-llm rules file")
	flag.StringVar(&o.queue, "queue", "examples/queue.jsonl", "queue to analyse")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-llm: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("e2e-llm: PASS")
}

// options are the driver's inputs; out receives its report.
type options struct {
	bin, dir, rules, queue string
	out                    io.Writer
}

func run(ctx context.Context, o options) (err error) {
	bin, dir, rules, queue := o.bin, o.dir, o.rules, o.queue
	main := filepath.Join(dir, "node_modules", "@dwmkerr", "mock-llm", "dist", "main.js")
	if _, err := os.Stat(main); err != nil {
		fmt.Println("e2e-llm: npm install", mockPackage, "into", dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", mockPackage)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm install %s: %w", mockPackage, err)
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "openrecall-e2e-llm-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(work)) }()
	mockLog := filepath.Join(work, "mock-llm.log")
	logf, err := os.Create(mockLog)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, logf.Close()) }()
	absRules, err := filepath.Abs(rules)
	if err != nil {
		return err
	}
	node := exec.Command("node", main, "--config", absRules)
	node.Env = append(os.Environ(), "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port))
	node.Stdout, node.Stderr = logf, logf
	node.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := node.Start(); err != nil {
		return fmt.Errorf("start mock-llm: %w", err)
	}
	defer func() {
		_ = syscall.Kill(-node.Process.Pid, syscall.SIGTERM)
		_ = node.Wait()
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitHealthy(ctx, base+"/health"); err != nil {
		log, _ := os.ReadFile(mockLog)
		return fmt.Errorf("%w\nmock-llm log:\n%s", err, log)
	}
	fmt.Fprintf(o.out, "e2e-llm: mock-llm (%s) listening on %s, pid %d\n", mockPackage, base, node.Process.Pid)
	// openrecall talks to mock-llm through a recording proxy, so the
	// driver sees every prompt it sent.
	rec, err := newRecorder(base)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	proxy := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = proxy.Serve(ln) }() // ErrServerClosed once closed
	defer func() { _ = proxy.Close() }()
	proxyHost := ln.Addr().String()

	db := filepath.Join(work, "memory.db")
	env := append(os.Environ(), "OPENAI_API_KEY="+apiKey)
	if out, err := openrecallRun(ctx, bin, env, "--db", db, "memory", "seed"); err != nil {
		return fmt.Errorf("memory seed: %w\n%s", err, out.stderr)
	}
	res, err := openrecallRun(ctx, bin, env, "--db", db, "analyze", "--provider", "openai", "--base-url", "http://"+proxyHost+"/v1",
		"--cheap-model", cheapModel, "--strong-model", strongModel, "-o", "jsonl", queue)
	if err != nil {
		return fmt.Errorf("analyze: %w\n%s", err, res.stderr)
	}
	results, err := decode(res.stdout)
	if err != nil {
		return err
	}
	log, err := os.ReadFile(mockLog)
	if err != nil {
		return err
	}
	calls := strings.Count(string(log), "POST /v1/chat/completions")
	if n := rec.count(); n != calls {
		return fmt.Errorf("the proxy passed %d requests, mock-llm logged %d", n, calls)
	}
	sum, err := check(results, res, calls, proxyHost, rec)
	if err != nil {
		return err
	}
	dbBytes, _ := os.ReadFile(db)
	wal, _ := os.ReadFile(db + "-wal")
	if bytes.Contains(dbBytes, []byte(apiKey)) || bytes.Contains(wal, []byte(apiKey)) {
		return errors.New("the API key is stored in the memory database")
	}
	if out, err := openrecallRun(ctx, bin, env, "--db", db, "audit", "verify"); err != nil {
		return fmt.Errorf("audit verify: %w\n%s%s", err, out.stdout, out.stderr)
	}
	ledger, err := openrecallRun(ctx, bin, env, "--db", db, "audit", "show", "-o", "jsonl", sum.retried.AnalysisID)
	if err != nil {
		return fmt.Errorf("audit show: %w\n%s", err, ledger.stderr)
	}
	entries, err := decodeLedger(ledger.stdout)
	if err != nil {
		return err
	}
	if err := checkLedger(sum.retried, entries); err != nil {
		return fmt.Errorf("the audit trail of %s (the rate-limited call): %w\n%s", sum.retried.AnalysisID, err, ledger.stdout)
	}
	table, err := openrecallRun(ctx, bin, env, "--db", db, "audit", "show", sum.retried.AnalysisID)
	if err != nil {
		return fmt.Errorf("audit show: %w\n%s", err, table.stderr)
	}
	fmt.Fprint(o.out, summaryLines(res.stderr))
	fmt.Fprintf(o.out, "e2e-llm: %d requests reached mock-llm = %d live steps (%d retried); %d bypassed alerts made no call; %d attack verdicts refused by the guard; %d answers failed the gate; billed %s from usage at list prices\n",
		calls, sum.liveSteps, sum.retries, sum.bypassed, sum.refused, sum.gateFailed, sum.billed)
	fmt.Fprintf(o.out, "e2e-llm: saved %s = %d bypassed baselines + %d passing cheap answers' differences, each baseline recomputed: gpt-4o at list price on the prompt openrecall sent or would send, at %d expected completion tokens; every strong or failed answer's baseline is its billed cost\n",
		sum.saved, sum.bypassed, sum.cheapPassed, expectedCompletion)
	fmt.Fprintf(o.out, "e2e-llm: ledger of %s (the rate-limited call), from the audit trail: %d entries, one per step, chained, the 429 a retried attempt at no cost, then the answer billed %s:\n%s",
		sum.retried.AnalysisID, len(entries), sum.retried.Cost, table.stdout)
	return nil
}

// recorder is a reverse proxy to mock-llm that records the system and user
// messages of every chat completion request.
type recorder struct {
	proxy   *httputil.ReverseProxy
	mu      sync.Mutex
	n       int
	prompts map[[2]string]bool
	bad     []string
}

func newRecorder(base string) (*recorder, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	return &recorder{proxy: httputil.NewSingleHostReverseProxy(u), prompts: map[[2]string]bool{}}, nil
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		rc.mu.Lock()
		rc.n++
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
			rc.bad = append(rc.bad, fmt.Sprintf("not a system and a user message (%v): %.200s", err, body))
		} else {
			rc.prompts[[2]string{req.Messages[0].Content, req.Messages[1].Content}] = true
		}
		rc.mu.Unlock()
	}
	rc.proxy.ServeHTTP(w, r)
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.n
}

// sent reports whether a request with these messages went out.
func (rc *recorder) sent(system, user string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.prompts[[2]string{system, user}]
}

type output struct {
	stdout, stderr string
}

func openrecallRun(ctx context.Context, bin string, env []string, args ...string) (output, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	o := output{stdout: out.String(), stderr: errOut.String()}
	if strings.Contains(o.stdout+o.stderr, apiKey) {
		return o, fmt.Errorf("openrecall %s printed the API key", args)
	}
	return o, err
}

func decode(jsonl string) ([]openrecall.Result, error) {
	var rs []openrecall.Result
	dec := json.NewDecoder(strings.NewReader(jsonl))
	for dec.More() {
		var r openrecall.Result
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("decode result %d: %w", len(rs), err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

type summary struct {
	liveSteps, retries, bypassed, cheapPassed, refused, gateFailed int
	billed, saved                                                  openrecall.NanoUSD
	// retried is the result of the rate-limited request.
	retried openrecall.Result
}

// check asserts the run's promises and returns its figures. rec holds the
// prompts that went out.
func check(results []openrecall.Result, res output, calls int, host string, rec *recorder) (summary, error) {
	var s summary
	if !strings.Contains(res.stderr, "model=openai (live: "+host+")") {
		return s, fmt.Errorf("the mode line does not say model=openai (live: %s):\n%s", host, res.stderr)
	}
	if len(rec.bad) > 0 {
		return s, fmt.Errorf("%d requests were not an analysis prompt: first %s", len(rec.bad), rec.bad[0])
	}
	for _, r := range results {
		if len(r.Audit) != len(r.Steps) {
			return s, fmt.Errorf("%s: %d audit entries for %d steps", r.Position, len(r.Audit), len(r.Steps))
		}
		if r.Cost > r.Baseline {
			return s, fmt.Errorf("%s: cost %s above the baseline %s", r.Position, r.Cost, r.Baseline)
		}
		if r.Fingerprint.HasAttack() && r.Decision.Benign() {
			return s, fmt.Errorf("%s: attack %s closed as %s", r.Position, r.Fingerprint.AttackPattern, r.Decision)
		}
		for i, st := range r.Steps {
			if !st.Live {
				continue
			}
			if r.Bypassed {
				return s, fmt.Errorf("%s: a bypassed alert made a model call (step %d)", r.Position, i)
			}
			s.liveSteps++
			switch st.Outcome {
			case openrecall.OutcomeRetried:
				s.retries++
				if !strings.Contains(st.Reason, "HTTP 429") || st.Cost != 0 || i+1 >= len(r.Steps) || !r.Steps[i+1].Live {
					return s, fmt.Errorf("%s: retried step %+v: want HTTP 429 in the reason, cost 0, then the next attempt", r.Position, st)
				}
				if !strings.Contains(r.Steps[i+1].Reason, "attempt 2: HTTP 200") {
					return s, fmt.Errorf("%s: the attempt after the 429 says %q", r.Position, r.Steps[i+1].Reason)
				}
				s.retried = r
				continue
			case openrecall.OutcomeRefused:
				if st.Proposed != openrecall.DecisionFalsePositive || !r.Fingerprint.HasAttack() || r.Decision != openrecall.DecisionEscalated {
					return s, fmt.Errorf("%s: refused step %+v on %s: want the attack's false_positive refused and escalated", r.Position, st, r.Fingerprint)
				}
				s.refused++
			case openrecall.OutcomeGateFailed:
				s.gateFailed++
			}
			kind := "strong"
			switch {
			case st.Model == cheapModel:
				kind = "cheap"
			case st.Outcome == openrecall.OutcomeRefused:
				kind = "attack"
			case st.Outcome == openrecall.OutcomeGateFailed && strings.Contains(st.EscalationReason, "invalid answer"):
				kind = "prose"
			}
			u := usage[kind]
			want, err := price(st.Model, u[0], u[1])
			if err != nil {
				return s, err
			}
			if st.PromptTokens != u[0] || st.CompletionTokens != u[1] || st.Cost != want {
				return s, fmt.Errorf("%s: %s step billed %d/%d tokens %s; the server reported %d/%d, which costs %s",
					r.Position, kind, st.PromptTokens, st.CompletionTokens, st.Cost, u[0], u[1], want)
			}
			s.billed += st.Cost
		}
	}
	// Savings last: a wrong price shows first as a wrongly billed step.
	for _, r := range results {
		if err := s.honest(r, rec); err != nil {
			return s, err
		}
	}
	switch {
	case calls == 0 || calls != s.liveSteps:
		return s, fmt.Errorf("mock-llm received %d requests, the results show %d live steps", calls, s.liveSteps)
	case s.retries != 1 || s.retried.AnalysisID == "":
		return s, fmt.Errorf("%d retried steps, want exactly the one 429", s.retries)
	case s.bypassed == 0:
		return s, errors.New("no alert was bypassed: the seeded memory did not work")
	case s.refused == 0:
		return s, errors.New("no attack verdict was refused: the attack rule did not fire")
	case s.gateFailed == 0:
		return s, errors.New("no answer failed the gate: the prose rule did not fire")
	case s.cheapPassed == 0:
		return s, errors.New("no cheap answer passed the gate: the cheap rule did not fire")
	case !strings.Contains(res.stderr, "savings   "+s.saved.String()+" = "):
		return s, fmt.Errorf("the summary's savings are not the bypassed baselines plus the cheap differences %s:\n%s", s.saved, res.stderr)
	}
	return s, nil
}

// honest checks one result's savings (DESIGN §7) against a baseline
// recomputed here, and counts them: a bypass saves its whole baseline, a
// cheap answer that passed the gate saves the strong call it spared less
// its billed cost, and nothing else saves: a strong answer's baseline is
// its billed cost, and so is a refused or failed one's. Every call is
// answered here, so no alert is escalated without analysis.
//
// The spared strong call is gpt-4o at list price on the analysis prompt
// openrecall would send, at the expected completion. For an alert that
// made a call, that prompt is the one the proxy saw; for a bypassed alert
// no prompt went out, so it is rebuilt from the result (routing.BuildPrompt
// on the alert, its fingerprint, matches and triage), a rebuild this check
// holds to the wire: every live result's rebuilt prompt must be one that
// was sent.
func (s *summary) honest(r openrecall.Result, rec *recorder) error {
	if r.Outcome != openrecall.ResultTriaged {
		return nil
	}
	req := routing.BuildPrompt(routing.Input{Alert: r.Alert, Fingerprint: r.Fingerprint, Matches: r.Matches, Triage: r.Triage, Guard: r.Guard})
	live, cheapPass := false, false
	for _, st := range r.Steps {
		live = live || st.Live
		cheapPass = cheapPass || (st.Tier == openrecall.TierCheap && st.Outcome == openrecall.OutcomeAccepted)
	}
	if live && !rec.sent(req.System, req.Prompt) {
		return fmt.Errorf("%s: the analysis prompt rebuilt from the result is not one openrecall sent: the bypass baselines cannot be recomputed", r.Position)
	}
	spared, err := price(strongModel, promptTokens(req.System, req.Prompt), expectedCompletion)
	if err != nil {
		return err
	}
	switch {
	case r.EscalatedWithoutAnalysis:
		return fmt.Errorf("%s: escalated without analysis, yet mock-llm answers every call", r.Position)
	case r.Bypassed:
		if r.Cost != 0 || r.Baseline != spared {
			return fmt.Errorf("%s: bypass with cost %s and baseline %s, want 0 and the spared strong call, %s", r.Position, r.Cost, r.Baseline, spared)
		}
		s.bypassed++
	case cheapPass:
		if r.Baseline != spared || spared <= r.Cost {
			return fmt.Errorf("%s: a passing cheap answer billed %s against the baseline %s, want the spared strong call, %s, above the cost", r.Position, r.Cost, r.Baseline, spared)
		}
		s.cheapPassed++
	case r.Baseline != r.Cost:
		return fmt.Errorf("%s: decided %s by a strong or failed answer, yet baseline %s != billed cost %s", r.Position, r.Decision, r.Baseline, r.Cost)
	}
	s.saved += r.Baseline - r.Cost
	return nil
}

// decodeLedger reads `audit show -o jsonl`: one entry per line.
func decodeLedger(jsonl string) ([]openrecall.AuditEntry, error) {
	var es []openrecall.AuditEntry
	dec := json.NewDecoder(strings.NewReader(jsonl))
	dec.DisallowUnknownFields()
	for dec.More() {
		var e openrecall.AuditEntry
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("decode audit entry %d: %w", len(es), err)
		}
		es = append(es, e)
	}
	return es, nil
}

// checkLedger holds the persisted audit entries of the rate-limited
// analysis to its result: one entry per route step, in order, with the
// step's model, outcome, live flag, cost and baseline; consecutive
// sequence numbers, each entry chained to the previous one's hash; the 429
// a live retried attempt at no cost, saving nothing, followed by the
// answered attempt billed at list price; and the costs adding up to the
// result's.
func checkLedger(r openrecall.Result, es []openrecall.AuditEntry) error {
	if len(es) != len(r.Steps) {
		return fmt.Errorf("%d entries for %d route steps", len(es), len(r.Steps))
	}
	var total openrecall.NanoUSD
	retried := -1
	for i, e := range es {
		st := r.Steps[i]
		switch {
		case e.AnalysisID != r.AnalysisID || e.AlertID != r.Alert.ID || e.StepIndex != i:
			return fmt.Errorf("entry %d is of analysis %s, alert %s, step %d", i, e.AnalysisID, e.AlertID, e.StepIndex)
		case e.Step != st.Step || e.Model != st.Model || e.Outcome != st.Outcome || e.Live != st.Live || e.Cost != st.Cost || e.Baseline != st.Baseline:
			return fmt.Errorf("entry %d (%s %s %s live=%t cost %s baseline %s) is not step %d (%s %s %s live=%t cost %s baseline %s)",
				i, e.Step, e.Model, e.Outcome, e.Live, e.Cost, e.Baseline, i, st.Step, st.Model, st.Outcome, st.Live, st.Cost, st.Baseline)
		case e.Hash == "" || (i > 0 && (e.Sequence != es[i-1].Sequence+1 || e.PrevHash != es[i-1].Hash)):
			return fmt.Errorf("entry %d (sequence %d) is not chained to entry %d (sequence %d)", i, e.Sequence, i-1, es[max(i-1, 0)].Sequence)
		}
		if e.Outcome == openrecall.OutcomeRetried {
			retried = i
		}
		total += e.Cost
	}
	if retried < 0 || retried+1 >= len(es) {
		return errors.New("no retried attempt followed by another")
	}
	rt, next := es[retried], es[retried+1]
	want, err := price(strongModel, usage["strong"][0], usage["strong"][1])
	if err != nil {
		return err
	}
	switch {
	case !rt.Live || rt.Model != strongModel || !strings.Contains(rt.Reason, "attempt 1: HTTP 429") || rt.Cost != 0 || rt.Baseline != 0 || rt.Savings != 0:
		return fmt.Errorf("the retried entry %+v: want a live %s attempt 1 refused with HTTP 429, at no cost, saving nothing", rt, strongModel)
	case !next.Live || next.Model != strongModel || next.Outcome != openrecall.OutcomeAccepted || !strings.Contains(next.Reason, "attempt 2: HTTP 200") || next.Cost != want:
		return fmt.Errorf("the entry after the 429 %+v: want attempt 2 of %s answered with HTTP 200 and accepted, billed %s", next, strongModel, want)
	case total != r.Cost:
		return fmt.Errorf("the entries cost %s in all, the result %s", total, r.Cost)
	}
	return nil
}

// summaryLines returns analyze's summary block from its stderr.
func summaryLines(stderr string) string {
	var b strings.Builder
	on := false
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "openrecall analyze") {
			on = true
		}
		if on {
			b.WriteString(sc.Text() + "\n")
		}
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// waitHealthy polls url until it answers 200 or ctx (the run's deadline)
// ends.
func waitHealthy(ctx context.Context, url string) error {
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close() // nothing is read from the health check's body
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("mock-llm did not answer %s before the run's deadline: %w", url, ctx.Err())
}
