// Command chat is the end-to-end check of deciding from Slack (make
// e2e-chat, DESIGN §12c). It starts, on loopback, the fake Slack Web API
// of internal/fakereceivers and `openrecall serve` with a slack receiver
// whose messages carry the decision buttons (interactive: true) and a
// chat.slack section (bot token, signing secret, api_url at the fake, the
// Slack user U0E2EALICE mapped to the analyst alice, a server.tokens name
// with the retain scope). It posts an escalation, waits for its message
// and its buttons, then acts as Slack does (payload.go): a click on Add a
// note… (a block_actions payload, signed), which must open the note modal
// (views.open at the fake); the modal's submission (view_submission:
// decision real, a note, two dead ends). It checks that `openrecall
// recall` finds the note and both dead ends, that the fake saw a
// chat.update of the message without its decision buttons, and that
// `openrecall audit verify` passes; then that a forged signature and an
// expired timestamp are refused (401) with nothing stored.
//
// Every wait polls until the run's deadline (-timeout). It ends what it
// started and exits 0 when every check passed, 1 at the first that
// failed (the steps depend on each other) with the logs, 2 when it
// cannot run.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
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
	keep := flag.Bool("keep", false, "keep the temporary directory (database, config, logs)")
	timeout := flag.Duration("timeout", 60*time.Second, "the whole run's deadline: every wait polls until it")
	flag.Parse()
	r := &run{bin: *bin, deadline: time.Now().Add(*timeout)}
	signal.Ignore(syscall.SIGPIPE)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e-chat: %s: stopping the processes it started\n", s)
		r.procs.StopAll()
		os.Exit(2)
	}()
	os.Exit(r.main(*keep))
}

// run is one run of the check.
type run struct {
	bin      string
	deadline time.Time
	dir, db  string
	cfgPath  string
	env      []string
	url      string // serve
	// ingest and read are serve's tokens; slackToken the bot's, which the
	// fake requires; signing the app's signing secret.
	ingest, read, retain, slackToken, signing string
	fakes                                     *fakereceivers.Fakes
	procs                                     e2eproc.Group
	checks                                    int
}

func (r *run) main(keep bool) int {
	var err error
	if r.dir, err = os.MkdirTemp("", "openrecall-e2e-chat-"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-chat:", err)
		return 2
	}
	defer func() {
		for _, err := range r.procs.StopAll() {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				fmt.Fprintf(os.Stderr, "e2e-chat: %v\n", err)
			}
		}
		if r.fakes != nil {
			_ = r.fakes.Close() // loopback servers of this process
		}
		if keep {
			fmt.Printf("kept %s\n", r.dir)
		} else {
			_ = os.RemoveAll(r.dir) // a temporary directory
		}
	}()
	if err := r.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-chat: cannot run:", err)
		r.procs.Dump(os.Stderr, 4000)
		return 2
	}
	if err := r.scenario(); err != nil {
		fmt.Println("FAIL", err)
		r.dumpLogs()
		return 1
	}
	fmt.Printf("PASS e2e-chat (%d checks)\n", r.checks)
	return 0
}

// ok records a passed check and prints it.
func (r *run) ok(format string, a ...any) {
	r.checks++
	fmt.Printf("  ok   %s\n", fmt.Sprintf(format, a...))
}

// dumpLogs prints serve's log and the fake Slack's requests.
func (r *run) dumpLogs() {
	r.procs.Dump(os.Stderr, 6000)
	if r.fakes == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "--- fake Slack: requests")
	for _, q := range r.fakes.State().Requests {
		fmt.Fprintf(os.Stderr, "%4d %s %s %s → %d\n", q.Seq, q.At.Format("15:04:05.000"), q.Method, q.Path, q.Status)
	}
}

