// Command notify is the end-to-end check of `openrecall serve`'s
// notifications (make e2e-notify, DESIGN §12b). It starts, on loopback,
// the fake receivers of internal/fakereceivers (PagerDuty Events v2 behind
// a relay this program controls, Opsgenie, Slack's Web API, a Teams
// workflow, the signed webhook, SMTP), a real Prometheus Alertmanager
// whose own webhook receiver posts to a sink here, and serve with a notify
// section that routes to all seven, on a memory seeded with the example's
// decisions. It then posts a realistic night (scenario.go): repeats memory
// closes, escalations, a storm, security detections, recoveries, a
// redelivery, a person's decision, and an outage of PagerDuty during which
// serve is killed -9 with a trigger delivered but not yet recorded, then
// started again on the same database.
//
// It checks that every receiver got exactly what the routes say
// (expect.go): each result's triggers as an oracle written here from the
// route tree reads them, the resolves of what was notified and only that,
// the updates of the decision, nothing for what openrecall closed; the
// outbox's intents the same set; PagerDuty one incident per episode (a
// trigger re-sent after the kill deduplicated by its dedup_key, reported);
// Opsgenie alerts closed and noted, the Slack message edited in place, the
// mails threaded, Alertmanager's alerts carrying openrecall's labels and
// resolved; and the outbox empty at the end: nothing pending, no dead
// letter. Every wait polls until the run's own deadline (-timeout). It
// ends every process it started, prints a table per receiver, and exits 0
// when every check passed, 1 when one failed (with the processes' logs)
// and 2 when it cannot run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/scripts/e2e/e2eproc"
)

func main() {
	bin := flag.String("bin", "bin/openrecall", "the openrecall binary")
	am := flag.String("alertmanager", "prometheus-alertmanager", "the Alertmanager binary (Debian names it prometheus-alertmanager)")
	amtool := flag.String("amtool", "amtool", "the amtool binary")
	keep := flag.Bool("keep", false, "keep the temporary directory (database, configs, logs)")
	timeout := flag.Duration("timeout", 90*time.Second, "the whole run's deadline: every wait polls until it (a run takes seconds)")
	flag.Parse()
	r := &run{bin: *bin, am: *am, amtool: *amtool, deadline: time.Now().Add(*timeout)}
	// Interrupted, or its output closed (| head): the processes it started
	// are stopped all the same; a closed output is only a failed write.
	signal.Ignore(syscall.SIGPIPE)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e-notify: %s: stopping the processes it started\n", s)
		r.stopAll()
		if r.dir != "" && !*keep {
			_ = os.RemoveAll(r.dir) // a temporary directory
		}
		os.Exit(2)
	}()
	os.Exit(r.main(*keep))
}

// run is one run of the check: the processes and fakes it started, the
// credentials it gave them, what it posted and what it found.
type run struct {
	bin, am, amtool string
	// deadline ends every wait: the run's own timeout, not one per wait.
	deadline time.Time
	dir      string
	db       string
	cfgPath  string
	serveEnv []string
	url      string // openrecall serve, as it listens now
	amURL    string

	ingest, retain, read string
	// The receivers' credentials, as serve's configuration reads them
	// from its environment and the fakes require them.
	pdKey, ogKey, slackToken, hookSecret string

	fakes *fakereceivers.Fakes
	pd    *relay        // PagerDuty's events endpoint, in front of its fake
	sink  *amSink       // Alertmanager's webhook receiver
	serve *e2eproc.Proc // the serve process running now
	// procs are the processes started; an interruption stops them from
	// another goroutine.
	procs e2eproc.Group

	// posted are the scenario's alerts by name, in posting order.
	posted []*posted
	byName map[string]*posted
	// decided is the analysis a person decided through the API.
	decided string

	failures []string
	checks   int
}

