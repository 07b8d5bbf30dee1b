// Package cockpit_test drives the cockpit of the real `openrecall serve`
// binary on loopback in a real headless Chromium (Debian's chromium,
// through chromedp): log in, review an escalated alert with two dead ends,
// watch it leave the queue, check recall and audit verify from the command
// line, resubmit, inject hostile text everywhere and check the DOM, approve
// a proposed exception memory made and see the next firing take it, and
// check that cross-site posts and read sessions are refused and that every
// page carries the CSP. TestCockpitShift (shift_test.go) walks a shift on
// the example data: the live queue, resolved alerts, source links, "this
// was wrong", bulk confirmation; it takes the screenshots of the queue
// (1,440 and 390 px) and a review page into .e2e-cockpit/. Run them with
// `make e2e-cockpit`.
package cockpit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/openrecall/openrecall/internal/testenv"
)

// The CSP every answer must carry (cockpit.CSP, restated: the test checks
// the binary, not the package).
const wantCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// payloadsPath holds the hostile texts of the cockpit's handler test, one
// a line.
const payloadsPath = "../../../server/cockpit/testdata/xss.txt"

const (
	aliceToken  = "alice-e2e-secret-0123"
	ritaToken   = "rita-e2e-secret-01234"
	ingestToken = "ingest-e2e-secret-012"
)

// chromiumPath finds Debian's chromium: under CI=true its absence fails the
// test, elsewhere it skips loudly.
func chromiumPath(t *testing.T) string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if testenv.CI() {
		t.Fatal("CI=true and no chromium on PATH: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("SKIPPED: no chromium on PATH, the cockpit's browser test did not run (apt-get install chromium, then make e2e-cockpit)")
	return ""
}

type env struct {
	t    *testing.T
	bin  string
	dir  string
	db   string
	cfg  string
	base string
	envv []string
}

// cli runs the binary against the test's database and returns its stdout
// and exit status.
func (e *env) cli(args ...string) (string, int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"--db", e.db, "--config", e.cfg}, args...)...)
	cmd.Env = e.envv
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if code != 0 {
		e.t.Logf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String(), code
}

func buildBinary(t *testing.T) string {
	if b := os.Getenv("OPENRECALL_BIN"); b != "" {
		return b
	}
	return testenv.Build(t, filepath.Join("..", "..", ".."))
}

// startServe starts `openrecall serve` on a loopback port and returns its
// base URL once it listens.
func (e *env) startServe(ctx context.Context) {
	e.t.Helper()
	cmd := exec.CommandContext(ctx, e.bin, "--db", e.db, "--config", e.cfg, "serve", "--listen", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = e.envv
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "openrecall serve: listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case a := <-addr:
		e.base = a
	case <-ctx.Done():
		e.t.Fatal("serve did not say where it listens")
	}
}

// postAlerts posts a body of alerts with the ingest token and waits, until
// the test's deadline, for the inbox to drain.
func (e *env) postAlerts(ctx context.Context, body []byte) {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/api/v1/alerts", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ingestToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		e.t.Fatalf("post alerts: %d", resp.StatusCode)
	}
	e.drain(ctx)
}

