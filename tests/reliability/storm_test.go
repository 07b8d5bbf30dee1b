package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/rulecorpus"
)

// startServe starts `openrecall serve` on a loopback port of its choosing
// over db and returns the process and its base URL, read from its
// "listening on" line.
func startServe(t *testing.T, db string, env []string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "--db", db, "serve", "--listen", "127.0.0.1:0", "--workers", "2")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, addr, ok := strings.Cut(sc.Text(), "listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return cmd, strings.Fields(addr)[0]
		}
	}
	t.Fatalf("serve exited before it listened: %v", sc.Err())
	return nil, ""
}

// TestServeKill9MidStorm posts a storm of the rule corpus (20 rules, 30
// firings each within 30 minutes, one severity rise) to a real server,
// kills it with SIGKILL while its workers drain the inbox, starts it again
// on the same file and checks that no firing is lost: every accepted
// delivery ends with a result, every result of an alert with identity is
// in exactly one stored group, each group's size is its stored members, a
// member's result completes after its head's, the groups are those of one
// uninterrupted analyze of the same storm (the restarted server continued
// the groups stored before the kill), and the trail verifies (DESIGN §6a,
// §12).
func TestServeKill9MidStorm(t *testing.T) {
	needBinary(t)
	rules, err := rulecorpus.LoadNear(".")
	if err != nil {
		t.Fatal(err)
	}
	rules = rules[:20]
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	env := []string{"OPENRECALL_AUDIT_KEY=" + strings.Repeat("5a", 32)}
	cmd, base := startServe(t, db, env)

	opts := rulecorpus.StormOptions{Firings: 30, Span: 30 * time.Minute, RiseEvery: 7, Seed: 9}
	storm := rulecorpus.Storm(rules, opts)
	accepted := 0
	for start := 0; start < len(storm); start += 25 {
		var alerts []map[string]any
		for _, f := range storm[start:min(start+25, len(storm))] {
			alerts = append(alerts, rulecorpus.Alert(rules[f.Rule], f.Firing))
		}
		body, err := rulecorpus.Webhook(alerts...)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(base+"/api/v1/alerts/alertmanager", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var ack struct {
			Accepted int `json:"accepted"`
		}
		err = json.NewDecoder(resp.Body).Decode(&ack)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("post: %d %v", resp.StatusCode, err)
		}
		accepted += ack.Accepted
	}
	if accepted != len(storm) {
		t.Fatalf("accepted %d of %d firings", accepted, len(storm))
	}
	// The storm is on disk; kill the server while it drains.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	sqlDB := openDB(t, db)
	var pendingAtKill int
	if err := sqlDB.QueryRow("SELECT count(*) FROM inbox WHERE done_seq IS NULL").Scan(&pendingAtKill); err != nil {
		t.Fatal(err)
	}

	cmd, _ = startServe(t, db, env)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pending int
		if err := sqlDB.QueryRow("SELECT count(*) FROM inbox WHERE done_seq IS NULL").Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after the restart", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	rows, err := sqlDB.Query("SELECT analysis_id, done_seq, result FROM inbox ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]int64{}
	var served []openrecall.Result
	for rows.Next() {
		var id, body string
		var seq int64
		if err := rows.Scan(&id, &seq, &body); err != nil {
			t.Fatal(err)
		}
		var r openrecall.Result
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		done[id] = seq
		served = append(served, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(served) != len(storm) {
		t.Fatalf("%d results for %d accepted firings", len(served), len(storm))
	}
	heads := map[string]openrecall.Result{}
	members, grouped := 0, 0
	for _, r := range served {
		switch {
		case r.Group == nil:
			t.Errorf("%s (%s) has no group", r.AnalysisID, r.Identity)
		case !r.Grouped():
			heads[r.AnalysisID] = r
		default:
			grouped++
			h, ok := heads[r.Group.HeadAnalysisID]
			if !ok {
				t.Errorf("member %s names head %s, not a head before it", r.AnalysisID, r.Group.HeadAnalysisID)
				continue
			}
			if h.Identity != r.Identity || h.Fingerprint != r.Fingerprint || h.Decision != r.Decision {
				t.Errorf("member %s (%s, %s) differs from its head %s (%s, %s)", r.AnalysisID, r.Identity, r.Decision, h.AnalysisID, h.Identity, h.Decision)
			}
			if done[r.AnalysisID] < done[h.AnalysisID] {
				t.Errorf("member %s completed (cursor %d) before its head %s (%d)", r.AnalysisID, done[r.AnalysisID], h.AnalysisID, done[h.AnalysisID])
			}
		}
	}
	var stored, sizes int
	if err := sqlDB.QueryRow("SELECT count(*) FROM group_members").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := sqlDB.QueryRow("SELECT COALESCE(SUM(size), 0) FROM alert_groups").Scan(&sizes); err != nil {
		t.Fatal(err)
	}
	members = len(heads) + grouped
	if stored != members || sizes != members {
		t.Errorf("%d firings in groups; the database holds %d members and group sizes summing to %d", members, stored, sizes)
	}
	// The groups survive the kill: the restarted server continued the open
	// groups stored before it, so the storm forms the same groups — the
	// same heads — as one uninterrupted analyze of the same firings.
	var q bytes.Buffer
	if err := rulecorpus.WriteStormQueue(&q, rules, opts); err != nil {
		t.Fatal(err)
	}
	ref := runBin(t, q.Bytes(), "--db", filepath.Join(dir, "ref.db"), "analyze", "-o", "jsonl", "-")
	if ref.code != 0 {
		t.Fatalf("reference analyze: exit %d\n%s", ref.code, ref.stderr)
	}
	want := map[string]bool{}
	for _, r := range results(t, ref.stdout) {
		if r.Group != nil && !r.Grouped() {
			want[r.Alert.ID] = true
		}
	}
	got := map[string]bool{}
	for _, h := range heads {
		got[h.Alert.ID] = true
	}
	for id := range got {
		if !want[id] {
			t.Errorf("alert %s heads a group after the kill; an uninterrupted run grouped it under another head", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d groups after the kill and restart, %d in an uninterrupted run of the same storm", len(got), len(want))
	}
	t.Logf("storm of %d firings: %d pending at the kill, %d groups (%d uninterrupted), %d grouped", len(storm), pendingAtKill, len(heads), len(want), grouped)
	verify := exec.Command(bin, "--db", db, "audit", "verify")
	verify.Env = append(os.Environ(), env...)
	if out, err := verify.CombinedOutput(); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}
