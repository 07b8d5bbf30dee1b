package cockpit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestCockpitShift walks the cockpit as a shift does, on the bundled
// example only (no hostile payload, so its screenshots are the README's):
// a critical detection posted while the queue is open appears on top
// without a reload; an alert whose recovery arrives while it waits is
// marked resolved; the review page links to the sender's pages and never
// to a javascript: URL; "this was wrong" on a bypassed analysis returns
// it to the queue and recall forgets the memories that vouched; a bulk
// approval confirms before it decides and reports each. It takes the
// screenshots of the queue (1,440 and 390 px wide) and of a review page
// into .e2e-cockpit/.
func TestCockpitShift(t *testing.T) {
	if os.Getenv("OPENRECALL_E2E_COCKPIT") == "" {
		t.Skip("the cockpit's browser test runs with make e2e-cockpit (OPENRECALL_E2E_COCKPIT=1)")
	}
	chromium := chromiumPath(t)
	ctx, cancel := testContext(t)
	defer cancel()
	e := newEnv(ctx, t)
	e.postExample(ctx)

	shots := filepath.Join("..", "..", "..", ".e2e-cockpit")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name string, png []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	bctx := newBrowser(ctx, t, chromium, 1440)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}
	e.login(bctx)

	e.checkLiveQueue(ctx, bctx)
	// The queue as a reload shows it (whatever the live update did), at
	// 1,440 px and on a phone.
	for _, s := range []struct {
		name          string
		width, height int64
	}{{"queue.png", 1440, 900}, {"queue-phone.png", 390, 844}} {
		if err := chromedp.Do(bctx,
			chromedp.EmulateViewport(s.width, s.height),
			chromedp.Navigate(e.base+"/ui/queue"),
			chromedp.WaitVisible(chromedp.ID("queue")),
		); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		shot(s.name, png)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1440, 900)); err != nil {
		t.Fatal(err)
	}

	shot("review.png", e.checkSources(bctx))
	e.checkHostileLinks(ctx, bctx)
	e.checkResolved(ctx, bctx)
	e.checkWrong(bctx)
	e.checkBulk(bctx)
}

// ack is one analysis a receiver accepted.
type ack struct {
	AnalysisID string `json:"analysis_id"`
	AlertID    string `json:"alert_id"`
	State      string `json:"state"`
}

// send posts body to a receiver of serve with the ingest token and returns
// the analyses it accepted.
func (e *env) send(ctx context.Context, path string, body []byte) []ack {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ingestToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	var acc struct {
		Analyses []ack `json:"analyses"`
	}
	err = json.NewDecoder(resp.Body).Decode(&acc)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted || len(acc.Analyses) == 0 {
		e.t.Fatalf("POST %s: %d %v %+v", path, resp.StatusCode, err, acc)
	}
	return acc.Analyses
}

// waitingItem returns what openrecall queue says of analysis id, and
// whether it waits.
func (e *env) waitingItem(id string) (waiting, bool) {
	e.t.Helper()
	for _, w := range e.queue() {
		if w.AnalysisID == id {
			return w, true
		}
	}
	return waiting{}, false
}