// drain waits, until the test's deadline, for serve's inbox to drain.
func (e *env) drain(ctx context.Context) {
	e.t.Helper()
	for {
		var rd struct {
			InboxDepth int `json:"inbox_depth"`
		}
		resp, err := http.Get(e.base + "/readyz")
		if err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&rd)
			_ = resp.Body.Close()
			if rd.InboxDepth == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			e.t.Fatal("the inbox did not drain before the test's deadline")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type waiting struct {
	AnalysisID string `json:"analysis_id"`
	Reason     string `json:"reason"`
	Title      string `json:"title"`
	Proposed   string `json:"proposed"`
	Severity   string `json:"severity"`
	Attack     string `json:"attack"`
	AlertID    string `json:"alert_id"`
}

func (e *env) queue() []waiting {
	e.t.Helper()
	out, code := e.cli("queue", "-o", "json")
	if code != 0 {
		e.t.Fatalf("queue: exit %d", code)
	}
	var ws []waiting
	if err := json.Unmarshal([]byte(out), &ws); err != nil {
		e.t.Fatalf("queue -o json: %v\n%s", err, out)
	}
	return ws
}

// auditEntries verifies the trail from the command line and returns its
// entry count.
func (e *env) auditEntries() int {
	e.t.Helper()
	out, code := e.cli("audit", "verify", "-o", "json")
	var v struct {
		Intact  bool  `json:"intact"`
		Entries int64 `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || !v.Intact {
		e.t.Fatalf("audit verify: exit %d, %v, %s", code, err, out)
	}
	return int(v.Entries)
}

// client is a Go HTTP client holding the browser's session cookie.
func (e *env) client(ctx context.Context) *http.Client {
	e.t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{e.base + "/ui/"}})
	if err != nil {
		e.t.Fatal(err)
	}
	cookies := res.Cookies
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.base + "/ui/")
	for _, c := range cookies {
		if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
			e.t.Errorf("session cookie %s: HttpOnly %v SameSite %s", c.Name, c.HTTPOnly, c.SameSite)
		}
		jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: c.Value, Path: c.Path}})
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// newEnv writes a configuration with alice (read, retain), rita (read) and
// an ingester, seeds memory with the bundled example decisions and starts
// serve on loopback.
func newEnv(ctx context.Context, t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, bin: buildBinary(t), dir: dir, db: filepath.Join(dir, "memory.db"), cfg: filepath.Join(dir, "config.yaml")}
	e.envv = append(os.Environ(), "OPENRECALL_AUDIT_KEY="+strings.Repeat("ab", 32))
	cfg := fmt.Sprintf(`server:
  tokens:
    - name: alice
      token: %s
      scopes: [read, retain]
    - name: rita
      token: %s
      scopes: [read]
    - name: ingester
      token: %s
      scopes: [ingest]
`, aliceToken, ritaToken, ingestToken)
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := e.cli("memory", "seed"); code != 0 {
		t.Fatal("memory seed failed")
	}
	e.startServe(ctx)
	return e
}

// testContext is the context of a test's waits (serve listening, the
// inbox draining, the browser): they last until the test's own deadline.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	if deadline, ok := testenv.Deadline(t); ok {
		return context.WithDeadline(context.Background(), deadline)
	}
	return context.WithCancel(context.Background())
}

// postExample posts the bundled example queue and waits for its analyses.
func (e *env) postExample(ctx context.Context) {
	e.t.Helper()
	queue, err := os.ReadFile("../../../examples/queue.jsonl")
	if err != nil {
		e.t.Fatal(err)
	}
	e.postAlerts(ctx, queue)
}

// newBrowser starts a headless chromium with a window width px wide; it
// ends with the test.
func newBrowser(ctx context.Context, t *testing.T, chromium string, width int) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, 900),
	)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	return bctx
}

// login logs alice in and waits for the queue.
func (e *env) login(bctx context.Context) {
	e.t.Helper()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), aliceToken),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("queue")),
	); err != nil {
		e.t.Fatalf("log in: %v", err)
	}
}

func TestCockpitInABrowser(t *testing.T) {
	if os.Getenv("OPENRECALL_E2E_COCKPIT") == "" {
		t.Skip("the cockpit's browser test runs with make e2e-cockpit (OPENRECALL_E2E_COCKPIT=1)")
	}
	chromium := chromiumPath(t)
	raw, err := os.ReadFile(payloadsPath)
	if err != nil {
		t.Fatal(err)
	}
	payloads := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	ctx, cancel := testContext(t)
	defer cancel()
	e := newEnv(ctx, t)

	// The example queue, then ten alerts made of hostile text.
	e.postExample(ctx)
	var hostile bytes.Buffer
	for i, p := range payloads {
		a := map[string]any{"id": fmt.Sprintf("hostile-%d", i), "title": p, "text": p, "severity": "critical",
			"labels": map[string]string{"alertname": fmt.Sprintf("Hostile%d", i), "service": "web", "x" + fmt.Sprint(i): p}}
		b, _ := json.Marshal(a)
		hostile.Write(append(b, '\n'))
	}
	e.postAlerts(ctx, hostile.Bytes())

	before := e.queue()
	var target waiting
	hostileIDs := map[string]waiting{}
	for _, w := range before {
		switch {
		case slices.Contains(payloads, w.Title):
			hostileIDs[w.AnalysisID] = w
		case w.Reason == "escalated" && target.AnalysisID == "":
			target = w
		}
	}
	if target.AnalysisID == "" || len(hostileIDs) != len(payloads) {
		t.Fatalf("want an escalated alert and %d hostile ones waiting; queue: %+v", len(payloads), before)
	}

	bctx := newBrowser(ctx, t, chromium, 1280)
	e.login(bctx)
	checkNoInjection(t, bctx, "queue")

	// Review the escalated alert: decide otherwise with two dead ends.
	note := "short-lived test certificate in the dev playground: its expiry is intended"
	dead := []string{"checked cert-manager logs: renewal is disabled on purpose", "renewed it by hand: it expires again, as designed"}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/review/"+target.AnalysisID),
		chromedp.WaitVisible(chromedp.ID("decide-form")),
		chromedp.SetValue(chromedp.ID("decision"), "known_benign"),
		chromedp.SendKeys(chromedp.ID("note"), note),
		chromedp.SendKeys(chromedp.ID("dead-end-1"), dead[0]),
		chromedp.SendKeys(chromedp.ID("dead-end-2"), dead[1]),
	); err != nil {
		t.Fatalf("review: %v", err)
	}
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.ID("decide-submit")),
		chromedp.WaitVisible(chromedp.ID("flash")),
	); err != nil {
		t.Fatalf("decide: %v", err)
	}
	stillThere, err := chromedp.Run(bctx, chromedp.Evaluate[bool](
		fmt.Sprintf(`document.querySelector('tr[data-analysis=%q]') !== null`, target.AnalysisID)))
	if err != nil {
		t.Fatal(err)
	}
	if stillThere {
		t.Errorf("%s is still in the queue the browser shows", target.AnalysisID)
	}
	for _, w := range e.queue() {
		if w.AnalysisID == target.AnalysisID {
			t.Errorf("%s is still in openrecall queue", target.AnalysisID)
		}
	}

	// recall shows both dead ends; audit verify passes.
	alertFile := filepath.Join(e.dir, "alert.json")
	e.resultAlert(target.AnalysisID, alertFile)
	out, code := e.cli("recall", alertFile, "-o", "json")
	if code != 0 || !strings.Contains(out, dead[0]) || !strings.Contains(out, dead[1]) || !strings.Contains(out, note) {
		t.Errorf("recall (exit %d) lacks the note or a dead end:\n%s", code, out)
	}
	entries := e.auditEntries()

	// A resubmit changes nothing.
	alice := e.client(bctx)
	form := url.Values{"action": {"decide"}, "decision": {"known_benign"}, "note": {note}, "dead_end": dead}
	resp := postForm(t, alice, e.base+"/ui/review/"+target.AnalysisID, form, "Origin", e.base)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "done=already") {
		t.Errorf("resubmit: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := e.auditEntries(); n != entries {
		t.Errorf("the resubmit changed the trail: %d entries, were %d", n, entries)
	}

	// Hostile text in notes and dead ends too: decide one hostile alert
	// through the browser with every payload.
	var first string
	for id := range hostileIDs {
		first = id
		break
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/review/"+first),
		chromedp.WaitVisible(chromedp.ID("decide-form")),
		chromedp.SetValue(chromedp.ID("decision"), "real"),
		chromedp.SendKeys(chromedp.ID("note"), strings.Join(payloads, " ")),
		chromedp.SendKeys(chromedp.ID("dead-end-1"), payloads[0]),
		chromedp.SendKeys(chromedp.ID("dead-end-2"), payloads[1]),
		chromedp.SendKeys(chromedp.ID("dead-end-3"), payloads[5]),
		chromedp.SendKeys(chromedp.ID("dead-end-4"), payloads[9]),
		chromedp.Click(chromedp.ID("decide-submit")),
		chromedp.WaitVisible(chromedp.ID("flash")),
	); err != nil {
		t.Fatalf("hostile decision: %v", err)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/review/"+first),
		chromedp.WaitVisible(chromedp.ID("decided")),
	); err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS("#decided a"), "href"))
	if err != nil || !href.Exists {
		t.Fatalf("the decided review links no memory: %v", err)
	}
	memoryHref := href.Value
	pages := []string{"/ui/queue", memoryHref, "/ui/cost", "/ui/memory"}
	for id := range hostileIDs {
		pages = append(pages, "/ui/review/"+id, "/ui/analysis/"+id)
	}
	for _, p := range pages {
		if err := chromedp.Do(bctx, chromedp.Navigate(e.base+p), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		checkNoInjection(t, bctx, p)
		// The CSP is on every page.
		resp, err := alice.Get(e.base + p)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != wantCSP {
			t.Errorf("%s: %d, CSP %q", p, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
	}
	for _, p := range []string{"/ui/login", "/healthz", "/readyz"} {
		resp, err := http.Get(e.base + p)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.Header.Get("Content-Security-Policy") != wantCSP {
			t.Errorf("%s: CSP %q", p, resp.Header.Get("Content-Security-Policy"))
		}
	}

	// Approve a proposed exception in the browser.
	e.approveProposal(ctx, bctx)

	// Every page fits the window on a laptop and on a phone: nothing
	// scrolls sideways (the hostile titles, labels and notes included).
	checkWidths(t, bctx, e.base, append(pages, "/ui/exceptions", "/ui/outbox"))
	checkShortcuts(t, bctx, e.base)

	// A cross-site POST from another site's page, in the logged-in
	// browser, is refused and changes nothing.
	var second string
	for id := range hostileIDs {
		if id != first {
			second = id
			break
		}
	}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/review/%s"><input name="action" value="decide"><input name="decision" value="false_positive"><input name="note" value="pwned"></form><script>document.getElementById("f").submit()</script>`, e.base, second)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(evilURL),
		chromedp.WaitVisible(chromedp.ID("error")),
	); err != nil {
		t.Fatalf("cross-site post: %v", err)
	}
	refused, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("error")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refused, "cross-origin") && !strings.Contains(refused, "log in") {
		t.Errorf("cross-site post answered %q", refused)
	}
	resp = postForm(t, alice, e.base+"/ui/review/"+second, url.Values{"action": {"decide"}, "decision": {"real"}, "note": {"x"}},
		"Sec-Fetch-Site", "cross-site", "Origin", evilURL)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site POST with alice's cookie: %d, want 403", resp.StatusCode)
	}

	// A POST with a read session is refused.
	jar, _ := cookiejar.New(nil)
	rita := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp := postForm(t, rita, e.base+"/ui/login", url.Values{"token": {ritaToken}}, "Origin", e.base); resp.Header.Get("Location") != "/ui/queue" {
		t.Fatalf("rita's login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := postForm(t, rita, e.base+"/ui/review/"+second, url.Values{"action": {"decide"}, "decision": {"real"}, "note": {"x"}}, "Origin", e.base); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST with a read session: %d, want 403", resp.StatusCode)
	}
	for _, w := range e.queue() {
		if w.AnalysisID == second {
			return
		}
	}
	t.Errorf("a refused POST decided %s", second)
}