func (r *run) main(keep bool) int {
	var err error
	if r.dir, err = os.MkdirTemp("", "openrecall-e2e-notify-"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-notify:", err)
		return 2
	}
	defer func() {
		r.stopAll()
		if r.fakes != nil {
			_ = r.fakes.Close() // loopback servers of this process
		}
		if r.pd != nil {
			r.pd.close()
		}
		if r.sink != nil {
			r.sink.close()
		}
		if keep {
			fmt.Printf("kept %s\n", r.dir)
		} else {
			_ = os.RemoveAll(r.dir) // a temporary directory
		}
	}()
	r.byName = map[string]*posted{}
	start := time.Now()
	if err := r.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-notify: cannot run:", err)
		r.dumpLogs()
		return 2
	}
	if err := r.scenario(); err != nil {
		// The product did not get there before the deadline, or answered
		// what it must not: a failure, with what was seen so far.
		r.fail("%v", err)
		fmt.Println("FAIL", err)
		r.report()
	}
	fmt.Printf("run time %s\n", time.Since(start).Round(100*time.Millisecond))
	if len(r.failures) > 0 {
		for i, f := range r.failures {
			if i == 40 {
				fmt.Printf("FAIL … and %d more\n", len(r.failures)-i)
				break
			}
			fmt.Println("FAIL", f)
		}
		r.dumpLogs()
		return 1
	}
	fmt.Printf("PASS e2e-notify (%d checks)\n", r.checks)
	return 0
}

func (r *run) fail(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}

// check records one check and prints it.
func (r *run) check(ok bool, format string, a ...any) bool {
	r.checks++
	line := strings.TrimSpace(fmt.Sprintf(format, a...))
	status := "ok  "
	if !ok {
		status = "FAIL"
		r.failures = append(r.failures, line)
	}
	fmt.Printf("  %s %s\n", status, line)
	return ok
}

// dumpLogs prints the tail of every process's output and the fakes' last
// requests, for the person reading a failure.
func (r *run) dumpLogs() {
	r.procs.Dump(os.Stderr, 6000)
	if r.fakes == nil {
		return
	}
	reqs := r.fakes.State().Requests
	if len(reqs) > 40 {
		reqs = reqs[len(reqs)-40:]
	}
	fmt.Fprintln(os.Stderr, "--- fake receivers: last requests")
	for _, q := range reqs {
		fmt.Fprintf(os.Stderr, "%4d %s %-9s %s %s → %d%s\n", q.Seq, q.At.Format("15:04:05.000"), q.Receiver, q.Method, q.Path, q.Status,
			map[bool]string{true: " (failure asked for)"}[q.Failed])
	}
}

// stopAll stops every process started, the last first.
func (r *run) stopAll() {
	for _, err := range r.procs.StopAll() {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			continue // a process killed on purpose, or that already failed: its log says
		}
		fmt.Fprintf(os.Stderr, "e2e-notify: %v\n", err)
	}
}

// setup starts the fakes, the PagerDuty relay, Alertmanager and its sink,
// seeds the memory and starts serve.
func (r *run) setup() error {
	r.ingest, r.retain, r.read = e2eproc.Secret(), e2eproc.Secret(), e2eproc.Secret()
	r.pdKey, r.ogKey, r.slackToken, r.hookSecret = e2eproc.Secret(), e2eproc.Secret(), "xoxb-"+e2eproc.Secret(), e2eproc.Secret()
	var err error
	r.fakes, err = fakereceivers.Start(fakereceivers.Config{PagerDutyRoutingKey: r.pdKey, OpsgenieAPIKey: r.ogKey,
		SlackToken: r.slackToken, WebhookSecret: r.hookSecret})
	if err != nil {
		return err
	}
	if r.pd, err = startRelay(r.fakes.Addrs().PagerDuty); err != nil {
		return err
	}
	if r.sink, err = startSink(); err != nil {
		return err
	}
	if err := r.startAlertmanager(); err != nil {
		return err
	}
	r.db = filepath.Join(r.dir, "memory.db")
	if err := r.writeServeConfig(); err != nil {
		return err
	}
	// The example's analyst decisions, as `make run` seeds them: the
	// memories that close the repeats.
	seed := exec.Command(r.bin, "--db", r.db, "memory", "seed")
	seed.Env = append(os.Environ(), r.serveEnv...)
	if out, err := seed.CombinedOutput(); err != nil {
		return fmt.Errorf("%s memory seed: %w: %s", r.bin, err, out)
	}
	return r.startServe("openrecall serve")
}

