package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/pgtest"
	"github.com/openrecall/openrecall/memory"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixedClock returns a clock that stands still, so latencies are 0 and
// batch names and timestamps are stable in golden output.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return t }
}

type runResult struct {
	code           int
	stdout, stderr string
}

// batchSeq numbers the runs of this test process, so batch names are
// stable for golden output yet unique within one database.
var batchSeq int

// runCLI runs the command line in-process with a fixed clock.
func runCLI(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{streams: streams{in: strings.NewReader(stdin), out: &out, errOut: &errOut}, now: fixedClock(),
		newBatch: func() string { batchSeq++; return "run-test-" + strconv.Itoa(batchSeq) }}
	code := a.execute(context.Background(), args)
	return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

func seededDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "memory.db")
	r := runCLI(t, "", "--db", db, "memory", "seed")
	if r.code != exitOK {
		t.Fatalf("memory seed: exit %d\n%s", r.code, r.stderr)
	}
	return db
}

func decodeResults(t *testing.T, jsonl string) []openrecall.Result {
	t.Helper()
	var rs []openrecall.Result
	dec := json.NewDecoder(strings.NewReader(jsonl))
	for dec.More() {
		var r openrecall.Result
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decode result %d: %v", len(rs), err)
		}
		rs = append(rs, r)
	}
	return rs
}

func TestAnalyzeExampleJSONGolden(t *testing.T) {
	// The fixed key from the seed on: seeding binds the trail to the key
	// at hand (the seeded memories are sealed and chained).
	t.Setenv(envAuditKey, strings.Repeat("ab", 32))
	analyzeExampleGolden(t, seededDB(t))
}