// setup starts the fake Slack and serve.
func (r *run) setup() error {
	r.ingest, r.read, r.retain = e2eproc.Secret(), e2eproc.Secret(), e2eproc.Secret()
	r.slackToken, r.signing = "xoxb-"+e2eproc.Secret(), e2eproc.Secret()
	var err error
	if r.fakes, err = fakereceivers.Start(fakereceivers.Config{SlackToken: r.slackToken}); err != nil {
		return err
	}
	r.db = filepath.Join(r.dir, "memory.db")
	r.cfgPath = filepath.Join(r.dir, "config.yaml")
	r.env = []string{"OPENRECALL_INGEST_TOKEN=" + r.ingest, "OPENRECALL_READ_TOKEN=" + r.read, "E2E_ALICE_TOKEN=" + r.retain,
		"OPENRECALL_AUDIT_KEY_FILE=" + filepath.Join(r.dir, "audit.key"),
		"E2E_SLACK_TOKEN=" + r.slackToken, "E2E_SLACK_SIGNING_SECRET=" + r.signing}
	if err := os.WriteFile(r.cfgPath, []byte(serveConfig(r.fakes.Addrs().Slack)), 0o600); err != nil {
		return err
	}
	return r.startServe()
}

// serveConfig is serve's configuration: alice (retain) and a reader, the
// slack receiver with the buttons for what awaits a person, and the Slack
// app's section.
func serveConfig(slackAPI string) string {
	return fmt.Sprintf(`server:
  tokens:
    - name: alice
      token_env: E2E_ALICE_TOKEN
      scopes: [retain]
notify:
  external_url: https://openrecall.e2e.example
  backoff: {base: 200ms, max: 1s}
  receivers:
    - name: chat
      type: slack
      token: env:E2E_SLACK_TOKEN
      channel: "#oncall"
      api_url: %s
      interactive: true
      timeout: 5s
  route:
    receiver: ""
    routes:
      - receiver: chat
        matchers: ['decision=~"escalated|real"']
chat:
  slack:
    bot_token: env:E2E_SLACK_TOKEN
    signing_secret: env:E2E_SLACK_SIGNING_SECRET
    api_url: %s
    users:
      %s: alice
`, slackAPI, slackAPI, slackUser)
}

// cmd returns the binary run with args on the run's database and config.
func (r *run) cmd(args ...string) *exec.Cmd {
	c := exec.Command(r.bin, append([]string{"--config", r.cfgPath, "--db", r.db}, args...)...)
	c.Env = append(os.Environ(), r.env...)
	return c
}

func (r *run) startServe() error {
	addr := make(chan string, 1)
	p, err := r.procs.Start("openrecall serve", r.env, func(line string) {
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
	select {
	case r.url = <-addr:
	case <-p.Done():
		return fmt.Errorf("serve exited before it listened: %v", p.Err())
	case <-time.After(time.Until(r.deadline)):
		return errors.New("serve did not listen before the run's deadline")
	}
	fmt.Printf("openrecall serve on %s, fake Slack on %s\n", r.url, r.fakes.Addrs().Slack)
	return nil
}

// waitUntil polls cond until it holds or the run's deadline passes.
func (r *run) waitUntil(what string, cond func() (bool, error)) error {
	return e2eproc.WaitUntil(r.deadline, what, cond)
}

// interact posts body to the interaction endpoint as Slack does, signed
// with secret at the time at, and returns the status and answer.
func (r *run) interact(secret string, at time.Time, body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/v1/slack/interactions", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	ts, sig := sign(secret, at, body)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sig)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// postAlert posts alert to /api/v1/alerts and returns its analysis id.
func (r *run) postAlert(alert []byte) (string, error) {
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/v1/alerts", strings.NewReader(string(alert)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+r.ingest)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var acc struct {
		Analyses []struct {
			AnalysisID string `json:"analysis_id"`
		} `json:"analyses"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &acc) != nil || len(acc.Analyses) != 1 {
		return "", fmt.Errorf("POST /api/v1/alerts: %d %s, want 202 and one analysis", resp.StatusCode, b)
	}
	return acc.Analyses[0].AnalysisID, nil
}
