package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestQueueListsWhatWaitsUntilARetainSettlesIt: analyze records what waits
// for a person; queue lists it oldest first and filters it; a retain about
// one analysis (an analyze run's, not the server's) takes it off the queue
// and audits it; a second retain changes nothing; the trail stays intact.
func TestQueueListsWhatWaitsUntilARetainSettlesIt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	if r := runCLI(t, "", "--db", db, "memory", "seed"); r.code != exitOK {
		t.Fatalf("seed: exit %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
		t.Fatalf("analyze: exit %d %s", r.code, r.stderr)
	}
	queue := func(args ...string) []openrecall.Waiting {
		t.Helper()
		r := runCLI(t, "", append([]string{"--db", db, "queue", "-o", "json"}, args...)...)
		if r.code != exitOK {
			t.Fatalf("queue: exit %d %s", r.code, r.stderr)
		}
		var ws []openrecall.Waiting
		if err := json.Unmarshal([]byte(r.stdout), &ws); err != nil {
			t.Fatalf("queue -o json: %v\n%s", err, r.stdout)
		}
		return ws
	}
	all := queue()
	if len(all) == 0 {
		t.Fatal("nothing waits after the example queue")
	}
	reasons := map[string]int{}
	for i, w := range all {
		reasons[w.Reason]++
		if i > 0 && w.Since.Before(all[i-1].Since) {
			t.Errorf("queue not oldest first at %d", i)
		}
	}
	if reasons[openrecall.WaitEscalated] == 0 || reasons[openrecall.WaitApproval] == 0 {
		t.Errorf("reasons %v: want escalated alerts and approvals", reasons)
	}
	for _, w := range queue("--severity", "critical") {
		if w.Severity != openrecall.SeverityCritical {
			t.Errorf("--severity critical listed %s", w.Severity)
		}
	}
	// --sort urgency: the cockpit's order (attacks, what fires, the most
	// severe, the oldest); --search reads titles and labels ignoring case.
	urgent := queue("--sort", "urgency")
	if len(urgent) != len(all) {
		t.Fatalf("--sort urgency lists %d, want %d", len(urgent), len(all))
	}
	rank := map[openrecall.Severity]int{openrecall.SeverityUnknown: 0, openrecall.SeverityCritical: 0, openrecall.SeverityHigh: 1,
		openrecall.SeverityMedium: 2, openrecall.SeverityLow: 3, openrecall.SeverityInfo: 4}
	for i := 1; i < len(urgent); i++ {
		x, y := urgent[i-1], urgent[i]
		if x.Attack == "" && y.Attack != "" || (x.Attack == "") == (y.Attack == "") && rank[x.Severity] > rank[y.Severity] {
			t.Errorf("--sort urgency: %s (%s, attack %q) before %s (%s, attack %q)", x.AnalysisID, x.Severity, x.Attack, y.AnalysisID, y.Severity, y.Attack)
		}
	}
	word := strings.ToUpper(strings.Fields(all[0].Title)[0])
	if found := queue("--search", word); len(found) == 0 || !strings.Contains(strings.ToUpper(found[0].Title+found[0].Identity.String()), word) {
		t.Errorf("--search %s found %+v", word, found)
	}
	for _, bad := range [][]string{{"--sort", "sideways"}, {"--state", "gone"}, {"--severity", "bogus"}} {
		if r := runCLI(t, "", append([]string{"--db", db, "queue"}, bad...)...); r.code == exitOK || !strings.Contains(r.stderr, bad[1]) {
			t.Errorf("queue %v: exit %d %q, want an error naming it", bad, r.code, r.stderr)
		}
	}
	target := all[0]
	retain := []string{"--db", db, "retain", "--analysis-id", target.AnalysisID, "--decision", "real", "--note", "paged the owner",
		"--dead-end", "restarted the pods", "--dead-end", "scaled up", "--analyst", "carol"}
	if r := runCLI(t, "", retain...); r.code != exitOK {
		t.Fatalf("retain --analysis-id of an analyze run: exit %d %s", r.code, r.stderr)
	}
	after := queue()
	if len(after) != len(all)-1 {
		t.Errorf("%d waiting after the retain, want %d", len(after), len(all)-1)
	}
	show := runCLI(t, "", "--db", db, "audit", "show", target.AnalysisID)
	if !strings.Contains(show.stdout, "carol decided real") || !strings.Contains(show.stdout, "restarted the pods | scaled up") {
		t.Errorf("audit show lacks carol's decision:\n%s", show.stdout)
	}
	if r := runCLI(t, "", retain...); r.code != exitOK {
		t.Fatalf("second retain: exit %d %s", r.code, r.stderr)
	}
	if again := runCLI(t, "", "--db", db, "audit", "show", target.AnalysisID); again.stdout != show.stdout {
		t.Errorf("a second retain changed the analysis's audit entries")
	}
	if v := runCLI(t, "", "--db", db, "audit", "verify"); v.code != exitOK {
		t.Errorf("audit verify: exit %d %s", v.code, v.stdout)
	}
	if r := runCLI(t, "", "--db", db, "queue"); r.code != exitOK || !strings.Contains(r.stdout, "SINCE") {
		t.Errorf("queue table: exit %d\n%s", r.code, r.stdout)
	}
	if r := runCLI(t, "", "--db", db, "queue", "--limit", "-1"); r.code != exitUsage {
		t.Errorf("--limit -1: exit %d, want %d", r.code, exitUsage)
	}
}

// TestQueueListsAnOpenGroupOnce: a storm of three firings analysed is one
// item of the queue with its size, its firings folded into it (table and
// JSON); retain --group settles it and it leaves the queue.
func TestQueueListsAnOpenGroupOnce(t *testing.T) {
	dir := t.TempDir()
	db, in := filepath.Join(dir, "m.db"), filepath.Join(dir, "storm.jsonl")
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, `{"id":"crash-%d","title":"CrashLoopBackOff checkout","text":"pod checkout-%d crash looping","severity":"high","labels":{"alertname":"KubePodCrashLooping","service":"checkout"}}`+"\n", i, i)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", in); r.code != exitOK {
		t.Fatalf("analyze: exit %d %s", r.code, r.stderr)
	}
	r := runCLI(t, "", "--db", db, "queue", "-o", "json")
	var ws []openrecall.Waiting
	if err := json.Unmarshal([]byte(r.stdout), &ws); err != nil || r.code != exitOK {
		t.Fatalf("queue -o json: exit %d %v\n%s", r.code, err, r.stdout)
	}
	if len(ws) != 1 || ws[0].Reason != openrecall.WaitGroup || ws[0].Group == nil || ws[0].Group.Size != 3 {
		t.Fatalf("queue: want one group of 3, got %+v", ws)
	}
	gid := ws[0].Group.ID
	table := runCLI(t, "", "--db", db, "queue")
	if !strings.Contains(table.stdout, gid) || !regexp.MustCompile(gid+`\s+3\s+high\s+firing\s+group`).MatchString(table.stdout) {
		t.Errorf("queue table lacks the group of 3:\n%s", table.stdout)
	}
	if r := runCLI(t, "", "--db", db, "retain", "--group", gid, "--decision", "known_benign", "--note", "deploy storm", "--analyst", "carol"); r.code != exitOK {
		t.Fatalf("retain --group: exit %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "queue"); !strings.Contains(r.stdout, "nothing waits for a person") {
		t.Errorf("queue after retain --group:\n%s", r.stdout)
	}
}
