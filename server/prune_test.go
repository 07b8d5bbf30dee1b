package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/testenv"
	"github.com/openrecall/openrecall/usecase"
)

// TestRetentionPrunes: with server.retention set, serve prunes the
// documents of finished analyses older than it, counts them in
// openrecall_inbox_pruned_total, and every reader says so: the result
// answers 410 naming the analysis and the retention, the listing marks the
// analyses pruned, a retain about one is refused the same way; the audit
// trail still verifies and a redelivery is still one.
func TestRetentionPrunes(t *testing.T) {
	c := &stepClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	clock := c.now
	e := newEnv(t, options{now: clock, storeNow: clock, retention: time.Hour, pruneEvery: 10 * time.Millisecond})
	var acc accepted
	e.post("/api/v1/alerts", "", `{"id":"a","title":"checkout 5xx spike","service":"checkout"}`, &acc)
	old := acc.Analyses[0].AnalysisID
	if sv := e.wait(old, ""); sv.Pruned || sv.Result == nil {
		t.Fatalf("fresh analysis: %+v", sv)
	}
	// A notice nobody waits on: once pruned, nothing holds its alert.
	e.post("/api/v1/alerts", "", `{"id":"c","title":"disk full","service":"db","status":"resolved"}`, &acc)
	notice := acc.Analyses[0].AnalysisID
	e.wait(notice, "")
	c.add(2 * time.Hour)
	e.analyse(`{"id":"b","title":"checkout 5xx spike","service":"checkout"}`)
	var resp *http.Response
	var body []byte
	if !testenv.Poll(t, 10*time.Millisecond, func() bool {
		resp, body = e.do(http.MethodGet, "/api/v1/results/"+old, "", nil, nil, nil)
		return resp.StatusCode != http.StatusOK
	}) {
		t.Fatal("the old analysis was never pruned")
	}
	if resp.StatusCode != http.StatusGone || !strings.Contains(string(body), old) || !strings.Contains(string(body), "server.retention (1h0m0s)") {
		t.Errorf("pruned result: %d %s, want 410 naming the analysis and the retention", resp.StatusCode, body)
	}
	var list struct {
		Results []openrecall.Served `json:"results"`
	}
	e.do(http.MethodGet, "/api/v1/results?since=0", "", nil, nil, &list)
	if len(list.Results) != 3 || !list.Results[0].Pruned || !list.Results[1].Pruned || list.Results[0].AnalysisID != old || list.Results[0].Alert.ID != "a" ||
		list.Results[0].Result != nil || list.Results[2].Pruned || list.Results[2].Result == nil {
		t.Errorf("results listing after pruning: %+v", list.Results)
	}
	if got := e.metric("openrecall_inbox_pruned_total"); got != "2" {
		t.Errorf("openrecall_inbox_pruned_total %s, want 2", got)
	}
	var errBody map[string]any
	if resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+notice+`","decision":"false_positive","note":"n","analyst":"ann"}`, &errBody); resp.StatusCode != http.StatusGone ||
		!strings.Contains(errBody["error"].(string), notice) || !strings.Contains(errBody["error"].(string), "server.retention (1h0m0s)") {
		t.Errorf("retain about a pruned analysis: %d %v", resp.StatusCode, errBody)
	}
	// One that waits for a person keeps its alert in what waits: a
	// decision about it still works after pruning.
	if resp := e.post("/api/v1/retain", "", `{"analysis_id":"`+old+`","decision":"false_positive","note":"n","analyst":"ann"}`, nil); resp.StatusCode != http.StatusCreated {
		t.Errorf("retain about a pruned analysis that waits: %d", resp.StatusCode)
	}
	var rep usecase.Verified
	if resp, b := e.do(http.MethodGet, "/api/v1/audit/verify", "", nil, nil, &rep); resp.StatusCode != http.StatusOK || !rep.Intact {
		t.Errorf("audit verify after pruning: %d %s", resp.StatusCode, b)
	}
	var again accepted
	if e.post("/api/v1/alerts", "", `{"id":"a","title":"checkout 5xx spike","service":"checkout"}`, &again); again.Duplicates != 1 || again.Analyses[0].AnalysisID != old {
		t.Errorf("redelivery of a pruned analysis: %+v", again)
	}
}

