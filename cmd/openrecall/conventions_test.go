package main

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
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
	want := []int{exitUsage, exitFailure, exitTampered, exitUnsafeEval, exitPartial, exitUnanalysed, exitOK, exitInterrupted}
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
		{[]int{exitUnanalysed, exitPartial}, exitPartial},
		{[]int{exitPartial, exitUnsafeEval}, exitUnsafeEval},
		{[]int{exitOK, exitUnanalysed}, exitUnanalysed},
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

// resultCommands runs every command that prints results, on one database
// that has seen a run, with -o output.
func resultCommands(t *testing.T) (db string, cmds [][]string) {
	t.Helper()
	db = seededDB(t)
	r := runCLI(t, "", "--db", db, "analyze", "-o", "jsonl", "../../examples/queue.jsonl")
	if r.code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", r.code, r.stderr)
	}
	id := decodeResults(t, r.stdout)[0].AnalysisID
	fp := "error_class=oomkilled;service_role=batch_worker;dependency_pattern=;signal_shape=spike;attack_pattern=;environment=prod"
	return db, [][]string{
		{"analyze", "../../examples/queue.jsonl"},
		{"fingerprint", "../../examples/queue.jsonl"},
		{"senders", "list"},
		{"senders", "test", "../../intake/testdata/senders/datadog/cpu-high-web-1.json"},
		{"retain", "--fingerprint", fp, "--decision", "real"},
		{"recall", "--fingerprint", fp},
		{"memory", "stats"},
		{"cost"},
		{"audit", "show", id},
		{"eval", "--size", "200"},
		{"version"},
	}
}

// TestOutputVocabulary: every command that prints results takes the same
// -o table|json|jsonl, where json is exactly one JSON document and jsonl
// one JSON value per line; anything else is a usage error. Before, the
// values differed per command and `audit show -o json` printed JSON Lines.
func TestOutputVocabulary(t *testing.T) {
	db, cmds := resultCommands(t)
	for _, args := range cmds {
		name := strings.Join(args[:min(2, len(args))], " ")
		for _, o := range []string{"table", "json", "jsonl"} {
			r := runCLI(t, "", append([]string{"--db", db}, append(args, "-o", o)...)...)
			if r.code != exitOK || r.stdout == "" {
				t.Errorf("%s -o %s: exit %d, %d bytes on stdout\n%s", name, o, r.code, len(r.stdout), r.stderr)
				continue
			}
			switch o {
			case "json":
				dec := json.NewDecoder(strings.NewReader(r.stdout))
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Errorf("%s -o json: not JSON: %v", name, err)
				} else if dec.More() {
					t.Errorf("%s -o json: more than one JSON document:\n%s", name, clip(r.stdout, 400))
				}
			case "jsonl":
				for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
					if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
						t.Errorf("%s -o jsonl: line %d is not one JSON object: %s", name, i+1, clip(line, 200))
						break
					}
				}
			}
		}
		if r := runCLI(t, "", append([]string{"--db", db}, append(args, "-o", "yaml")...)...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("%s -o yaml: exit %d, want %d and nothing on stdout", name, r.code, exitUsage)
		}
	}
	// One wording of the flag everywhere.
	usage := map[string][]string{}
	for _, c := range allCommands(newRootCmd(&app{})) {
		if f := c.Flags().Lookup("output"); f != nil {
			usage[f.Usage] = append(usage[f.Usage], c.CommandPath())
		}
	}
	if len(usage) != 1 {
		t.Errorf("-o is described %d ways: %v", len(usage), usage)
	}
}

// TestNoAlertsInInput: an empty input is not a successful triage of
// nothing; it says so on stderr and exits 3 with nothing on stdout.
func TestNoAlertsInInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "m.db")
	for _, tt := range []struct {
		stdin string
		args  []string
		where string
	}{
		{"", []string{"analyze"}, "standard input"},
		{"\n  \n\n", []string{"analyze", "-"}, "standard input"},
		{"", []string{"analyze", "-o", "jsonl", empty}, empty},
		{"", []string{"fingerprint"}, "standard input"},
		{"", []string{"fingerprint", "-o", "jsonl", empty}, empty},
	} {
		r := runCLI(t, tt.stdin, append([]string{"--db", db}, tt.args...)...)
		if r.code != exitPartial || r.stdout != "" || !strings.Contains(r.stderr, "no alerts in "+tt.where) {
			t.Errorf("%v on %q: exit %d, stdout %q, stderr:\n%s", tt.args, tt.stdin, r.code, r.stdout, r.stderr)
		}
	}
	r := runCLI(t, "", "--db", db, "analyze", "-o", "json", empty)
	var doc struct{ Results []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != exitPartial || err != nil || len(doc.Results) != 0 {
		t.Errorf("analyze -o json on no alerts: exit %d, %v: %s", r.code, err, r.stdout)
	}
}

