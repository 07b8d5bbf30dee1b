// Command alertmanager is the end-to-end check of `openrecall serve` against
// a real Prometheus Alertmanager (make e2e-alertmanager): it starts the
// server on loopback with bearer tokens, seeds memory through the retain API,
// starts Alertmanager with a webhook receiver that points at the server (the
// token in http_config.authorization), fires alerts with amtool (a benign
// family memory vouches for, an attack, then a resolve), and checks what the
// server made of Alertmanager's real deliveries: every alert triaged once
// (redeliveries recognised), the benign repeats bypassed, the attack not,
// the resolve recorded, the audit trail intact. The counts are taken once
// the deliveries have settled, a positive signal rather than a pause:
// Alertmanager's count of webhook requests equals openrecall's count of
// answered ones, the inbox is empty and every accepted alert has a finished
// result, so a late redelivery is counted, never missed. Every wait polls
// until the run's own deadline (-timeout). It ends every process it started
// and exits 1 when a check fails, 2 when it cannot run. go test runs it
// against a wrong product (serve --shadow, which never bypasses): it must
// fail.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/scripts/e2e/e2eproc"
)

func main() {
	bin := flag.String("bin", "bin/openrecall", "the openrecall binary")
	am := flag.String("alertmanager", "prometheus-alertmanager", "the Alertmanager binary (Debian names it prometheus-alertmanager)")
	amtool := flag.String("amtool", "amtool", "the amtool binary")
	keep := flag.Bool("keep", false, "keep the temporary directory (database, configs, logs)")
	timeout := flag.Duration("timeout", 5*time.Minute, "the whole run's deadline: every wait polls until it")
	flag.Parse()
	r := &run{bin: *bin, am: *am, amtool: *amtool, deadline: time.Now().Add(*timeout)}
	code := r.main(*keep)
	os.Exit(code)
}

// family is the benign alert family: KubePodCrashLooping of the nightly ETL
// worker, which analysts call known_benign. Only the pod differs between
// firings, so every firing has the same rule, service and Alert DNA.
var family = map[string]string{"alertname": "KubePodCrashLooping", "service": "etl-worker", "env": "prod", "severity": "warning", "namespace": "batch"}

// attack is a brute-force alert: never bypassed.
var attack = map[string]string{"alertname": "SSHBruteForce", "service": "bastion", "env": "prod", "severity": "critical", "instance": "bastion-1"}

const attackSummary = "Brute force: 500 failed ssh logins for root from 203.0.113.9"

type run struct {
	bin, am, amtool string
	// deadline ends every wait: the run's own timeout, not one per wait.
	deadline       time.Time
	dir            string
	url            string // openrecall serve
	amURL          string
	ingest, retain string
	read           string
	procs          e2eproc.Group
	serve          *e2eproc.Proc // openrecall serve: its access log is checked
	failures       []string
}

func (r *run) main(keep bool) int {
	var err error
	if r.dir, err = os.MkdirTemp("", "openrecall-e2e-am-"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-alertmanager:", err)
		return 2
	}
	defer func() {
		r.stopAll()
		if keep {
			fmt.Printf("kept %s\n", r.dir)
		} else {
			_ = os.RemoveAll(r.dir) // a temporary directory
		}
	}()
	if err := r.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-alertmanager: cannot run:", err)
		r.dumpLogs()
		return 2
	}
	if err := r.scenario(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-alertmanager: cannot run:", err)
		r.dumpLogs()
		return 2
	}
	if len(r.failures) > 0 {
		for _, f := range r.failures {
			fmt.Println("FAIL", f)
		}
		r.dumpLogs()
		return 1
	}
	fmt.Println("PASS e2e-alertmanager")
	return 0
}

func (r *run) fail(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}

func (r *run) check(ok bool, format string, a ...any) {
	status := "ok  "
	if !ok {
		status = "FAIL"
		r.fail(format, a...)
	}
	fmt.Printf("  %s %s\n", status, fmt.Sprintf(format, a...))
}

func (r *run) dumpLogs() { r.procs.Dump(os.Stderr, 4000) }

func (r *run) stopAll() {
	for _, err := range r.procs.StopAll() {
		fmt.Fprintf(os.Stderr, "e2e-alertmanager: %v\n", err)
	}
}

