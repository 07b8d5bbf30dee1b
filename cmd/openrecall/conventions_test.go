package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestUnknownSubcommandIsAUsageError pins the fix for `memory exprot >
// backup.jsonl` writing the help text into the backup with exit 0: an
// unknown subcommand at any level exits 2, says what was meant on stderr,
// and prints nothing on stdout.
func TestUnknownSubcommandIsAUsageError(t *testing.T) {
	tests := []struct {
		args    []string
		suggest string
	}{
		{[]string{"audit", "verfiy"}, `did you mean "verify"?`},
		{[]string{"memory", "exprot"}, `did you mean "export"?`},
		{[]string{"memory", "stat"}, `did you mean "stats"?`},
		{[]string{"config", "chek"}, `did you mean "check"?`},
		{[]string{"anaylze"}, `did you mean "analyze"?`},
		{[]string{"frobnicate"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			r := runCLI(t, "", append([]string{"--db", db}, tt.args...)...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d", r.code, exitUsage)
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty:\n%s", r.stdout)
			}
			if !strings.Contains(r.stderr, "unknown command") || !strings.Contains(r.stderr, tt.suggest) {
				t.Errorf("stderr lacks the unknown command and %q:\n%s", tt.suggest, r.stderr)
			}
			if strings.Count(r.stderr, "unknown command") != 1 {
				t.Errorf("the error is said more than once:\n%s", r.stderr)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("a usage error touched the database: %v", err)
			}
		})
	}
}

// TestBareGroupCommandPrintsHelp: a command that only groups others, called
// alone, shows its subcommands and succeeds.
func TestBareGroupCommandPrintsHelp(t *testing.T) {
	r := runCLI(t, "", "memory")
	if r.code != exitOK || !strings.Contains(r.stdout, "export") || !strings.Contains(r.stdout, "Exit status") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runCLI(t, "", args...)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "openrecall ") || !strings.Contains(r.stdout, runtime.Version()) {
			t.Errorf("%v: exit %d, stdout %q, want \"openrecall VERSION (%s…)\"", args, r.code, r.stdout, runtime.Version())
		}
	}
	for _, o := range []string{"json", "jsonl"} {
		r := runCLI(t, "", "version", "-o", o)
		var v buildVersion
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.GoVersion != runtime.Version() || v.Version == "" {
			t.Errorf("version -o %s: %v, %+v", o, err, v)
		}
		if lines := strings.Count(strings.TrimSpace(r.stdout), "\n"); (o == "jsonl") != (lines == 0) {
			t.Errorf("version -o %s printed %d line breaks:\n%s", o, lines, r.stdout)
		}
	}
}

// TestExitTable checks the one exit-code table: every code once, in the
// precedence order of DESIGN §11, applied by firstExit, listed in the root
// help and in README.md.
func TestExitTable(t *testing.T) {
	want := []int{exitUsage, exitFailure, exitTampered, exitUnsafeEval, exitPartial, exitEscalated, exitOK, exitInterrupted}
	if len(exitTable) != len(want) {
		t.Fatalf("exit table has %d rows, want %d", len(exitTable), len(want))
	}
	for i, row := range exitTable {
		if row.code != want[i] {
			t.Errorf("row %d is %d, want %d", i, row.code, want[i])
		}
	}
	for _, tt := range []struct {
		codes []int
		want  int
	}{
		{nil, exitOK},
		{[]int{exitEscalated, exitPartial}, exitPartial},
		{[]int{exitPartial, exitUnsafeEval}, exitUnsafeEval},
		{[]int{exitOK, exitEscalated}, exitEscalated},
		{[]int{exitPartial, exitFailure}, exitFailure},
	} {
		if got := firstExit(tt.codes...); got != tt.want {
			t.Errorf("firstExit(%v) = %d, want %d", tt.codes, got, tt.want)
		}
	}
	help := runCLI(t, "", "--help").stdout
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range exitTable {
		code := strconv.Itoa(row.code)
		if !regexp.MustCompile(`(?m)^  ` + code + ` +` + regexp.QuoteMeta(row.meaning) + `$`).MatchString(help) {
			t.Errorf("root help does not list exit code %s (%s)", code, row.meaning)
		}
		if !regexp.MustCompile(`(?m)^\| ` + code + ` \|`).Match(readme) {
			t.Errorf("README.md's exit code table lacks %s", code)
		}
	}
}

// TestEveryCommandHasExamples: each command's help shows how to use it.
func TestEveryCommandHasExamples(t *testing.T) {
	for _, c := range allCommands(newRootCmd(&app{})) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.Parent() != nil && c.Parent().Name() == "completion") {
			continue
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no examples in its help", c.CommandPath())
		}
	}
}

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}