// checkWidths loads every page at 1,280 and 390 px wide and fails when
// the document is wider than the window.
func checkWidths(t *testing.T, ctx context.Context, base string, pages []string) {
	t.Helper()
	for _, w := range []int64{1280, 390} {
		for _, p := range pages {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900), chromedp.Navigate(base+p), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
				t.Fatalf("%s at %d px: %v", p, w, err)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
			if err != nil {
				t.Fatal(err)
			}
			if got[0] > got[1] {
				t.Errorf("%s at %d px: the page is %d px wide, the window %d", p, w, got[0], got[1])
			}
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// checkShortcuts presses j twice on the queue (the second row is marked
// and its link focused), ? (the help lists the keys) and Escape (it
// closes), and checks the skip link comes first.
func checkShortcuts(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/ui/queue"), chromedp.WaitVisible(chromedp.CSS("tr.item")),
		chromedp.KeyEvent("j"), chromedp.KeyEvent("j")); err != nil {
		t.Fatal(err)
	}
	// The help dialog takes the focus: look at the row's first.
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('tr.item.current') && document.querySelector('tr.item.current').contains(document.activeElement)`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("?")); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Current int    `json:"current"`
		Help    bool   `json:"help"`
		Skip    string `json:"skip"`
	}
	js := `(() => { const rows = [...document.querySelectorAll('tr.item')]; const cur = document.querySelector('tr.item.current');
		return {current: rows.indexOf(cur),
		help: !!document.querySelector('dialog#keys[open]') && document.querySelector('dialog#keys').textContent.includes('next row'),
		skip: document.body.firstElementChild.getAttribute('href')}; })()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[state](js))
	if err != nil {
		t.Fatal(err)
	}
	if got.Current != 1 || !focused || !got.Help || got.Skip != "#content" {
		t.Errorf("after j, j, ?: %+v, link focused %v; want the second row marked and focused, the help open, the skip link first", got, focused)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('dialog#keys[open]')`))
	if err != nil || open {
		t.Errorf("Escape did not close the help: %v", err)
	}
}

// checkNoInjection checks the DOM of the page the browser shows: no
// element a payload would make, and no payload ran.
func checkNoInjection(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	type verdict struct {
		XSS any `json:"xss"`
		Bad int `json:"bad"`
	}
	js := `(() => ({xss: window.__xss === undefined ? null : window.__xss,
		bad: document.querySelectorAll('main script, main img:not(#curve), main svg, main iframe, main math, main details, main b, main style, a[href^="javascript"], [onerror], [onload], [ontoggle]').length}))()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[verdict](js))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if got.XSS != nil || got.Bad != 0 {
		t.Errorf("%s: a payload injected %d elements, window.__xss=%v", page, got.Bad, got.XSS)
	}
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// resultAlert writes the alert analysis id analysed, as the API serves it,
// to file.
func (e *env) resultAlert(id, file string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.base+"/api/v1/results/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+ritaToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var sv struct {
		Result struct {
			Alert json.RawMessage `json:"alert"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sv); err != nil || len(sv.Result.Alert) == 0 {
		e.t.Fatalf("result %s: %d %v", id, resp.StatusCode, err)
	}
	if err := os.WriteFile(file, sv.Result.Alert, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// falcoShell is a falcosidekick delivery of Falco's "Terminal shell in
// container" by root at Notice, firing n (its own pod and container, so
// each firing opens a group of its own).
func falcoShell(n int) []byte {
	return fmt.Appendf(nil, `{"uuid":"5d0ba0a1-2b7e-4f4e-9c3b-7a0f62c1e%03d","output":"A shell was spawned in a container with an attached terminal (user=root process=sh)",
"priority":"Notice","rule":"Terminal shell in container","time":"2024-06-13T19:%02d:58.532086161Z","source":"syscall",
"tags":["T1059","container","mitre_execution","shell"],"hostname":"ip-10-0-12-34.eu-west-1.compute.internal",
"output_fields":{"container.id":"78886%02dc3cf8","container.image.repository":"docker.io/library/alpine","container.name":"alpine",
"k8s.ns.name":"default","k8s.pod.name":"alpine-deployment-77789455d6-%s","proc.cmdline":"sh -c uptime","proc.name":"sh",
"proc.pname":"runc","user.name":"root"}}`, n, n%60, n, falcoPods[n%len(falcoPods)])
}

// falcoPods are pod name suffixes as Kubernetes makes them (identity
// strips them: every firing is of one service).
var falcoPods = []string{"m7flp", "x2x4q", "q8k2z", "b9c4w", "t5r8v", "k6j7n", "p2d6s"}

// fire posts firing n of falcoShell as falcosidekick does and returns its
// analysis id (result waits for its analysis).
func (e *env) fire(ctx context.Context, n int) string {
	e.t.Helper()
	acc := e.send(ctx, "/api/v1/alerts/falcosidekick", falcoShell(n))
	if len(acc) != 1 {
		e.t.Fatalf("falco firing %d: %+v", n, acc)
	}
	return acc[0].AnalysisID
}

// servedResult is what GET /api/v1/results/{id} says of an analysis.
type servedResult struct {
	Result struct {
		Decision    string `json:"decision"`
		Fingerprint struct {
			AttackPattern string `json:"attack_pattern"`
		} `json:"fingerprint"`
		Proposal *struct {
			ID string `json:"id"`
		} `json:"proposal"`
		Exception *struct {
			ID      string `json:"id"`
			Analyst string `json:"analyst"`
		} `json:"exception"`
		Steps []struct {
			Step string `json:"step"`
		} `json:"steps"`
	} `json:"result"`
}

// result reads analysis id from the API, polling until the test's
// deadline for its result to be served.
func (e *env) result(ctx context.Context, id string) servedResult {
	e.t.Helper()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/api/v1/results/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+ritaToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			e.t.Fatal(err)
		}
		var sv servedResult
		err = json.NewDecoder(resp.Body).Decode(&sv)
		_ = resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK && len(sv.Result.Steps) > 0 {
			return sv
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("result %s was not served before the test's deadline: %d %v", id, resp.StatusCode, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// approveProposal makes memory propose an exception (a security detection
// retained benign five times with the same entity fields, then a sixth
// firing), approves it on the exceptions page in the browser, and checks
// that it is listed active, that the sixth firing left the queue, and that
// a seventh matching firing takes the exception step.
func (e *env) approveProposal(ctx, bctx context.Context) {
	t := e.t
	t.Helper()
	for n := range 5 {
		id := e.fire(ctx, n)
		e.result(ctx, id)
		body := fmt.Sprintf(`{"analysis_id":%q,"decision":"known_benign","note":"uptime check by ops","analyst":"alice"}`, id)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/api/v1/retain", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			t.Fatalf("retain falco firing %d: %d", n, resp.StatusCode)
		}
	}
	sixth := e.fire(ctx, 5)
	sv := e.result(ctx, sixth)
	if sv.Result.Proposal == nil || sv.Result.Proposal.ID == "" {
		t.Fatalf("the sixth firing carries no proposal: %+v", sv.Result)
	}
	proposal := sv.Result.Proposal.ID
	waits := false
	for _, w := range e.queue() {
		waits = waits || w.AnalysisID == sixth
	}
	if !waits {
		t.Errorf("the sixth firing %s does not wait for a person", sixth)
	}
	row := fmt.Sprintf(`tr[data-proposal=%q]`, proposal)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/exceptions"),
		chromedp.WaitVisible(chromedp.CSS(row+" button.approve-proposal")),
		chromedp.SendKeys(chromedp.CSS(row+" input[name=note]"), "ops uptime checks"),
		chromedp.Click(chromedp.CSS(row+" button.approve-proposal")),
		chromedp.WaitVisible(chromedp.ID("flash")),
		chromedp.WaitVisible(chromedp.CSS("#exceptions tr.exception.active")),
	); err != nil {
		t.Fatalf("approve the proposal in the browser: %v", err)
	}
	checkNoInjection(t, bctx, "/ui/exceptions")
	type listed struct {
		Active   int    `json:"active"`
		ID       string `json:"id"`
		Analyst  string `json:"analyst"`
		Proposed bool   `json:"proposed"`
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[listed](fmt.Sprintf(`(() => {
		const rows = document.querySelectorAll('#exceptions tr.exception.active');
		return {active: rows.length, id: rows.length ? rows[0].dataset.exception : "",
			analyst: rows.length ? rows[0].children[6].textContent : "",
			proposed: document.querySelector(%q) !== null};
	})()`, row)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Active != 1 || got.Analyst != "alice" || got.Proposed {
		t.Fatalf("exceptions page after the approval: %+v", got)
	}
	for _, w := range e.queue() {
		if w.AnalysisID == sixth {
			t.Errorf("the sixth firing %s still waits after its proposal was approved", sixth)
		}
	}
	seventh := e.result(ctx, e.fire(ctx, 6))
	steps := seventh.Result.Steps
	if last := steps[len(steps)-1].Step; last != "exception" || seventh.Result.Exception == nil ||
		seventh.Result.Exception.ID != got.ID || seventh.Result.Decision != "known_benign" {
		t.Errorf("the seventh firing: last step %s, exception %+v (want %s), decision %s", last, seventh.Result.Exception, got.ID, seventh.Result.Decision)
	}
	t.Logf("proposal %s approved in the browser as exception %s; the seventh firing took the exception step", proposal, got.ID)
}