// failingWriter fails every write, like a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestFailedStdoutWriteIsAFailure: results that could not be written are
// not a success. Before, a table printed with unchecked Fprintf calls to a
// full disk exited 0.
func TestFailedStdoutWriteIsAFailure(t *testing.T) {
	db := seededDB(t)
	for _, args := range [][]string{{"memory", "stats"}, {"version"}, {"fingerprint", "../../examples/queue.jsonl"}} {
		var errOut strings.Builder
		a := &app{streams: streams{in: strings.NewReader(""), out: failingWriter{}, errOut: &errOut}, now: fixedClock()}
		code := a.execute(context.Background(), append([]string{"--db", db}, args...))
		if code != exitFailure || strings.Count(errOut.String(), "no space left on device") != 1 {
			t.Errorf("%v to a full disk: exit %d, stderr:\n%s", args, code, errOut.String())
		}
	}
}

// commandFiles parses the package's non-test files, the commands the
// conventions tests read.
func commandFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// TestRunEOnlyParsesAndCalls holds every command to the house shape: its
// RunE fills the command's options from its arguments and flags, checks
// them, and calls the command's run function (xRun), which calls the
// application layer. A RunE that opens the store or prints fails here.
func TestRunEOnlyParsesAndCalls(t *testing.T) {
	fset, files := commandFiles(t)
	seen := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "RunE" {
				return true
			}
			fn, ok := kv.Value.(*ast.FuncLit)
			if !ok {
				t.Errorf("%s: RunE is not a function literal", fset.Position(kv.Pos()))
				return false
			}
			seen++
			if why := runEProblem(fn.Body.List); why != "" {
				t.Errorf("%s: RunE %s", fset.Position(fn.Pos()), why)
			}
			return false
		})
	}
	if seen < 20 {
		t.Fatalf("found %d RunE functions, want every command's (20 or more)", seen)
	}
}

// runEProblem says how a RunE body departs from "fill options, check them,
// return xRun(...)", or "" when it does not.
func runEProblem(stmts []ast.Stmt) string {
	if len(stmts) == 0 {
		return "is empty"
	}
	last, ok := stmts[len(stmts)-1].(*ast.ReturnStmt)
	if !ok || len(last.Results) != 1 {
		return "does not end by returning its run function's error"
	}
	call, ok := last.Results[0].(*ast.CallExpr)
	if !ok {
		return "does not end by returning its run function's error"
	}
	if id, ok := call.Fun.(*ast.Ident); !ok || !strings.HasSuffix(id.Name, "Run") {
		return "does not end by calling a run function (xRun)"
	}
	for _, s := range stmts[:len(stmts)-1] {
		if !parseStmt(s, true) {
			return "does more than fill and check its options (a statement other than an assignment to a field or a check that returns)"
		}
	}
	return ""
}

// parseStmt reports whether s only fills options (an assignment to a
// field) or checks them (an if whose body fills options or returns).
func parseStmt(s ast.Stmt, top bool) bool {
	switch s := s.(type) {
	case *ast.AssignStmt:
		for _, l := range s.Lhs {
			if _, ok := l.(*ast.SelectorExpr); !ok {
				return false
			}
		}
		return true
	case *ast.ReturnStmt:
		return !top
	case *ast.IfStmt:
		if s.Else != nil {
			return false
		}
		for _, b := range s.Body.List {
			if !parseStmt(b, false) {
				return false
			}
		}
		return true
	}
	return false
}