func (r *run) setup() error {
	r.ingest, r.retain, r.read = e2eproc.Secret(), e2eproc.Secret(), e2eproc.Secret()
	// The retain token is named: a decision over the API records its
	// token's name as the analyst ("e2e").
	serveCfg := filepath.Join(r.dir, "config.yaml")
	if err := os.WriteFile(serveCfg, []byte("server:\n  tokens:\n    - name: e2e\n      token_env: E2E_RETAIN_TOKEN\n      scopes: [retain]\n"), 0o600); err != nil {
		return err
	}
	addr := make(chan string, 1)
	serve, err := r.procs.Start("openrecall serve", []string{
		"OPENRECALL_INGEST_TOKEN=" + r.ingest, "E2E_RETAIN_TOKEN=" + r.retain, "OPENRECALL_READ_TOKEN=" + r.read,
		// The audit key stays in the run's directory, not the user's.
		"OPENRECALL_AUDIT_KEY_FILE=" + filepath.Join(r.dir, "audit.key"),
	}, func(line string) {
		if rest, ok := strings.CutPrefix(line, "openrecall serve: listening on "); ok {
			addr <- strings.Fields(rest)[0]
		}
	}, r.bin, "--config", serveCfg, "--db", filepath.Join(r.dir, "memory.db"), "--log-level", "info", "--log-format", "json", "serve", "--listen", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.serve = serve
	select {
	case r.url = <-addr:
	case <-time.After(time.Until(r.deadline)):
		return errors.New("openrecall serve did not listen before the run's deadline")
	}
	fmt.Printf("openrecall serve on %s\n", r.url)

	port, err := e2eproc.FreePort()
	if err != nil {
		return err
	}
	r.amURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := fmt.Sprintf(`global:
  resolve_timeout: 5m
route:
  receiver: openrecall
  group_by: [alertname, service]
  group_wait: 1s
  group_interval: 3s
  repeat_interval: 1h
receivers:
  - name: openrecall
    webhook_configs:
      - url: %s/api/v1/alerts/alertmanager
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: %s
`, r.url, r.ingest)
	cfgPath := filepath.Join(r.dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if _, err := r.procs.Start("alertmanager", nil, nil, r.am, "--config.file="+cfgPath, "--storage.path="+filepath.Join(r.dir, "am"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address="); err != nil {
		return err
	}
	for {
		resp, err := http.Get(r.amURL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(r.deadline) {
			return errors.New("alertmanager not ready before the run's deadline")
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("alertmanager on %s, webhook receiver %s/api/v1/alerts/alertmanager with a bearer token\n", r.amURL, r.url)
	return nil
}

// api calls openrecall serve and decodes its JSON answer.
func (r *run) api(method, path, token string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s: %w", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, nil
}

func with(base map[string]string, extra ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// amtoolAdd fires (or, with end set, resolves) one alert through amtool.
func (r *run) amtoolAdd(labels map[string]string, summary string, start, end time.Time) error {
	args := []string{"--alertmanager.url=" + r.amURL, "alert", "add", "--annotation=summary=" + summary,
		"--start=" + start.Format(time.RFC3339)}
	if !end.IsZero() {
		args = append(args, "--end="+end.Format(time.RFC3339))
	}
	for k, v := range labels {
		args = append(args, k+"="+v)
	}
	out, err := exec.Command(r.amtool, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("amtool %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// served is the part of a result this check reads.
type served struct {
	AnalysisID string            `json:"analysis_id"`
	State      string            `json:"state"`
	Done       bool              `json:"done"`
	Result     openrecall.Result `json:"result"`
}

// results returns every finished analysis so far.
func (r *run) results() ([]served, error) {
	var all []served
	var cursor int64
	for {
		var page struct {
			Results []served `json:"results"`
			Next    int64    `json:"next"`
		}
		code, err := r.api(http.MethodGet, fmt.Sprintf("/api/v1/results?since=%d&limit=1000", cursor), r.read, nil, &page)
		if err != nil {
			return nil, err
		}
		if code != http.StatusOK {
			return nil, fmt.Errorf("results: status %d", code)
		}
		all = append(all, page.Results...)
		if len(page.Results) == 0 {
			return all, nil
		}
		cursor = page.Next
	}
}

// waitFor polls the results until done returns true or the run's deadline
// passes.
func (r *run) waitFor(what string, done func([]served) bool) ([]served, error) {
	for {
		rs, err := r.results()
		if err != nil {
			return nil, err
		}
		if done(rs) {
			return rs, nil
		}
		if time.Now().After(r.deadline) {
			return rs, fmt.Errorf("the run's deadline passed waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// settled waits until every webhook request Alertmanager made has been
// answered by openrecall and everything openrecall accepted is analysed:
// Alertmanager's count of webhook requests equals openrecall's count of
// requests answered on its Alertmanager route, the inbox is empty and
// every accepted alert has a finished result. Only then are the results
// counted, so a late redelivery is waited for and shows as a second
// triage, never missed by checking too early. Alertmanager sends nothing
// more unless a group changes: the resolve was the last change.
func (r *run) settled() ([]served, error) {
	var last string
	for {
		amMetrics, err := get(r.amURL + "/metrics")
		if err != nil {
			return nil, err
		}
		orMetrics, err := r.metrics()
		if err != nil {
			return nil, err
		}
		sent := metricValue(amMetrics, `alertmanager_notification_requests_total{integration="webhook"}`)
		// Only Alertmanager posts alerts in this run (memory is seeded
		// through the retain API).
		answered := metricSum(orMetrics, "openrecall_http_requests_total{", "/api/v1/alerts/{sender}")
		accepted := metricValue(orMetrics, `openrecall_alerts_received_total{endpoint="alertmanager"}`)
		depth := metricValue(orMetrics, "openrecall_inbox_depth")
		rs, err := r.results()
		if err != nil {
			return nil, err
		}
		done := 0
		for _, s := range rs {
			if s.Done {
				done++
			}
		}
		last = fmt.Sprintf("Alertmanager made %s webhook requests, openrecall answered %s, accepted %s alerts, finished %d results, inbox depth %s",
			sent, answered, accepted, done, depth)
		if sent != "" && sent != "0" && sent == answered && depth == "0" && accepted == fmt.Sprint(len(rs)) && done == len(rs) {
			fmt.Println("settled: " + last)
			return rs, nil
		}
		if time.Now().After(r.deadline) {
			return rs, fmt.Errorf("the run's deadline passed before the deliveries settled: %s", last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (r *run) scenario() error {
	// 1. Seed memory: five analysts' decisions on five earlier firings of
	// the family (pods of an earlier ReplicaSet of the same Deployment:
	// one identity, KubePodCrashLooping @ etl-worker/batch/etl-worker),
	// through the retain API.
	fmt.Println("seeding memory: 5 known_benign decisions on KubePodCrashLooping/etl-worker")
	for _, suffix := range []string{"s2k4m", "t5n6p", "v7q8r", "w9x2z", "b4c5d"} {
		pod := "etl-worker-5c8d9f7b4-" + suffix
		alert := map[string]any{"id": "seed-" + pod, "title": "Pod batch/" + pod + " is crash looping",
			"labels": with(family, "pod", pod), "annotations": map[string]string{"summary": "Pod batch/" + pod + " is crash looping"}}
		var ans struct {
			Created bool `json:"created"`
		}
		code, err := r.api(http.MethodPost, "/api/v1/retain", r.retain, map[string]any{"alert": alert, "decision": "known_benign",
			"note": "nightly ETL restarts while the warehouse vacuum runs; the job retries and finishes", "analyst": "e2e"}, &ans)
		if err != nil {
			return err
		}
		if code != http.StatusCreated {
			return fmt.Errorf("retain seed %s: status %d", pod, code)
		}
	}

	// 2. Fire: three pods of the family and one attack.
	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	pods := []string{"etl-worker-7d9f8b6c5-x2x9z", "etl-worker-7d9f8b6c5-h4j5k", "etl-worker-7d9f8b6c5-m6n7p"}
	fmt.Println("firing with amtool: 3 x KubePodCrashLooping/etl-worker, 1 x SSHBruteForce/bastion")
	for _, pod := range pods {
		if err := r.amtoolAdd(with(family, "pod", pod), "Pod batch/"+pod+" is crash looping", start, time.Time{}); err != nil {
			return err
		}
	}
	if err := r.amtoolAdd(attack, attackSummary, start, time.Time{}); err != nil {
		return err
	}
	triaged := func(rs []served) map[string][]served {
		m := map[string][]served{}
		for _, s := range rs {
			if s.Result.Outcome == openrecall.ResultTriaged {
				m[s.Result.Alert.Labels["pod"]+s.Result.Alert.Labels["instance"]] = append(m[s.Result.Alert.Labels["pod"]+s.Result.Alert.Labels["instance"]], s)
			}
		}
		return m
	}
	if _, err := r.waitFor("4 triaged alerts", func(rs []served) bool { return len(triaged(rs)) >= 4 }); err != nil {
		return err
	}

	// 3. Resolve the first pod's alert: Alertmanager sends it as resolved,
	// with the still-firing pods of its group again (redeliveries).
	fmt.Println("resolving KubePodCrashLooping pod " + pods[0] + " with amtool (--end in the past)")
	if err := r.amtoolAdd(with(family, "pod", pods[0]), "Pod batch/"+pods[0]+" is crash looping", start, time.Now().UTC().Add(-time.Second)); err != nil {
		return err
	}
	isResolved := func(s served) bool {
		return s.Result.Outcome == openrecall.ResultResolved && s.Result.Alert.Labels["pod"] == pods[0]
	}
	if _, err := r.waitFor("the resolve", func(rs []served) bool {
		for _, s := range rs {
			if isResolved(s) {
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	rs, err := r.settled()
	if err != nil {
		return err
	}

	// 4. Checks.
	fmt.Println("checks:")
	byAlert := triaged(rs)
	// A repeat is closed by memory either by its own bypass or, as a
	// member of the alert group of a firing memory bypassed (DESIGN §6a),
	// through the guard run again on the same memories: cost 0, the head's
	// benign decision, no model call.
	bypassedHeads := map[string]bool{}
	for _, pod := range pods {
		if got := byAlert[pod]; len(got) == 1 && got[0].Result.Bypassed {
			bypassedHeads[got[0].AnalysisID] = true
		}
	}
	for _, pod := range pods {
		got := byAlert[pod]
		r.check(len(got) == 1, "KubePodCrashLooping %s triaged exactly once (%d)", pod, len(got))
		if len(got) == 1 {
			res := got[0].Result
			how := "bypassed by memory"
			closed := res.Bypassed && res.Cost == 0
			if res.Grouped() {
				how = "bypassed by memory through its group (head " + res.Group.HeadAnalysisID + ")"
				closed = bypassedHeads[res.Group.HeadAnalysisID] && res.Decision.Benign() && res.Cost == 0 &&
					!res.Triage.RequiresHumanApproval && !res.EscalatedWithoutAnalysis
			}
			r.check(closed, "KubePodCrashLooping %s %s (%s, decision %s, cost %s, baseline %s)", pod, how, got[0].AnalysisID, res.Decision, res.Cost, res.Baseline)
		}
	}
	at := byAlert["bastion-1"]
	r.check(len(at) == 1, "SSHBruteForce triaged exactly once (%d)", len(at))
	if len(at) == 1 {
		res := at[0].Result
		r.check(!res.Bypassed && !res.Decision.Benign(), "SSHBruteForce not bypassed (%s, attack %q, decision %s, cost %s)", at[0].AnalysisID, res.Fingerprint.AttackPattern, res.Decision, res.Cost)
	}
	resolves := 0
	for _, s := range rs {
		if isResolved(s) {
			resolves++
		}
	}
	r.check(resolves == 1, "the resolve of %s recorded once (%d), not triaged", pods[0], resolves)
	for _, s := range rs {
		if s.Result.Outcome == openrecall.ResultRejected {
			r.fail("a delivery was rejected: %s", s.Result.Error)
		}
	}
	var rep struct {
		Intact   bool   `json:"intact"`
		Entries  int    `json:"entries"`
		Costs    int    `json:"cost_points"`
		HeadHash string `json:"head_hash"`
		KeyID    string `json:"key_id"`
	}
	code, err := r.api(http.MethodGet, "/api/v1/audit/verify", r.read, nil, &rep)
	if err != nil {
		return err
	}
	r.check(code == http.StatusOK && rep.Intact && rep.KeyID != "" && rep.Costs > 0, "audit trail intact, keyed, cost points chained (%d entries, %d cost points, head %s)", rep.Entries, rep.Costs, rep.HeadHash)

	metrics, err := r.metrics()
	if err != nil {
		return err
	}
	redelivered := metricValue(metrics, `openrecall_alerts_redelivered_total{endpoint="alertmanager"}`)
	r.check(redelivered != "" && redelivered != "0", "Alertmanager's redeliveries recognised and not triaged again (openrecall_alerts_redelivered_total %s)", redelivered)
	serveLog := r.serve.Output()
	r.check(strings.Contains(serveLog, `"user_agent":"Alertmanager/`), "deliveries came from Alertmanager itself (User-Agent in the access log)")
	fmt.Println("curl " + r.url + "/metrics (excerpt):")
	for line := range strings.SplitSeq(metrics, "\n") {
		if strings.HasPrefix(line, "openrecall_") && !strings.Contains(line, "_bucket") && !strings.HasPrefix(line, "openrecall_http_") {
			fmt.Println("  " + line)
		}
	}
	return nil
}

func (r *run) metrics() (string, error) { return get(r.url + "/metrics") }

// get returns the body of a GET.
func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// metricSum returns the sum, as text, of the samples of a metric (prefix,
// such as `name{`) whose labels contain label.
func metricSum(metrics, prefix, label string) string {
	var sum float64
	for line := range strings.SplitSeq(metrics, "\n") {
		if !strings.HasPrefix(line, prefix) || !strings.Contains(line, label) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			sum += v
		}
	}
	return fmt.Sprint(sum)
}

func metricValue(metrics, sample string) string {
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}
