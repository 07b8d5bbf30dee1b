package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall/scripts/bench/benchkit"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", args: nil, want: options{bin: "./bin/openrecall", queue: "corpus", memory: "seeded", grouping: "on", cache: "on", profile: true, n: 20000, seed: 1, workers: []int{1, 2}, repeat: 3, runs: 3, timeout: 30 * time.Minute}},
		{name: "workers list", args: []string{"-n", "20000", "-workers", "2, 4"}, want: options{bin: "./bin/openrecall", queue: "corpus", memory: "seeded", grouping: "on", cache: "on", profile: true, n: 20000, seed: 1, workers: []int{2, 4}, repeat: 3, runs: 3, timeout: 30 * time.Minute}},
		{name: "misses", args: []string{"-queue", "misses", "-workers", "1"}, want: options{bin: "./bin/openrecall", queue: "misses", memory: "empty", grouping: "both", cache: "off", profile: true, n: 20000, seed: 1, workers: []int{1}, repeat: 3, runs: 3, timeout: 30 * time.Minute}},
		{name: "corpus cache off on an empty memory", args: []string{"-memory", "empty", "-cache", "off", "-grouping", "off"}, want: options{bin: "./bin/openrecall", queue: "corpus", memory: "empty", grouping: "off", cache: "off", profile: true, n: 20000, seed: 1, workers: []int{1, 2}, repeat: 3, runs: 3, timeout: 30 * time.Minute}},
		{name: "unknown memory", args: []string{"-memory", "full"}, wantErr: true},
		{name: "unknown cache", args: []string{"-cache", "cold"}, wantErr: true},
		{name: "unknown grouping", args: []string{"-grouping", "maybe"}, wantErr: true},
		{name: "zero workers", args: []string{"-workers", "0"}, wantErr: true},
		{name: "zero runs", args: []string{"-runs", "0"}, wantErr: true},
		{name: "not a number", args: []string{"-workers", "1,x"}, wantErr: true},
		{name: "no alerts", args: []string{"-n", "0"}, wantErr: true},
		{name: "unknown queue", args: []string{"-queue", "mine"}, wantErr: true},
		{name: "stray argument", args: []string{"queue.jsonl"}, wantErr: true},
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

// TestBaselinesReadEveryAlert checks that both baselines read every alert
// of a generated queue, bare JSON strings and webhooks included.
func TestBaselinesReadEveryAlert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.jsonl")
	counts, _, err := benchkit.WriteGeneratedQueue(path, 700, 5)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if total != 700 {
		t.Fatalf("counts total %d, want 700", total)
	}
	for name, read := range map[string]func(string) (int, error){"json": decodeJSONLines, "intake": readIntake} {
		n, err := read(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n != 700 {
			t.Errorf("%s read %d alerts, want 700", name, n)
		}
	}
}

// TestMissesQueueLinesAllDiffer checks the miss-path queue: every line a
// free-text alert (a JSON string) that no other line repeats, read whole by
// both baselines, and its rules' templates still shared between lines (the
// queue misses the caches, not the identities).
func TestMissesQueueLinesAllDiffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "misses.jsonl")
	const n = 1500
	if _, rules, err := benchkit.WriteMissesQueue(path, "", n); err != nil || rules < 600 {
		t.Fatalf("writeMissesQueue: %d rules, %v", rules, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	seen := map[string]int{}
	for i, l := range lines {
		if !strings.HasPrefix(l, `"`) || !strings.Contains(l, "(ref ") {
			t.Fatalf("line %d is not a free-text alert with its reference: %s", i+1, l)
		}
		if j, ok := seen[l]; ok {
			t.Fatalf("lines %d and %d are equal: %s", j+1, i+1, l)
		}
		seen[l] = i
	}
	for name, read := range map[string]func(string) (int, error){"json": decodeJSONLines, "intake": readIntake} {
		if got, err := read(path); err != nil || got != n {
			t.Errorf("%s read %d alerts (%v), want %d", name, got, err, n)
		}
	}
}

func TestTableRatios(t *testing.T) {
	jsonRow := row{name: "read+json.Unmarshal", records: 1000, elapsed: 100 * time.Millisecond}
	intakeRow := row{name: "read+intake.Reader", records: 1000, elapsed: 250 * time.Millisecond}
	run := medianRun([]row{
		{name: "analyze --workers 1", records: 1000, elapsed: 2 * time.Second, rssBytes: 21 << 20, cpu: 2000 * time.Millisecond},
		{name: "analyze --workers 1", records: 1000, elapsed: 2 * time.Second, rssBytes: 21 << 20, cpu: 1900 * time.Millisecond},
		{name: "analyze --workers 1", records: 1000, elapsed: 2 * time.Second, rssBytes: 21 << 20, cpu: 1800 * time.Millisecond},
	})
	var b strings.Builder
	if err := printTable(&b, []row{jsonRow, intakeRow, run}, jsonRow, intakeRow); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 rows:\n%s", len(lines), b.String())
	}
	got := strings.Fields(lines[3])
	want := []string{"analyze", "--workers", "1", "1000", "2.000", "500", "21.0", "1.90", "1900.0", "1800.0–2000.0", "(3)", "20.0", "-", "8.0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("analyze row (-want +got):\n%s", diff)
	}
}