// stepClock is a clock a test moves on.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// analyse posts one alert as JSON and waits for its analysis, whose id it
// returns.
func (e *env) analyse(body string) string {
	e.t.Helper()
	var acc accepted
	e.post("/api/v1/alerts", "", body, &acc)
	id := acc.Analyses[0].AnalysisID
	e.wait(id, "")
	return id
}

// TestArchiveDirForgets: with server.archive_dir, each pruning pass moves
// the trail older than the retention to a signed archive file there and
// then forgets the rows only those analyses needed: the old analysis is
// gone (404), its undecided escalation expired and counted, its alert's
// state forgotten (a redelivery is triaged anew); what is newer stays, and
// both the trail that remains and the archive file verify.
func TestArchiveDirForgets(t *testing.T) {
	c := &stepClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	clock := c.now
	dir := t.TempDir()
	e := newEnv(t, options{now: clock, storeNow: clock, retention: time.Hour, pruneEvery: 10 * time.Millisecond, archiveDir: dir})
	old := e.analyse(`{"id":"a","title":"checkout 5xx spike","service":"checkout"}`)
	c.add(2 * time.Hour)
	fresh := e.analyse(`{"id":"b","title":"checkout 5xx spike","service":"checkout"}`)
	// The pass is over once its rows are counted: the old analysis reads
	// as not found from its first transaction on, before its alert state
	// is forgotten.
	if !testenv.Poll(t, 10*time.Millisecond, func() bool {
		return e.metric(`openrecall_forgotten_rows_total{kind="deliveries"}`) == "1"
	}) {
		t.Fatal("the old analysis was never forgotten")
	}
	if resp, _ := e.do(http.MethodGet, "/api/v1/results/"+old, "", nil, nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the forgotten analysis: %d, want 404", resp.StatusCode)
	}
	if resp, _ := e.do(http.MethodGet, "/api/v1/results/"+fresh, "", nil, nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the fresh analysis: %d, want 200", resp.StatusCode)
	}
	files, err := filepath.Glob(filepath.Join(dir, "openrecall-trail-*.jsonl"))
	if err != nil || len(files) != 1 {
		t.Fatalf("archive files: %v, %v; want one", files, err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	chk, err := e.app.VerifyArchive(context.Background(), f)
	_ = f.Close()
	if err != nil || !chk.Intact {
		t.Errorf("the archive file does not check against its record: %v %+v", err, chk.Problems)
	}
	var rep usecase.Verified
	if resp, b := e.do(http.MethodGet, "/api/v1/audit/verify", "", nil, nil, &rep); resp.StatusCode != http.StatusOK || !rep.Intact {
		t.Errorf("audit verify after archiving and forgetting: %d %s", resp.StatusCode, b)
	}
	for sample, want := range map[string]string{
		`openrecall_forgotten_rows_total{kind="deliveries"}`:   "1",
		`openrecall_waiting_expired_total{kind="analyses"}`:    "1",
		`openrecall_forgotten_rows_total{kind="alert_states"}`: "1",
	} {
		if got := e.metric(sample); got != want {
			t.Errorf("%s %s, want %s", sample, got, want)
		}
	}
	if got := e.metric(`openrecall_archived_total{chain="entries"}`); got == "0" || strings.HasPrefix(got, "(no") {
		t.Errorf(`openrecall_archived_total{chain="entries"} %s, want the old analysis's entries`, got)
	}
	var again accepted
	if e.post("/api/v1/alerts", "", `{"id":"a","title":"checkout 5xx spike","service":"checkout"}`, &again); again.Duplicates != 0 || again.Analyses[0].AnalysisID == old {
		t.Errorf("a delivery of a forgotten alert: %+v, want a new analysis", again)
	}
}