// pollDOM evaluates js in the browser until done accepts its value or
// within passes, and returns the last value.
func pollDOM[T any](ctx context.Context, t *testing.T, within time.Duration, js string, done func(T) bool) (T, bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
		if err != nil {
			t.Fatal(err)
		}
		if done(got) {
			return got, true
		}
		if time.Now().After(deadline) {
			return got, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// falcoCritical is a falcosidekick delivery of Falco's "Read sensitive
// file untrusted" at Critical, fired now: a credential-access detection.
func falcoCritical(now time.Time) []byte {
	return fmt.Appendf(nil, `{"uuid":"9b1f0c2e-4d3a-4c5e-8f7a-2b6d1e0c9a41","output":"Sensitive file opened for reading by non-trusted program (file=/etc/shadow gparent=sh ggparent=containerd-shim program=cat user=root command=cat /etc/shadow container_id=4f2a9c1d7e3b image=docker.io/library/nginx)",
"priority":"Critical","rule":"Read sensitive file untrusted","time":%q,"source":"syscall",
"tags":["T1555","container","filesystem","host","mitre_credential_access"],"hostname":"ip-10-0-14-21.eu-west-1.compute.internal",
"output_fields":{"container.id":"4f2a9c1d7e3b","container.image.repository":"docker.io/library/nginx","container.name":"web-frontend",
"fd.name":"/etc/shadow","k8s.ns.name":"web","k8s.pod.name":"web-frontend-6c9f7d8b5-xk2pq","proc.cmdline":"cat /etc/shadow","proc.name":"cat",
"proc.pname":"sh","user.name":"root"}}`, now.UTC().Format(time.RFC3339Nano))
}

// checkLiveQueue: with the queue open (the default order, urgency), a
// critical detection posted to serve becomes the first row without a
// reload within 15 s, marked new, and the live notice says how many are
// new.
func (e *env) checkLiveQueue(ctx, bctx context.Context) {
	t := e.t
	t.Helper()
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/queue"),
		chromedp.WaitVisible(chromedp.ID("queue")),
	); err != nil {
		t.Fatal(err)
	}
	// A mark that a reload would erase, and a record of what the page's
	// CSP refuses (a refused poll only says "the server did not answer").
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.__csp = [];
		document.addEventListener('securitypolicyviolation', ev => window.__csp.push(ev.violatedDirective + ' ' + ev.blockedURI));
		window.__stayed = true`)); err != nil {
		t.Fatal(err)
	}
	posted := time.Now()
	id := e.send(ctx, "/api/v1/alerts/falcosidekick", falcoCritical(posted))[0].AnalysisID
	sv := e.result(ctx, id)
	if sv.Result.Fingerprint.AttackPattern == "" {
		t.Fatalf("the Falco critical %s carries no attack pattern: %+v", id, sv.Result.Fingerprint)
	}
	w, ok := e.waitingItem(id)
	if !ok || w.Severity != "critical" || w.Attack == "" {
		t.Fatalf("the Falco critical %s waits %v as %+v; want a critical attack", id, ok, w)
	}
	type view struct {
		First  string   `json:"first"`
		New    bool     `json:"new"`
		Live   string   `json:"live"`
		Stayed bool     `json:"stayed"`
		CSP    []string `json:"csp"`
	}
	js := `(() => { const r = document.querySelector('#queue tbody tr.item'); const n = document.getElementById('live');
		return {first: r ? (r.dataset.analysis || r.dataset.group || '') : '', new: !!r && r.classList.contains('new'),
		live: n && !n.hidden ? n.textContent : '', stayed: window.__stayed === true, csp: window.__csp || []}; })()`
	newRE := regexp.MustCompile(`^\d+ new`)
	got, ok := pollDOM(bctx, t, 15*time.Second-time.Since(posted), js, func(v view) bool {
		return v.First == id && newRE.MatchString(v.Live)
	})
	if !ok || !got.New || !got.Stayed {
		if len(got.CSP) > 0 {
			t.Errorf("the page's Content-Security-Policy refused the live poll (%s): it needs connect-src 'self'", got.CSP[0])
		}
		t.Errorf("%s after the critical %s (attack %s) was posted: %+v; want it the first row, marked new, the notice saying n new, no reload",
			time.Since(posted).Round(time.Millisecond), id, w.Attack, got)
		return
	}
	t.Logf("live: %s (%s) on top of the open queue %s after its post, notice %q", id, w.Attack, time.Since(posted).Round(100*time.Millisecond), got.Live)
}

// checkSources: the review page of an example Alertmanager alert (the
// cryptominer dressed as a batch OOM) links to its generatorURL and its
// runbook_url, in a new tab without referrer or opener. It returns a
// full-page screenshot of the page.
func (e *env) checkSources(bctx context.Context) []byte {
	t := e.t
	t.Helper()
	var miner waiting
	for _, w := range e.queue() {
		if strings.Contains(w.Title, "report-batch-worker-r6ptp4t9b-nwddp") {
			miner = w
		}
	}
	if miner.AnalysisID == "" {
		t.Fatal("the example's cryptominer alert (pod report-batch-worker-r6ptp4t9b-nwddp) does not wait")
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/review/"+miner.AnalysisID),
		chromedp.WaitVisible(chromedp.ID("sources")),
	); err != nil {
		t.Fatal(err)
	}
	type link struct {
		Href   string `json:"href"`
		Rel    string `json:"rel"`
		Target string `json:"target"`
	}
	links, err := chromedp.Run(bctx, chromedp.Evaluate[[]link](`[...document.querySelectorAll('#sources a[href^="http"]')].map(a =>
		({href: a.getAttribute('href'), rel: a.getAttribute('rel'), target: a.getAttribute('target')}))`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://prometheus.prod.example:9090/graph?g0.expr=KubeContainerOOMKilled", "https://runbooks.example/batch/oomkilled"}
	var hrefs []string
	for _, l := range links {
		hrefs = append(hrefs, l.Href)
		if l.Rel != "noopener noreferrer" || l.Target != "_blank" {
			t.Errorf("source link %s: rel %q target %q, want noopener noreferrer in a new tab", l.Href, l.Rel, l.Target)
		}
	}
	for _, h := range want {
		if !slices.Contains(hrefs, h) {
			t.Errorf("the review of %s does not link to %s; its sources: %v", miner.AnalysisID, h, hrefs)
		}
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// checkHostileLinks: an Alertmanager alert whose generatorURL, runbook_url
// and dashboard_url are javascript: URLs has a review page without a link
// to any of them (the text stays readable in the annotations).
func (e *env) checkHostileLinks(ctx, bctx context.Context) {
	t := e.t
	t.Helper()
	body := fmt.Appendf(nil, `{"receiver":"openrecall","status":"firing","version":"4","alerts":[{"status":"firing",
"labels":{"alertname":"CheckoutErrorBudgetBurn","service":"checkout-api","env":"prod","severity":"critical"},
"annotations":{"summary":"checkout-api burns its error budget 14x","runbook_url":"javascript:alert(1)","dashboard_url":" JaVaScRiPt:alert(document.cookie)"},
"startsAt":%q,"endsAt":"0001-01-01T00:00:00Z","generatorURL":"javascript:alert(1)","fingerprint":"6a1d0f3e9c2b7a45"}]}`, time.Now().UTC().Format(time.RFC3339Nano))
	id := e.send(ctx, "/api/v1/alerts/alertmanager", body)[0].AnalysisID
	e.result(ctx, id)
	if _, ok := e.waitingItem(id); !ok {
		t.Fatalf("the alert with javascript: links (%s) does not wait: no review page to check", id)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(e.base+"/ui/review/"+id),
		chromedp.WaitVisible(chromedp.ID("sources")),
	); err != nil {
		t.Fatal(err)
	}
	type verdict struct {
		Bad     []string `json:"bad"`
		Sources int      `json:"sources"`
		Shown   bool     `json:"shown"`
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[verdict](`(() => {
		const bad = [];
		document.querySelectorAll('*').forEach(el => { for (const a of el.attributes) {
			if (/^(href|src|action|formaction|xlink:href)$/i.test(a.name) && /^\s*javascript:/i.test(a.value)) bad.push(el.tagName + ' ' + a.name + '=' + a.value);
		} });
		return {bad: bad, sources: document.querySelectorAll('#sources a[href]').length,
			shown: document.querySelector('#sources').textContent.includes('javascript:alert(1)')};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bad) != 0 || got.Sources != 0 {
		t.Errorf("the review of %s links to javascript: (%v) or has %d source links, want none", id, got.Bad, got.Sources)
	}
	if !got.Shown {
		t.Errorf("the review of %s does not show the runbook_url annotation as text", id)
	}
}

// checkResolved: a firing alert waits; its recovery (the same generic
// alert, status resolved) marks its queue row resolved with a tag, the
// state filter lists it, and its review page says so.
func (e *env) checkResolved(ctx, bctx context.Context) {
	t := e.t
	t.Helper()
	alert := map[string]any{"id": "e2e-orders-db-3-disk", "title": "orders-db-3 data volume 93% full",
		"text":     "/var/lib/postgresql on orders-db-3 is 93% full and grows 2%/h; autovacuum is behind on orders.events.",
		"severity": "high", "service": "orders-db", "environment": "prod",
		"labels":    map[string]string{"alertname": "NodeFilesystemAlmostFull", "instance": "orders-db-3", "mountpoint": "/var/lib/postgresql"},
		"timestamp": time.Now().UTC().Format(time.RFC3339)}
	firing, _ := json.Marshal(alert)
	id := e.send(ctx, "/api/v1/alerts", firing)[0].AnalysisID
	e.result(ctx, id)
	if _, ok := e.waitingItem(id); !ok {
		t.Fatalf("the firing disk alert %s does not wait", id)
	}
	alert["status"] = "resolved"
	recovery, _ := json.Marshal(alert)
	if got := e.send(ctx, "/api/v1/alerts", recovery)[0]; got.State != "resolved" {
		t.Fatalf("the recovery was taken as %+v, want state resolved", got)
	}
	e.drain(ctx)
	type row struct {
		Found    bool   `json:"found"`
		Resolved bool   `json:"resolved"`
		Tag      string `json:"tag"`
	}
	rowJS := fmt.Sprintf(`(() => { const r = document.querySelector('tr.item[data-analysis=%q]'); const tag = r && r.querySelector('.tag.resolved');
		return {found: !!r, resolved: !!r && r.classList.contains('resolved'), tag: tag ? tag.textContent : ''}; })()`, id)
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/queue"), chromedp.WaitVisible(chromedp.ID("queue"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[row](rowJS))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || !got.Resolved || !strings.HasPrefix(got.Tag, "resolved") {
		t.Errorf("queue row of %s after its recovery: %+v; want class resolved and a resolved tag", id, got)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/queue?state=resolved"), chromedp.WaitVisible(chromedp.ID("queue"))); err != nil {
		t.Fatal(err)
	}
	listed, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#queue tr.item')].map(r => (r.classList.contains('resolved') ? '' : 'firing:') + (r.dataset.analysis || r.dataset.group))`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(listed, []string{id}) {
		t.Errorf("?state=resolved lists %v, want only %s", listed, id)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/review/"+id), chromedp.WaitVisible(chromedp.ID("resolved"))); err != nil {
		t.Errorf("the review page of %s does not say it resolved: %v", id, err)
	}
}