func (r *run) startAlertmanager() error {
	port, err := e2eproc.FreePort()
	if err != nil {
		return err
	}
	r.amURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	// One group per openrecall episode, sent on within a second; the
	// resolved notifications too.
	cfg := fmt.Sprintf(`global:
  resolve_timeout: 5m
route:
  receiver: sink
  group_by: [openrecall_episode]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: sink
    webhook_configs:
      - url: %s/alerts
        send_resolved: true
`, r.sink.url)
	cfgPath := filepath.Join(r.dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if _, err := r.procs.Start("alertmanager", nil, nil, r.am, "--config.file="+cfgPath, "--storage.path="+filepath.Join(r.dir, "am"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address="); err != nil {
		return err
	}
	for {
		if body, err := get(r.amURL + "/-/ready"); err == nil && body != "" {
			break
		}
		if time.Now().After(r.deadline) {
			return errors.New("alertmanager not ready before the run's deadline")
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("alertmanager on %s, its webhook receiver the sink %s/alerts\n", r.amURL, r.sink.url)
	return nil
}

// writeServeConfig writes serve's configuration: tokens, a short lease,
// a fixed instance name (a restart takes its own claims back at once),
// and the notify section (serveConfig).
func (r *run) writeServeConfig() error {
	a := r.fakes.Addrs()
	r.cfgPath = filepath.Join(r.dir, "config.yaml")
	r.serveEnv = []string{
		"OPENRECALL_INGEST_TOKEN=" + r.ingest, "E2E_RETAIN_TOKEN=" + r.retain, "OPENRECALL_READ_TOKEN=" + r.read,
		// The audit key stays in the run's directory, not the user's.
		"OPENRECALL_AUDIT_KEY_FILE=" + filepath.Join(r.dir, "audit.key"),
		"E2E_PD_ROUTING_KEY=" + r.pdKey, "E2E_OPSGENIE_KEY=" + r.ogKey, "E2E_SLACK_TOKEN=" + r.slackToken,
		"E2E_TEAMS_WEBHOOK=" + a.Teams, "E2E_HOOK_URL=" + a.Webhook, "E2E_HOOK_SECRET=" + r.hookSecret,
	}
	cfg := serveConfig(receiverAddrs{PagerDuty: r.pd.url + "/v2/enqueue", Opsgenie: a.Opsgenie, Slack: a.Slack,
		Alertmanager: r.amURL, SMTPHost: a.SMTPHost, SMTPPort: a.SMTPPort})
	return os.WriteFile(r.cfgPath, []byte(cfg), 0o600)
}

// startServe starts serve on the run's database and waits for it to
// listen.
func (r *run) startServe(name string) error {
	addr := make(chan string, 1)
	p, err := r.procs.Start(name, r.serveEnv, func(line string) {
		if rest, ok := strings.CutPrefix(line, "openrecall serve: listening on "); ok {
			select {
			case addr <- strings.Fields(rest)[0]:
			default:
			}
		}
	}, r.bin, "--config", r.cfgPath, "--db", r.db, "--log-level", "info", "--log-format", "json", "serve", "--listen", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r.serve = p
	select {
	case r.url = <-addr:
	case <-p.Done():
		return fmt.Errorf("%s exited before it listened: %v", name, p.Err())
	case <-time.After(time.Until(r.deadline)):
		return fmt.Errorf("%s did not listen before the run's deadline", name)
	}
	fmt.Printf("%s on %s\n", name, r.url)
	return nil
}

// waitUntil polls cond until it holds or the run's deadline passes.
func (r *run) waitUntil(what string, cond func() (bool, error)) error {
	return e2eproc.WaitUntil(r.deadline, what, cond)
}
