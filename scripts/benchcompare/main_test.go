package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlags(t *testing.T) {
	all := []string{"misses", "corpus-nocache", "corpus", "webhooks"}
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", args: []string{"-base", "da97e60"}, want: options{base: "da97e60", n: 5000, rounds: 5, workers: 1, queues: all, python: "python3", seed: 1, timeout: 10 * time.Minute}},
		{name: "some queues, once each", args: []string{"-base", "HEAD~1", "-queues", "webhooks, misses,webhooks", "-rounds", "9", "-n", "20000"}, want: options{base: "HEAD~1", n: 20000, rounds: 9, workers: 1, queues: []string{"webhooks", "misses"}, python: "python3", seed: 1, timeout: 10 * time.Minute}},
		{name: "no base", args: nil, wantErr: true},
		{name: "unknown queue", args: []string{"-base", "x", "-queues", "generated"}, wantErr: true},
		{name: "one alert leaves nothing beyond the start-up", args: []string{"-base", "x", "-n", "1"}, wantErr: true},
		{name: "zero rounds", args: []string{"-base", "x", "-rounds", "0"}, wantErr: true},
		{name: "zero workers", args: []string{"-base", "x", "-workers", "0"}, wantErr: true},
		{name: "stray argument", args: []string{"-base", "x", "queue.jsonl"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookedMain(t *testing.T) {
	src := "package main\n\nimport \"os\"\n\nfunc main() {\n\tcode := run()\n\tos.Exit(code)\n}\n"
	got, err := hookedMain([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("\tos.Exit(code)")) || !bytes.Contains(got, []byte("\tbenchcompareExit(code)")) || !bytes.Contains(got, []byte("var _ = os.Exit")) {
		t.Errorf("main.go not hooked:\n%s", got)
	}
	for _, bad := range []string{"package main\nfunc main() { run() }\n", "package main\nfunc main() { if x { os.Exit(1) }; os.Exit(0) }\n"} {
		if _, err := hookedMain([]byte(bad)); err == nil {
			t.Errorf("hookedMain(%q) = nil error, want a refusal", bad)
		}
	}
}

func TestMedianAndMarginal(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3 = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4 = %v, want 2.5", got)
	}
	p := pair{full: sample{records: 101, cpu: 1300}, startup: sample{records: 1, cpu: 300}}
	cpu := func(s sample) float64 { return s.cpu }
	if got := perAlert(cpu)(p); got != 1300.0/101 {
		t.Errorf("per alert = %v, want %v", got, 1300.0/101)
	}
	if got := marginal(cpu)(p); got != 10 {
		t.Errorf("less start-up = %v, want 10", got)
	}
}

// TestCompareEndToEnd builds HEAD twice (A from a worktree of HEAD, B from
// the working tree), runs every kind of run on 50 alerts for 2 rounds and
// reads the table: every queue and measure, medians that are positive
// where a run cannot measure zero, B/A computed, and the database growth
// equal on both sides (the same code writes the same rows). It leaves no
// worktree behind.
func TestCompareEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds openrecall twice")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	python := "python3"
	if _, err := exec.LookPath(python); err != nil {
		t.Logf("no python3: the json.loads table is not checked")
		python = ""
	}
	ctx := context.Background()
	before := worktrees(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"-base", "HEAD", "-n", "50", "-rounds", "2", "-python", python, "-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if diff := cmp.Diff(before, worktrees(t)); diff != "" {
		t.Errorf("worktrees changed (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "base-tree")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the base worktree's directory is still there: %v", err)
	}

	cols := regexp.MustCompile(`\s{2,}`)
	rows := map[string]map[string][]string{} // queue label → measure → A, B, B/A
	loads := map[string][]string{}
	label, section := "", 0
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "queue "):
			section++
			continue
		case strings.TrimSpace(line) == "" || section == 0:
			continue
		}
		f := cols.Split(strings.TrimSpace(line), -1)
		if section == 2 {
			loads[f[0]] = f[1:]
			continue
		}
		if !strings.HasPrefix(line, " ") {
			label, f = f[0], f[1:]
			rows[label] = map[string][]string{}
		}
		if len(f) != 6 {
			t.Fatalf("row %q: %d columns after the queue, want 6", line, len(f))
		}
		rows[label][f[0]] = f[1:4]
	}
	positive := []string{"CPU µs/alert", "start-up CPU ms", "allocs/alert", "allocs/alert less start-up", "start-up allocs", "DB bytes/alert less start-up", "peak RSS MiB"}
	for _, q := range queues {
		got, ok := rows[q.label]
		if !ok {
			t.Errorf("no rows for %q in:\n%s", q.label, out.String())
			continue
		}
		for _, m := range measures {
			v, ok := got[m.name]
			if !ok {
				t.Errorf("%s: no %q row", q.label, m.name)
				continue
			}
			a, errA := strconv.ParseFloat(v[0], 64)
			b, errB := strconv.ParseFloat(v[1], 64)
			if errA != nil || errB != nil {
				t.Errorf("%s %s: medians %q", q.label, m.name, v)
				continue
			}
			if !slices.Contains(positive, m.name) {
				continue
			}
			if a <= 0 || b <= 0 {
				t.Errorf("%s %s: medians %v, %v, want positive", q.label, m.name, a, b)
			}
			if r, err := strconv.ParseFloat(v[2], 64); err != nil || r <= 0 {
				t.Errorf("%s %s: B/A %q, want a positive ratio", q.label, m.name, v[2])
			}
		}
		// The same code grows the database alike, within a few percent: run
		// ids and times differ in length from run to run, and with them
		// which pages fill (a run here: 7,941 and 7,858 bytes per alert).
		if db := got["DB bytes/alert less start-up"]; len(db) == 3 {
			if r, err := strconv.ParseFloat(db[2], 64); err != nil || r < 0.95 || r > 1.05 {
				t.Errorf("%s: the same code grew the database differently: %q", q.label, db)
			}
		}
		if python == "" {
			continue
		}
		l, ok := loads[q.label]
		if !ok || len(l) != 6 {
			t.Errorf("%s: json.loads row %q", q.label, l)
			continue
		}
		if us, err := strconv.ParseFloat(l[0], 64); err != nil || us <= 0 {
			t.Errorf("%s: json.loads µs/line %q, want positive", q.label, l[0])
		}
		for _, r := range l[2:4] {
			if v, err := strconv.ParseFloat(r, 64); err != nil || v <= 0 {
				t.Errorf("%s: CPU/json.loads %q, want a positive ratio", q.label, r)
			}
		}
	}
}

// worktrees returns the paths of the repository's worktrees (their HEADs
// move as people commit; the set must not).
func worktrees(t *testing.T) []string {
	t.Helper()
	list, err := git(context.Background(), ".", "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range strings.Split(list, "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}
