package memory

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/testenv"
)

const (
	childEnv   = "OPENRECALL_MEMORY_TEST_CHILD"
	childDBEnv = "OPENRECALL_MEMORY_TEST_DB"
)

// childIncident is what every child process retains.
func childIncident(round int) openrecall.Incident {
	return openrecall.Incident{
		Fingerprint: fpOf("crashloopbackoff", "api_edge", "configmap", "spike", "", "prod"),
		Decision:    openrecall.DecisionFalsePositive,
		Note:        fmt.Sprintf("bad configmap push, round %d", round),
	}
}

// retainChild runs in a re-executed test binary: it opens the store, says
// "ready", waits for one line on stdin per round (the barrier), retains and
// reports "created=<bool> id=<id>".
func retainChild() int {
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv(childDBEnv), Options{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer func() { _ = s.Close() }()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for round := 0; in.Scan(); round++ {
		inc, created, err := s.Retain(ctx, childIncident(round))
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Printf("created=%v id=%s\n", created, inc.ID)
	}
	return 0
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startChild(t *testing.T, db string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childDBEnv+"="+db)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return c
}

func (c *child) line(t *testing.T) string {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("child %d ended early: %v", c.cmd.Process.Pid, c.out.Err())
	}
	l := c.out.Text()
	if strings.HasPrefix(l, "error") {
		t.Fatalf("child %d: %s", c.cmd.Process.Pid, l)
	}
	return l
}

// TestRetainTwoProcesses starts two processes on one new file, releases them
// together through their stdin pipes for several rounds, and checks that each
// round leaves exactly one record, reported created by exactly one of them.
func TestRetainTwoProcesses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared", "memory.db")
	children := []*child{startChild(t, db), startChild(t, db)}
	for _, c := range children {
		if l := c.line(t); l != "ready" {
			t.Fatalf("child said %q, want ready", l)
		}
	}
	const rounds = 8
	for round := 0; round < rounds; round++ {
		for _, c := range children {
			if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		for _, c := range children {
			lines = append(lines, c.line(t))
		}
		want := childIncident(round).Normalized().ID
		createdCount := 0
		for _, l := range lines {
			if !strings.HasSuffix(l, "id="+want) {
				t.Errorf("round %d: child reported %q, want id %s", round, l, want)
			}
			if strings.HasPrefix(l, "created=true") {
				createdCount++
			}
		}
		if createdCount != 1 {
			t.Errorf("round %d: %d processes reported created (%q), want exactly 1", round, createdCount, lines)
		}
	}
	for _, c := range children {
		_ = c.stdin.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("child %d: %v", c.cmd.Process.Pid, err)
		}
	}
	s := openAt(t, db)
	if n := countIncidents(t, s); n != rounds {
		t.Errorf("stored %d incidents, want %d (one per round)", n, rounds)
	}
}

// TestRetainTwoStores retains the same incidents through two Store handles
// on one file from concurrent goroutines.
func TestRetainTwoStores(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	stores := []*Store{openAt(t, db), openAt(t, db)}
	const n = 40
	created := make([][]bool, len(stores))
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, len(stores))
	for i, s := range stores {
		created[i] = make([]bool, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 0; k < n; k++ {
				_, ok, err := s.Retain(context.Background(), childIncident(k))
				if err != nil {
					errs <- err
					return
				}
				created[i][k] = ok
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k := 0; k < n; k++ {
		if created[0][k] == created[1][k] {
			t.Errorf("incident %d: created by store 0 = %v, by store 1 = %v; want exactly one", k, created[0][k], created[1][k])
		}
	}
	if got := countIncidents(t, stores[0]); got != n {
		t.Errorf("stored %d incidents, want %d", got, n)
	}
}

// TestRecallDuringWrite checks that recall reads through its own
// connections: it answers while this store's writer holds a transaction
// open (with the single connection it had before, it waited for the
// commit), from the last committed state, and sees the write once it is
// committed.
func TestRecallDuringWrite(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	fp := fpOf("timeout", "api_edge", "database", "spike", "", "prod")
	id := openrecall.Identity{Rule: "SlowQueries", Service: "checkout"}
	first := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Identity: id, Decision: openrecall.DecisionKnownBenign,
		Note: "nightly vacuum", SourceAlertID: "AM-1"})
	second, args, err := s.prepare(openrecall.Incident{Fingerprint: fp, Identity: id, Decision: openrecall.DecisionKnownBenign,
		Note: "nightly vacuum again", SourceAlertID: "AM-2"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, insertIncident, args...); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ms  []openrecall.Match
		err error
	}
	done := make(chan result, 1)
	go func() {
		ms, err := s.Recall(ctx, id, fp, 10)
		done <- result{ms, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-testenv.Expiry(t):
		t.Fatal("recall is still waiting for the writer's transaction as the test's deadline nears")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.ms) != 1 || r.ms[0].Incident.ID != first.ID {
		t.Fatalf("recall during an uncommitted write = %v, want only the committed %s", r.ms, first.ID)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Recall(ctx, id, fp, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Incident.ID != second.ID {
		t.Fatalf("recall after the commit = %v, want %s first, then %s", ms, second.ID, first.ID)
	}
}
