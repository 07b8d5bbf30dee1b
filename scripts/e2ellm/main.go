package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

func main() {
	bin := flag.String("bin", "./bin/openrecall", "the openrecall binary")
	dir := flag.String("dir", ".e2e-llm", "where mock-llm is installed (git-ignored)")
	rules := flag.String("rules", "scripts/e2ellm/mock-llm.yaml", "mock-llm rules file")
	queue := flag.String("queue", "examples/queue.jsonl", "queue to analyse")
	flag.Parse()
	if err := run(*bin, *dir, *rules, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-llm: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("e2e-llm: PASS")
}

func run(bin, dir, rules, queue string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
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
	fmt.Printf("e2e-llm: mock-llm (%s) listening on %s, pid %d\n", mockPackage, base, node.Process.Pid)

	db := filepath.Join(work, "memory.db")
	env := append(os.Environ(), "OPENAI_API_KEY="+apiKey)
	if out, err := openrecallRun(ctx, bin, env, "--db", db, "memory", "seed"); err != nil {
		return fmt.Errorf("memory seed: %w\n%s", err, out.stderr)
	}
	res, err := openrecallRun(ctx, bin, env, "--db", db, "analyze", "--provider", "openai", "--base-url", base+"/v1",
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
	sum, err := check(results, res, calls, fmt.Sprintf("127.0.0.1:%d", port))
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
	ledger, err := openrecallRun(ctx, bin, env, "--db", db, "audit", "show", sum.retriedID)
	if err != nil {
		return fmt.Errorf("audit show: %w\n%s", err, ledger.stderr)
	}
	fmt.Print(summaryLines(res.stderr))
	fmt.Printf("e2e-llm: %d requests reached mock-llm = %d live steps (%d retried); %d bypassed alerts made no call; %d attack verdicts refused by the guard; %d answers failed the gate; billed %s from usage\n",
		calls, sum.liveSteps, sum.retried, sum.bypassed, sum.refused, sum.gateFailed, sum.billed)
	fmt.Printf("e2e-llm: saved %s = %d bypassed baselines + %d passing cheap answers' differences; every strong or failed answer's baseline is its billed cost\n",
		sum.saved, sum.bypassed, sum.cheapPassed)
	fmt.Printf("e2e-llm: ledger of %s (the rate-limited call), from the audit trail:\n%s", sum.retriedID, ledger.stdout)
	return nil
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
	liveSteps, retried, bypassed, cheapPassed, refused, gateFailed int
	billed, saved                                                  openrecall.NanoUSD
	retriedID                                                      string
}

// check asserts the run's promises and returns its figures.
func check(results []openrecall.Result, res output, calls int, host string) (summary, error) {
	var s summary
	if !strings.Contains(res.stderr, "model=openai (live: "+host+")") {
		return s, fmt.Errorf("the mode line does not say model=openai (live: %s):\n%s", host, res.stderr)
	}
	prices := routing.DefaultPrices()
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
		if err := s.honest(r); err != nil {
			return s, err
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
				s.retried++
				if !strings.Contains(st.Reason, "HTTP 429") || st.Cost != 0 || i+1 >= len(r.Steps) || !r.Steps[i+1].Live {
					return s, fmt.Errorf("%s: retried step %+v: want HTTP 429 in the reason, cost 0, then the next attempt", r.Position, st)
				}
				if !strings.Contains(r.Steps[i+1].Reason, "attempt 2: HTTP 200") {
					return s, fmt.Errorf("%s: the attempt after the 429 says %q", r.Position, r.Steps[i+1].Reason)
				}
				s.retriedID = r.AnalysisID
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
			want, err := prices.Cost(st.Model, u[0], u[1])
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
	switch {
	case calls == 0 || calls != s.liveSteps:
		return s, fmt.Errorf("mock-llm received %d requests, the results show %d live steps", calls, s.liveSteps)
	case s.retried != 1 || s.retriedID == "":
		return s, fmt.Errorf("%d retried steps, want exactly the one 429", s.retried)
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

// honest checks one result's savings (DESIGN §7) and counts them: a bypass
// saves its whole baseline, a cheap answer that passed the gate saves the
// strong call it spared less its billed cost, and nothing else saves: a
// strong answer's baseline is its billed cost, and so is a refused or
// failed one's. Every call is answered here, so no alert is escalated
// without analysis.
func (s *summary) honest(r openrecall.Result) error {
	if r.Outcome != openrecall.ResultTriaged {
		return nil
	}
	cheapPass := false
	for _, st := range r.Steps {
		cheapPass = cheapPass || (st.Tier == openrecall.TierCheap && st.Outcome == openrecall.OutcomeAccepted)
	}
	switch {
	case r.EscalatedWithoutAnalysis:
		return fmt.Errorf("%s: escalated without analysis, yet mock-llm answers every call", r.Position)
	case r.Bypassed:
		if r.Cost != 0 || r.Baseline <= 0 {
			return fmt.Errorf("%s: bypass with cost %s and baseline %s, want 0 and the spared strong call", r.Position, r.Cost, r.Baseline)
		}
		s.bypassed++
	case cheapPass:
		if r.Baseline <= r.Cost {
			return fmt.Errorf("%s: a passing cheap answer billed %s saves nothing against the baseline %s", r.Position, r.Cost, r.Baseline)
		}
		s.cheapPassed++
	case r.Baseline != r.Cost:
		return fmt.Errorf("%s: decided %s by a strong or failed answer, yet baseline %s != billed cost %s", r.Position, r.Decision, r.Baseline, r.Cost)
	}
	s.saved += r.Baseline - r.Cost
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

func waitHealthy(ctx context.Context, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close() // nothing is read from the health check's body
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("mock-llm did not answer %s within 30s", url)
}