// checkWrong: an analysis memory bypassed is on the History page; "this
// was wrong" with a reason returns it to the queue, recall no longer finds
// the memories that vouched for it, and the audit trail still verifies.
func (e *env) checkWrong(bctx context.Context) {
	t := e.t
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/history?kind=bypass"), chromedp.WaitVisible(chromedp.ID("history"))); err != nil {
		t.Fatal(err)
	}
	type closure struct {
		ID     string   `json:"id"`
		Voters []string `json:"voters"`
	}
	c, err := chromedp.Run(bctx, chromedp.Evaluate[closure](`(() => { const r = document.querySelector('#history tr.closure.bypass:not(.wrong)');
		return r ? {id: r.dataset.analysis, voters: [...r.querySelectorAll('ul.voters a')].map(a => a.textContent)} : {id: '', voters: []}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || len(c.Voters) == 0 {
		t.Fatalf("History lists no bypass with the memories that voted: %+v", c)
	}
	if _, ok := e.waitingItem(c.ID); ok {
		t.Fatalf("the bypassed %s waits already", c.ID)
	}
	alertFile := filepath.Join(e.dir, "bypassed.json")
	e.resultAlert(c.ID, alertFile)
	recall := func() string {
		out, code := e.cli("recall", alertFile, "-o", "json")
		if code != 0 {
			t.Fatalf("recall: exit %d", code)
		}
		return out
	}
	out := recall()
	for _, v := range c.Voters {
		if !strings.Contains(out, v) {
			t.Fatalf("before: recall of %s does not find its voter %s:\n%s", c.ID, v, out)
		}
	}
	row := fmt.Sprintf(`#history tr[data-analysis=%q]`, c.ID)
	reason := "not the nightly job: the OOM came from a leak shipped in report-worker 4.2"
	if err := chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(row+" input[name=reason]"), reason),
		chromedp.Click(chromedp.CSS(row+" button.wrong")),
		chromedp.WaitVisible(chromedp.ID("flash")),
	); err != nil {
		t.Fatalf("this was wrong: %v", err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/queue"), chromedp.WaitVisible(chromedp.ID("queue"))); err != nil {
		t.Fatal(err)
	}
	back, err := chromedp.Run(bctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector('#queue tr.item[data-analysis=%q]') !== null`, c.ID)))
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := e.waitingItem(c.ID); !back || !ok || w.Reason != "wrong" {
		t.Errorf("after this was wrong, %s: on the queue page %v, in openrecall queue %v as %+v; want it back with reason wrong", c.ID, back, ok, w)
	}
	out = recall()
	for _, v := range c.Voters {
		if strings.Contains(out, v) {
			t.Errorf("after this was wrong, recall still finds the memory %s that vouched for %s", v, c.ID)
		}
	}
	e.auditEntries()
	t.Logf("this was wrong: %s back in the queue, %d memories forgotten", c.ID, len(c.Voters))
}

// checkBulk: two rows ticked and "Approve the selected as proposed" answer
// a confirmation listing the two that decides nothing; Confirm decides both
// and the report lists each as decided.
func (e *env) checkBulk(bctx context.Context) {
	t := e.t
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.Navigate(e.base+"/ui/queue"), chromedp.WaitVisible(chromedp.ID("queue"))); err != nil {
		t.Fatal(err)
	}
	picks, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#queue tr.item:not(.attack):not(.resolved)')]
		.filter(r => r.querySelector('input.pick')).map(r => r.dataset.analysis).slice(-2)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(picks) != 2 {
		t.Fatalf("the queue has %d rows to tick, want 2", len(picks))
	}
	entries := e.auditEntries()
	for _, id := range picks {
		if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-analysis=%q] input.pick`, id)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.ID("bulk-approve")), chromedp.WaitVisible(chromedp.ID("bulk-confirm"))); err != nil {
		t.Fatalf("approve the selected: %v", err)
	}
	type page struct {
		H1    string   `json:"h1"`
		IDs   []string `json:"ids"`
		Rows  []string `json:"rows"`
		Count string   `json:"summary"`
	}
	pageJS := `(() => ({h1: document.querySelector('h1').textContent, summary: document.getElementById('summary').textContent,
		ids: [...document.querySelectorAll('#bulk tr.bulk-item')].map(r => r.dataset.analysis),
		rows: [...document.querySelectorAll('#bulk tr.bulk-item')].map(r => r.className + ': ' + r.querySelector('td.outcome').textContent)}))()`
	plan, err := chromedp.Run(bctx, chromedp.Evaluate[page](pageJS))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(picks)
	if slices.Sort(plan.IDs); plan.H1 != "Approve 2 as proposed?" || !slices.Equal(plan.IDs, picks) || !strings.Contains(plan.Count, "Nothing is decided until you confirm") {
		t.Errorf("confirmation page: %+v; want it to list %v and decide nothing", plan, picks)
	}
	for _, id := range picks {
		if _, ok := e.waitingItem(id); !ok {
			t.Errorf("%s was decided before the confirmation", id)
		}
	}
	if n := e.auditEntries(); n != entries {
		t.Errorf("the confirmation page changed the trail: %d entries, were %d", n, entries)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.ID("confirm")), chromedp.WaitVisible(chromedp.CSS("#bulk tr.bulk-item.decided"))); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	report, err := chromedp.Run(bctx, chromedp.Evaluate[page](pageJS))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(report.IDs); report.H1 != "Approval report" || !slices.Equal(report.IDs, picks) || !strings.HasPrefix(report.Count, "2 decided") {
		t.Errorf("report: %+v; want both %v decided", report, picks)
	}
	for _, r := range report.Rows {
		if !strings.HasPrefix(r, "bulk-item decided: decided") {
			t.Errorf("report row %q, want decided", r)
		}
	}
	for _, id := range picks {
		if _, ok := e.waitingItem(id); ok {
			t.Errorf("%s still waits after the confirmed approval", id)
		}
	}
	e.auditEntries()
}