// The same run on PostgreSQL prints the same document, byte for byte:
// decisions, costs, memory ids and audit hashes (DESIGN §13: nothing
// above the store knows which backend it has).
func TestAnalyzeExampleJSONGoldenOnPostgres(t *testing.T) {
	db := pgtest.DSN(t)
	t.Setenv(envAuditKey, strings.Repeat("ab", 32)) // as TestAnalyzeExampleJSONGolden
	if r := runCLI(t, "", "--db", db, "memory", "seed"); r.code != exitOK {
		t.Fatalf("memory seed: exit %d\n%s", r.code, r.stderr)
	}
	analyzeExampleGolden(t, db)
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK {
		t.Fatalf("audit verify on PostgreSQL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// analyzeExampleGolden runs analyze on the example queue over the seeded
// memory db and compares its JSON document with the golden file.
func analyzeExampleGolden(t *testing.T, db string) {
	t.Helper()
	t.Setenv(envAuditKey, strings.Repeat("ab", 32)) // a fixed key: stable audit hashes
	batchSeq = 0                                    // batch names as in the golden file, whichever tests ran first
	r := runCLI(t, "", "--db", db, "analyze", "--output", "json", "../../examples/queue.jsonl")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var doc struct {
		Mode    openrecall.Mode     `json:"mode"`
		Results []openrecall.Result `json:"results"`
		Summary json.RawMessage     `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--output json is not one JSON document: %v", err)
	}
	if want := (openrecall.Mode{Memory: "sqlite", Model: "deterministic"}); memory.IsPostgres(db) {
		// The mode names the backend; the rest of the document is the same.
		want.Memory = "postgres"
		if doc.Mode != want {
			t.Errorf("mode = %+v, want %+v", doc.Mode, want)
		}
		r.stdout = strings.ReplaceAll(r.stdout, `"mode":{"memory":"postgres",`, `"mode":{"memory":"sqlite",`)
	} else if doc.Mode != want {
		t.Errorf("mode = %+v, want %+v", doc.Mode, want)
	}
	golden := filepath.Join("testdata", "analyze_example.golden.json")
	if *update && !memory.IsPostgres(db) {
		if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/openrecall -run Golden -update)", err)
	}
	got, wantDoc := r.stdout, string(want)
	if memory.IsPostgres(db) {
		// What waits for a person is sealed into the chain with its result
		// document, whose mode names the backend: from the first such row
		// on, the chain's hashes differ from SQLite's (audit verify, run
		// after this, checks the chain itself); the rest is byte for byte.
		got, wantDoc = chainHashes.ReplaceAllString(got, `"$1":"…"`), chainHashes.ReplaceAllString(wantDoc, `"$1":"…"`)
	}
	if wantDoc != got {
		t.Errorf("--output json differs from %s; if the change is intended, rerun with -update\n%s", golden, firstDiff(wantDoc, got))
	}
}

// chainHashes matches the audit chain's hash fields of a result document.
var chainHashes = regexp.MustCompile(`"(prev_hash|hash)":"[0-9a-f]{64}"`)

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n- " + clip(al[i], 400) + "\n+ " + clip(bl[i], 400)
		}
	}
	return "lengths differ: " + itoa(len(al)) + " != " + itoa(len(bl)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestAnalyzeExampleShowsBypassesAndSavings(t *testing.T) {
	db := seededDB(t)
	r := runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "../../examples/queue.jsonl")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	results := decodeResults(t, r.stdout)
	bypasses := 0
	var cost, baseline openrecall.NanoUSD
	for i, res := range results {
		if len(res.Audit) != len(res.Steps) {
			t.Errorf("result %d: %d audit entries for %d steps", i, len(res.Audit), len(res.Steps))
		}
		if res.Cost > res.Baseline {
			t.Errorf("result %d: cost %s above baseline %s", i, res.Cost, res.Baseline)
		}
		if res.Bypassed {
			bypasses++
			if res.Fingerprint.AttackPattern != "" || !res.Decision.Benign() {
				t.Errorf("result %d bypassed with attack %q / decision %q", i, res.Fingerprint.AttackPattern, res.Decision)
			}
		}
		for _, s := range res.Steps {
			if s.Live {
				t.Errorf("result %d: a deterministic run reported a live call: %+v", i, s)
			}
		}
		cost += res.Cost
		baseline += res.Baseline
	}
	if bypasses == 0 {
		t.Error("no memory bypass on the seeded example")
	}
	if cost >= baseline {
		t.Errorf("total cost %s is not below the baseline %s", cost, baseline)
	}
	for _, want := range []string{"memory bypasses", "savings", "model=deterministic", "no live model calls"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("summary on stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestAnalyzeWorkersEquivalentAndRepeatable(t *testing.T) {
	// Each run starts from the same memory (a run records its strong
	// completions, whose mean prices the next run's baselines).
	run := func(workers string) []openrecall.Result {
		db := seededDB(t)
		r := runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "--workers", workers, "../../examples/queue.jsonl")
		if r.code != exitOK {
			t.Fatalf("--workers %s: exit %d\n%s", workers, r.code, r.stderr)
		}
		return decodeResults(t, r.stdout)
	}
	one, again, two := run("1"), run("1"), run("4")
	if err := openrecall.EquivalentRuns(one, again); err != nil {
		t.Errorf("two sequential runs differ: %v", err)
	}
	if err := openrecall.EquivalentRuns(one, two); err != nil {
		t.Errorf("--workers 4 differs from --workers 1: %v", err)
	}
}

func TestAnalyzeMalformedJSONLReportsLineAndExits3(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	r := runCLI(t, "not json\n{\"title\":\"checkout 5xx spike\"}\n", "--db", db, "analyze", "--format", "jsonl", "--output", "jsonl", "-")
	if r.code != exitPartial {
		t.Fatalf("exit %d, want %d (partial)\nstderr:\n%s", r.code, exitPartial, r.stderr)
	}
	results := decodeResults(t, r.stdout)
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	if results[0].Outcome != openrecall.ResultRejected || results[0].Position.Line != 1 || !strings.Contains(results[0].Error, "JSON") {
		t.Errorf("line 1: got outcome %q at %s: %q; want rejected at line 1 with a JSON reason", results[0].Outcome, results[0].Position, results[0].Error)
	}
	if len(results[0].Steps) != 1 || len(results[0].Audit) != 1 {
		t.Errorf("rejected record: %d steps, %d audit entries; want 1 and 1", len(results[0].Steps), len(results[0].Audit))
	}
	if results[1].Outcome != openrecall.ResultTriaged || results[1].Position.Line != 2 {
		t.Errorf("line 2: outcome %q at %s, want triaged at line 2", results[1].Outcome, results[1].Position)
	}
	if !strings.Contains(r.stderr, "1 rejected") {
		t.Errorf("summary does not count the rejected record:\n%s", r.stderr)
	}
}

func TestAnalyzeAlertmanagerFixtures(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	r := runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "testdata/alertmanager_payload.json")
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	results := decodeResults(t, r.stdout)
	if len(results) != 2 {
		t.Fatalf("%d results for the firing group of two, want 2", len(results))
	}
	for _, res := range results {
		if res.Outcome != openrecall.ResultTriaged || res.Alert.Format != "alertmanager" {
			t.Errorf("%s: outcome %q format %q, want triaged alertmanager", res.Position, res.Outcome, res.Alert.Format)
		}
	}
	r = runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "testdata/alertmanager_payload_resolved.json")
	if r.code != exitOK {
		t.Fatalf("resolved: exit %d\n%s", r.code, r.stderr)
	}
	resolved := decodeResults(t, r.stdout)
	if len(resolved) != 2 {
		t.Fatalf("%d results for the resolved group of two, want 2\n%s", len(resolved), r.stderr)
	}
	for _, res := range resolved {
		if res.Outcome != openrecall.ResultResolved || len(res.Steps) != 1 || res.Decision != "" {
			t.Errorf("%s: outcome %q, %d steps, decision %q; want resolved, recorded in 1 step, no decision", res.Position, res.Outcome, len(res.Steps), res.Decision)
		}
	}
}

func TestAuditVerifyDetectsEditedRow(t *testing.T) {
	db := seededDB(t)
	if r := runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "--db", db, "audit", "verify"); r.code != exitOK || !strings.Contains(r.stdout, "intact") {
		t.Fatalf("verify on an untouched trail: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sqldb, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sqldb.Close() }()
	if _, err := sqldb.Exec(`UPDATE audit_entries SET reason = 'nothing to see here' WHERE sequence = 7`); err == nil {
		t.Fatal("a plain UPDATE of an audit entry succeeded; the append-only trigger should refuse it")
	}
	// A tamperer with the sqlite3 shell drops the trigger first.
	if _, err := sqldb.Exec(`DROP TRIGGER audit_entries_no_update`); err != nil {
		t.Fatal(err)
	}
	res, err := sqldb.Exec(`UPDATE audit_entries SET reason = 'nothing to see here' WHERE sequence = 7`)
	if err != nil {
		t.Fatalf("tamper: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("tamper edited %d rows, want 1", n)
	}
	r := runCLI(t, "", "--db", db, "audit", "verify")
	if r.code != exitTampered {
		t.Fatalf("verify after an edit: exit %d, want %d\n%s%s", r.code, exitTampered, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "entry 7 ") || !strings.Contains(r.stdout, "edited") {
		t.Errorf("verify does not name entry 7 as edited:\n%s", r.stdout)
	}
}

func TestRetainTwiceIsAlreadyKnownAndRecallShowsIt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	fp := "error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod"
	args := []string{"--db", db, "retain", "--fingerprint", fp, "--decision", "known_benign", "--note", "Nightly  ETL spike", "--dead-end", "restarting the pod",
		"--rule", "KubePodOOMKilled", "--service", "etl", "--severity", "warning"}
	if r := runCLI(t, "", args...); r.code != exitOK || !strings.HasPrefix(r.stdout, "retained ") {
		t.Fatalf("first retain: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	args[8] = "nightly etl\u00a0SPIKE"
	if r := runCLI(t, "", args...); r.code != exitOK || !strings.HasPrefix(r.stdout, "already known ") {
		t.Fatalf("second retain (same note up to case and spaces): exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r := runCLI(t, "", "--db", db, "recall", "--fingerprint", fp, "--rule", "KubePodOOMKilled", "--service", "etl", "--output", "json")
	var got struct{ Matches []openrecall.Match }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Matches) != 1 || got.Matches[0].Score != 1 || got.Matches[0].Related {
		t.Fatalf("recall: %v, %+v", err, got)
	}
	// Another rule with the same DNA sees it as a related match only.
	r = runCLI(t, "", "--db", db, "recall", "--fingerprint", fp, "--rule", "KubeJobFailed", "--service", "etl")
	if r.code != exitOK || !strings.Contains(r.stdout, "related") || !strings.Contains(r.stdout, "KubePodOOMKilled @ etl") {
		t.Fatalf("recall for another rule: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"analyze", "--no-such-flag"}},
		{"bad output", []string{"analyze", "--output", "xml"}},
		{"bad format", []string{"analyze", "--format", "csv"}},
		{"zero workers", []string{"analyze", "--workers", "0"}},
		{"retain without decision", []string{"retain", "--fingerprint", "x"}},
		{"unknown command", []string{"frobnicate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"--db", filepath.Join(t.TempDir(), "m.db")}, tt.args...)...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d\n%s", r.code, exitUsage, r.stderr)
			}
		})
	}
}

func TestCostPrintsCurveAndSVG(t *testing.T) {
	db := seededDB(t)
	if r := runCLI(t, "", "--db", db, "analyze", "--output", "jsonl", "../../examples/queue.jsonl"); r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	svg := filepath.Join(t.TempDir(), "curve.svg")
	r := runCLI(t, "", "--db", db, "cost", "--svg", svg)
	if r.code != exitOK {
		t.Fatalf("cost: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"savings", "baseline", "per tier"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("cost output lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("svg not written: %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	tests := []struct {
		done        int
		read, total int64
		want        string
	}{
		{500, 0, 0, "  analysed 500 records (250/s)"},
		{500, 50, 100, "  [###############...............]  50%  500 records (250/s)"},
		{1000, 120, 100, "  [##############################] 100%  1000 records (500/s)"},
	}
	for _, tt := range tests {
		if got := progressLine(tt.done, tt.read, tt.total, 2*time.Second); got != tt.want {
			t.Errorf("progressLine(%d, %d, %d) = %q, want %q", tt.done, tt.read, tt.total, got, tt.want)
		}
	}
}