// TestFlagsBindToOptions holds the other half of the house shape: each
// command's flags are bound to the fields of its options struct (opts.x,
// or a small struct of shared flags such as modelFlags), so RunE finds all
// it parses in one value. A flag bound to a loose variable (&x), or one
// declared unbound and read back with GetX, fails here.
func TestFlagsBindToOptions(t *testing.T) {
	fset, files := commandFiles(t)
	bound := 0
	for _, f := range files {
		var fn string // the function being inspected
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			target, what := flagTarget(call)
			switch what {
			case "":
				return true
			case "unbound":
				if !isRootVersionFlag(call) {
					t.Errorf("%s: flag declared without binding it to an options field", fset.Position(call.Pos()))
				}
				return true
			case "get":
				t.Errorf("%s: flag value read back with %s instead of bound to an options field", fset.Position(call.Pos()), target.(*ast.SelectorExpr).Sel.Name)
				return true
			}
			bound++
			if _, helper := flagHelpers[fn]; helper && isParam(target) {
				return true // its callers are checked
			}
			if !isFieldAddress(target) {
				t.Errorf("%s: flag bound to %s, not to a field of an options struct (&opts.x)", fset.Position(call.Pos()), exprString(target))
			}
			return true
		})
	}
	if bound < 50 {
		t.Fatalf("found %d flag bindings, want every command's (50 or more)", bound)
	}
}

// flagHelpers are the functions that bind a flag to a pointer they are
// given, by the index of that parameter: their call sites are checked.
var flagHelpers = map[string]int{"addOutputFlag": 1}

// flagValueTypes are the pflag value kinds a command declares flags of.
var flagValueTypes = regexp.MustCompile(`^(String|StringArray|StringSlice|Bool|Int|Int64|Uint|Uint64|Float64|Duration)$`)

// flagTarget classifies a call: "bind" for f.XVar(&v, ...) or
// addOutputFlag(cmd, &v), with target the pointer; "unbound" for f.X("name",
// ...), which declares a flag and keeps its value in pflag; "get" for
// f.GetX("name"), with target the call's function; "" for anything else.
func flagTarget(call *ast.CallExpr) (target ast.Expr, what string) {
	if id, ok := call.Fun.(*ast.Ident); ok {
		if i, ok := flagHelpers[id.Name]; ok && i < len(call.Args) {
			return call.Args[i], "bind"
		}
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) == 0 || !isFlagSet(sel.X) {
		return nil, ""
	}
	name := strings.TrimSuffix(sel.Sel.Name, "P")
	switch {
	case strings.HasSuffix(name, "Var") && flagValueTypes.MatchString(strings.TrimSuffix(name, "Var")):
		return call.Args[0], "bind"
	case strings.HasPrefix(name, "Get") && flagValueTypes.MatchString(strings.TrimPrefix(name, "Get")):
		return call.Fun, "get"
	case flagValueTypes.MatchString(name):
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			return nil, "unbound"
		}
	}
	return nil, ""
}

// isFlagSet reports whether e is a flag set: x.Flags(), x.PersistentFlags()
// or a variable assigned one or declared a *pflag.FlagSet.
func isFlagSet(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && (sel.Sel.Name == "Flags" || sel.Sel.Name == "PersistentFlags" || sel.Sel.Name == "LocalFlags")
	case *ast.Ident:
		if e.Obj == nil {
			return false
		}
		switch d := e.Obj.Decl.(type) {
		case *ast.AssignStmt:
			for i, l := range d.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == e.Name && i < len(d.Rhs) {
					return isFlagSet(d.Rhs[i])
				}
			}
		case *ast.Field:
			star, ok := d.Type.(*ast.StarExpr)
			if !ok {
				return false
			}
			sel, ok := star.X.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "FlagSet"
		}
	}
	return false
}

// isParam reports whether e names a parameter of the function it is in.
func isParam(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok || id.Obj == nil {
		return false
	}
	_, ok = id.Obj.Decl.(*ast.Field)
	return ok
}

// isFieldAddress reports whether e is &x.field.
func isFieldAddress(e ast.Expr) bool {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return false
	}
	_, ok = u.X.(*ast.SelectorExpr)
	return ok
}

// isRootVersionFlag reports whether call is root.Flags().Bool("version",
// ...), which only keeps cobra from adding a -v shorthand: cobra reads it.
func isRootVersionFlag(call *ast.CallExpr) bool {
	lit, ok := call.Args[0].(*ast.BasicLit)
	return ok && lit.Value == `"version"`
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.UnaryExpr:
		return e.Op.String() + exprString(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "an expression"
}
