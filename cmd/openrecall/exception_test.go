package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
)

// runCLIAt runs the command line in-process with the clock standing at now,
// for tests of what happens once an exception's expiry passed.
func runCLIAt(t *testing.T, now time.Time, stdin string, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{streams: streams{in: strings.NewReader(stdin), out: &out, errOut: &errOut}, now: func() time.Time { return now },
		newBatch: func() string { batchSeq++; return "run-test-" + strconv.Itoa(batchSeq) }}
	code := a.execute(context.Background(), args)
	return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// addArgs is a valid `exception add` for a maintenance window; the tests
// change one flag at a time.
func addArgs(db string, change map[string]string, drop ...string) []string {
	flags := [][2]string{{"--rule", "KubePodCrashLooping"}, {"--service", "checkout"}, {"--max-severity", "high"},
		{"--decision", "known_benign"}, {"--expires", "4h"}, {"--analyst", "alice"}, {"--note", "maintenance window"}}
	args := []string{"--db", db, "exception", "add"}
	for _, f := range flags {
		v, ok := change[f[0]]
		if !ok {
			v = f[1]
		}
		dropped := false
		for _, d := range drop {
			dropped = dropped || d == f[0]
		}
		if !dropped {
			args = append(args, f[0], v)
		}
	}
	return args
}

func listExceptions(t *testing.T, db string) []usecase.ListedException {
	t.Helper()
	r := runCLI(t, "", "--db", db, "exception", "list", "-o", "json")
	var list []usecase.ListedException
	if err := json.Unmarshal([]byte(r.stdout), &list); r.code != exitOK || err != nil {
		t.Fatalf("exception list: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return list
}

// auditOf returns the audit entries of analysis id in db.
func auditOf(t *testing.T, db, id string) []openrecall.AuditEntry {
	t.Helper()
	st, err := memory.Open(context.Background(), db, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	entries, err := st.AuditByAnalysis(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestExceptionAddRefusals drives `exception add` with one rule broken at a
// time (DESIGN §6b): each is a usage error (exit 2) naming the rule, and
// nothing is stored; the same flags with the rule kept store one.
func TestExceptionAddRefusals(t *testing.T) {
	dir := t.TempDir()
	capped := filepath.Join(dir, "capped.yaml")
	if err := os.WriteFile(capped, []byte("exceptions:\n  max_expiry: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		config string
		change map[string]string
		extra  []string
		drop   []string
		want   string
	}{
		{name: "empty service", change: map[string]string{"--service": ""}, want: "--service is required"},
		{name: "blank service", change: map[string]string{"--service": "  "}, want: "--service is required"},
		{name: "no service flag", drop: []string{"--service"}, want: "--service is required"},
		{name: "no rule", drop: []string{"--rule"}, want: "--rule is required"},
		{name: "real decision", change: map[string]string{"--decision": "real"}, want: "only false_positive, duplicate or known_benign"},
		{name: "escalated decision", change: map[string]string{"--decision": "escalated"}, want: "only false_positive, duplicate or known_benign"},
		{name: "no ceiling", drop: []string{"--max-severity"}, want: "--max-severity is required"},
		{name: "unknown ceiling", change: map[string]string{"--max-severity": "unknown"}, want: "severity ceiling"},
		{name: "no expiry", drop: []string{"--expires"}, want: "--expires is required"},
		{name: "expiry in the past", change: map[string]string{"--expires": "2020-01-01"}, want: "not in the future"},
		{name: "expiry over the default cap", change: map[string]string{"--expires": "91d"}, want: "beyond the configured cap 2160h0m0s"},
		{name: "expiry over the configured cap", config: capped, change: map[string]string{"--expires": "49h"}, want: "beyond the configured cap 48h0m0s"},
		{name: "no analyst", drop: []string{"--analyst"}, want: "--analyst is required"},
		{name: "security detection without a match field", extra: []string{"--attack-pattern", "security_detection"},
			want: "at least one match field is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "memory.db")
			args := addArgs(db, tt.change, tt.drop...)
			if tt.config != "" {
				args = append([]string{"--config", tt.config}, args...)
			}
			r := runCLI(t, "", append(args, tt.extra...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", r.code, exitUsage, tt.want, r.stdout, r.stderr)
			}
			if _, err := os.Stat(db); err == nil {
				if list := listExceptions(t, db); len(list) != 0 {
					t.Errorf("a refused exception was stored: %+v", list)
				}
			}
		})
	}
	// The base flags, and a security detection with a match field, within
	// the configured cap, are accepted: the refusals above are the rules'.
	db := filepath.Join(dir, "ok.db")
	for _, args := range [][]string{
		addArgs(db, nil),
		append(addArgs(db, map[string]string{"--expires": "48h"}), "--attack-pattern", "security_detection", "--match", "user=runner"),
	} {
		if r := runCLI(t, "", append([]string{"--config", capped}, args...)...); r.code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if list := listExceptions(t, db); len(list) != 2 {
		t.Errorf("valid exceptions: %+v", list)
	}
}

// TestExceptionRevokeNeedsReason: `exception revoke` without --reason is a
// usage error (exit 2) and revokes nothing; with one, the exception is
// revoked and the audit entry names who and why.
func TestExceptionRevokeNeedsReason(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	r := runCLI(t, "", append(addArgs(db, nil), "-o", "json")...)
	var ch usecase.ExceptionChange
	if err := json.Unmarshal([]byte(r.stdout), &ch); r.code != exitOK || err != nil {
		t.Fatalf("add: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	id := ch.Exception.ID
	for _, reason := range [][]string{nil, {"--reason", ""}, {"--reason", "   "}} {
		r = runCLI(t, "", append([]string{"--db", db, "exception", "revoke", id, "--analyst", "carol"}, reason...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--reason is required") {
			t.Errorf("revoke %v: exit %d, want %d\n%s", reason, r.code, exitUsage, r.stderr)
		}
	}
	if list := listExceptions(t, db); len(list) != 1 || list[0].State != openrecall.ExceptionActive {
		t.Fatalf("after refused revocations: %+v", list)
	}
	if r = runCLI(t, "", "--db", db, "exception", "revoke", id, "--analyst", "carol", "--reason", "window over"); r.code != exitOK {
		t.Fatalf("revoke: exit %d\n%s", r.code, r.stderr)
	}
	if list := listExceptions(t, db); len(list) != 1 || list[0].State != openrecall.ExceptionRevoked || list[0].RevokeReason != "window over" {
		t.Errorf("after the revocation: %+v", list)
	}
	entries := auditOf(t, db, openrecall.StepExceptionRevoke+"-"+id)
	if len(entries) != 1 || !strings.Contains(entries[0].Reason, "revoked by carol: window over") {
		t.Errorf("revocation audit entries: %+v", entries)
	}
}

// exceptionLine encodes e as `memory export` writes it.
func exceptionLine(t *testing.T, e openrecall.Exception) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"exception": e})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMemoryImportExceptionRules imports an export whose exceptions break
// the rules of `exception add` one at a time (DESIGN §6b): each is refused
// with its line and id (exit 3), nothing of it is stored, the exception the
// database held is left as it was, and the valid one is imported, audited
// with the importing analyst as actor and its first approver kept.
func TestMemoryImportExceptionRules(t *testing.T) {
	now := fixedClock()()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	if r := runCLIAt(t, now.Add(-time.Hour), "", addArgs(src, map[string]string{"--expires": "30d", "--analyst": "bob"})...); r.code != exitOK {
		t.Fatalf("add in the source: exit %d\n%s", r.code, r.stderr)
	}
	exported := listExceptions(t, src)
	if len(exported) != 1 {
		t.Fatalf("source exceptions: %+v", exported)
	}
	good := exported[0].Exception

	// The database imported into already holds one exception, by dave.
	if r := runCLI(t, "", addArgs(dst, map[string]string{"--service": "payments", "--analyst": "dave"})...); r.code != exitOK {
		t.Fatalf("add in the destination: exit %d\n%s", r.code, r.stderr)
	}
	before := listExceptions(t, dst)

	variant := func(id string, change func(*openrecall.Exception)) openrecall.Exception {
		e := good
		e.ID = id
		change(&e)
		return e
	}
	lines := []openrecall.Exception{
		variant("exc_tooLong", func(e *openrecall.Exception) { e.ExpiresAt = now.Add(91 * 24 * time.Hour) }),
		variant("exc_noService", func(e *openrecall.Exception) { e.Identity.Service = "" }),
		variant("exc_expired", func(e *openrecall.Exception) { e.ExpiresAt = now.Add(-time.Minute) }),
		variant("exc_revoked", func(e *openrecall.Exception) {
			e.RevokedAt, e.RevokedBy, e.RevokeReason = now.Add(-time.Minute), "carol", "retired"
		}),
		// The id of the exception held, with other content that would be
		// refused (expired): left as it is, counted as held.
		variant(before[0].ID, func(e *openrecall.Exception) {
			e.Note, e.Analyst, e.ExpiresAt = "rewritten", "mallory", now.Add(-time.Minute)
		}),
		good,
	}
	var in strings.Builder
	for _, e := range lines {
		in.WriteString(exceptionLine(t, e) + "\n")
	}
	r := runCLI(t, in.String(), "--db", dst, "memory", "import", "-", "--analyst", "alice")
	if r.code != exitPartial {
		t.Fatalf("import: exit %d, want %d\n%s%s", r.code, exitPartial, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"line 1: exception exc_tooLong not imported: exception expires at 2027-03-01T12:00:00Z, 2184h0m0s from now, beyond the configured cap 2160h0m0s",
		"line 2: exception exc_noService not imported: exception: a service is required",
		"line 3: exception exc_expired not imported: exception expired at",
		"line 4: exception exc_revoked not imported: exception was revoked at",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "imported 6 exceptions: 1 new, 1 already held, 4 refused; imported by alice") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	after := map[string]openrecall.Exception{}
	for _, e := range listExceptions(t, dst) {
		after[e.ID] = e.Exception
	}
	if len(after) != 2 || !reflect.DeepEqual(after[before[0].ID], before[0].Exception) {
		t.Fatalf("stored after the import: %+v\nbefore: %+v", after, before)
	}
	imported := after[good.ID]
	if imported.ID != good.ID || imported.Analyst != "bob" || !imported.CreatedAt.Equal(good.CreatedAt) || !imported.ExpiresAt.Equal(good.ExpiresAt) {
		t.Errorf("imported %+v, want the exported %+v with its first approver", imported, good)
	}
	entries := auditOf(t, dst, openrecall.StepExceptionImport+"-"+good.ID)
	if len(entries) != 1 || !strings.Contains(entries[0].Reason, "imported by alice (first approved by bob at 2026-11-30T11:00:00Z)") {
		t.Errorf("import audit entries: %+v", entries)
	}
	for _, id := range []string{"exc_tooLong", "exc_noService", "exc_expired", "exc_revoked"} {
		if got := auditOf(t, dst, openrecall.StepExceptionImport+"-"+id); len(got) != 0 {
			t.Errorf("a refused exception was audited as imported: %+v", got)
		}
	}

	// A configured cap applies to an import as to `exception add`: 30 days
	// is beyond 48h.
	capped := filepath.Join(dir, "capped.yaml")
	if err := os.WriteFile(capped, []byte("exceptions:\n  max_expiry: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := filepath.Join(dir, "third.db")
	r = runCLI(t, exceptionLine(t, good)+"\n", "--config", capped, "--db", third, "memory", "import", "-", "--analyst", "alice")
	if r.code != exitPartial || !strings.Contains(r.stderr, "beyond the configured cap 48h0m0s") {
		t.Errorf("import under a 48h cap: exit %d\n%s", r.code, r.stderr)
	}
	if list := listExceptions(t, third); len(list) != 0 {
		t.Errorf("stored under a 48h cap: %+v", list)
	}
}

// TestRetainAndForgetRecordExpiries: an exception's expiry is recorded
// (actor system) by the next writing command, retain and memory forget
// included, and only once.
func TestRetainAndForgetRecordExpiries(t *testing.T) {
	now := fixedClock()()
	later := now.Add(2 * time.Hour)
	fp := "error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod"
	memoryID := func(t *testing.T, db string) string {
		r := runCLI(t, "", "--db", db, "memory", "export")
		var inc openrecall.Incident
		if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &inc); err != nil {
			t.Fatalf("memory export: %v\n%s", err, r.stdout)
		}
		return inc.ID
	}
	tests := []struct {
		name string
		cmd  func(t *testing.T, db string) []string
	}{
		{"retain", func(*testing.T, string) []string {
			return []string{"retain", "--fingerprint", fp, "--rule", "KubeContainerOOMKilled", "--service", "reports",
				"--decision", "known_benign", "--note", "nightly job", "--analyst", "ana"}
		}},
		{"memory forget", func(t *testing.T, db string) []string {
			return []string{"memory", "forget", memoryID(t, db), "--reason", "stale", "--analyst", "ana"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := seededDB(t)
			r := runCLIAt(t, now, "", append(addArgs(db, map[string]string{"--expires": "1h"}), "-o", "json")...)
			var ch usecase.ExceptionChange
			if err := json.Unmarshal([]byte(r.stdout), &ch); r.code != exitOK || err != nil {
				t.Fatalf("add: exit %d, %v\n%s", r.code, err, r.stderr)
			}
			expiry := openrecall.StepExceptionExpire + "-" + ch.Exception.ID
			args := append([]string{"--db", db}, tt.cmd(t, db)...)
			if r := runCLIAt(t, later, "", args...); r.code != exitOK {
				t.Fatalf("%s: exit %d\n%s", tt.name, r.code, r.stderr)
			}
			entries := auditOf(t, db, expiry)
			if len(entries) != 1 || !strings.Contains(entries[0].Reason, "by system") {
				t.Fatalf("expiry entries after %s: %+v", tt.name, entries)
			}
			if r := runCLIAt(t, later, "", "--db", db, "exception", "add", "--rule", "Other", "--service", "s", "--max-severity", "low",
				"--decision", "duplicate", "--expires", "1h", "--analyst", "ana"); r.code != exitOK {
				t.Fatalf("a second writing command: exit %d\n%s", r.code, r.stderr)
			}
			if entries := auditOf(t, db, expiry); len(entries) != 1 {
				t.Errorf("the expiry was recorded %d times", len(entries))
			}
		})
	}
}
