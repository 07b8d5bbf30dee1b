package openrecall_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/openrecall/openrecall"

// layer says what a package may import beyond the standard library.
type layer struct {
	module   []string // module packages (relative: "" is the root)
	external []string // module path prefixes outside the module
}

// layers fixes the dependency directions of STYLE.md: the root imports
// nothing of the module; stage packages import only the root; memory is the
// only package that imports a database driver; concrete adapters are wired
// only by the command, the evaluation and the scripts.
var layers = map[string]layer{
	"":                    {external: []string{"golang.org/x/text"}},
	"fingerprint":         {module: []string{"", "fingerprint/attack", "fingerprint/product"}, external: []string{"go.yaml.in/yaml/v3"}},
	"fingerprint/attack":  {},
	"fingerprint/product": {},
	"triage":              {module: []string{""}},
	"routing":             {module: []string{"", "internal/jsonfast"}},
	"costcurve":           {module: []string{""}},
	"audit":               {module: []string{""}},
	"intake":              {module: []string{"", "fingerprint/product", "intake/sender", "internal/jsonfast"}},
	"intake/sender":       {module: []string{""}, external: []string{"github.com/expr-lang/expr", "go.yaml.in/yaml/v3"}},
	"memory":              {module: []string{"", "internal/jsonfast"}, external: []string{"github.com/mattn/go-sqlite3", "github.com/jackc/pgx/v5", "go.uber.org/zap"}},
	"model/local":         {module: []string{"", "internal/jsonfast", "routing"}},
	"model/openai":        {module: []string{"", "routing"}, external: []string{"github.com/openai/openai-go/v3"}},
	"model/openai/fake":   {},
	"workflow":            {module: []string{"", "audit", "costcurve", "intake", "routing", "triage"}, external: []string{"go.uber.org/zap"}},
	"config":              {module: []string{"", "routing", "triage"}, external: []string{"go.yaml.in/yaml/v3"}},
	"examples":            {module: []string{""}},
	"internal/rulecorpus": {},
	// The sender a team adds, for the tests of intake and server.
	"internal/sendertest":    {module: []string{"", "intake/sender"}},
	"internal/fakereceivers": {},
	"server":                 {module: []string{"", "chat/slack", "intake", "intake/sender", "server/cockpit", "server/httperr", "server/routemux", "usecase", "workflow"}, external: []string{"go.uber.org/zap", "github.com/prometheus/client_golang"}},
	// serve's work beside the HTTP server: the inbox's drain, pruning,
	// leases, the webhook. The server consumes it through its own
	// interface, and neither imports the other.
	"runner": {module: []string{"", "costcurve", "intake", "notify", "usecase", "workflow"}, external: []string{"go.uber.org/zap"}},
	// The outbound path (DESIGN §12b): the route tree that chooses who
	// hears of a result.
	"notify": {module: []string{""}, external: []string{"go.yaml.in/yaml/v3"}},
	// Deciding from chat (DESIGN §12c): Slack's request signatures, its
	// interaction payloads and the Web API methods the endpoint calls; its
	// secrets are notify's.
	"chat/slack": {module: []string{"", "notify"}, external: []string{"go.yaml.in/yaml/v3"}},
	// The cockpit: the web UI, an adapter over the application layer.
	"server/cockpit": {module: []string{"", "costcurve", "server/httperr", "server/routemux", "usecase"}},
	// The one mapping of the domain's errors to HTTP statuses, for the API
	// and the cockpit.
	"server/httperr": {module: []string{""}},
	// An http.ServeMux that lists its routes, for the API and the cockpit.
	"server/routemux": {},
	// The application layer: the use cases every interface calls, over
	// storage it declares as interfaces (no concrete adapter).
	"usecase": {module: []string{"", "audit", "costcurve", "intake", "workflow"}},

	// The security detection corpus renderer (tests only).
	"internal/detectcorpus": {},
	// Figures of the corpus tests for make test (tests only).
	"internal/figures": {},
	// What a test does when a data file or a program it needs is missing,
	// how long its liveness waits last, the binary's build (tests only).
	"internal/testenv": {},
	// Issue 33's probe of a running serve (scripts/probe, tests/reliability):
	// it reads payloads as serve does to judge shared ids.
	"internal/probe": {module: []string{"", "intake", "intake/sender"}},
	// The PostgreSQL server tests run against, a schema per test (tests
	// and benchmarks only; it creates and drops schemas itself).
	"internal/pgtest": {external: []string{"github.com/jackc/pgx/v5"}},
	// Where a test's memory lives on the backend under test, keyed and
	// sealed as the commands key and seal it (tests only).
	"internal/storetest": {module: []string{"audit", "fingerprint", "internal/pgtest", "memory"}, external: []string{"github.com/jackc/pgx/v5"}},
	// The JSON encoders of the domain types (generated from their tags)
	// and the string decoder.
	"internal/jsonfast": {module: []string{""}},
	// The generator of jsonfast's domain encoders (go generate).
	"internal/jsonfast/gen": {module: []string{""}},
}

// wiring packages may import anything of the module.
var wiring = []string{"cmd/openrecall", "internal/compose", "eval", "scripts/smoke", "scripts/e2ellm", "scripts/bench", "scripts/bench/benchkit", "scripts/bench/queuegen", "scripts/benchcompare", "scripts/benchserve", "scripts/probe", "scripts/e2e/alertmanager", "scripts/e2e/e2eproc", "scripts/fakereceivers", "scripts/e2e/notify", "scripts/e2e/chat", "scripts/mutants", "tests/property", "tests/property/gen", "tests/property/pbt", "tests/reliability", "tests/benchmarks/templates"}

type pkgFiles struct {
	dir   string
	fset  *token.FileSet
	files []*ast.File
	names []string
}

func modulePackages(t *testing.T) []pkgFiles {
	t.Helper()
	var pkgs []pkgFiles
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if base := d.Name(); path != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "bin" || base == "node_modules") {
			return filepath.SkipDir
		}
		// A module of its own (scripts/image) is not this module's.
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
			return filepath.SkipDir
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		p := pkgFiles{dir: filepath.ToSlash(path), fset: token.NewFileSet()}
		if p.dir == "." {
			p.dir = ""
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(p.fset, filepath.Join(path, n), nil, parser.ParseComments)
			if err != nil {
				return err
			}
			p.files = append(p.files, f)
			p.names = append(p.names, n)
		}
		if len(p.files) > 0 {
			pkgs = append(pkgs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestImportDirections keeps the layering of the module true.
func TestImportDirections(t *testing.T) {
	for _, p := range modulePackages(t) {
		if slices.Contains(wiring, p.dir) {
			continue
		}
		l, ok := layers[p.dir]
		if !ok {
			t.Errorf("package %q has no layer in arch_test.go: say what it may import", p.dir)
			continue
		}
		for i, f := range p.files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				where := filepath.Join(p.dir, p.names[i])
				switch {
				case path == "database/sql" && p.dir != "memory" && p.dir != "internal/pgtest" && p.dir != "internal/storetest":
					t.Errorf("%s imports database/sql: only memory (and the tests' schema maker) talks to the database", where)
				case path == module || strings.HasPrefix(path, module+"/"):
					rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
					if !slices.Contains(l.module, rel) {
						t.Errorf("%s imports %s: package %q may import only %q of the module", where, path, p.dir, l.module)
					}
				case strings.Contains(strings.Split(path, "/")[0], "."):
					if !slices.ContainsFunc(l.external, func(prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }) {
						t.Errorf("%s imports %s: not allowed for package %q (allowed: %q)", where, path, p.dir, l.external)
					}
				}
			}
		}
	}
}

// TestDocComments requires a package doc comment everywhere, and a doc
// comment that starts with the name on every exported name of library
// packages.
func TestDocComments(t *testing.T) {
	for _, p := range modulePackages(t) {
		dp, err := doc.NewFromFiles(p.fset, p.files, module+"/"+p.dir)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(dp.Doc) == "" {
			t.Errorf("package %q has no package doc comment", p.dir)
		}
		if dp.Name == "main" {
			continue
		}
		check := func(name, text string) {
			if !strings.HasPrefix(text, name+" ") && !strings.HasPrefix(text, "Deprecated") {
				t.Errorf("%s: exported %s: doc comment %q does not start with its name", p.dir, name, firstLine(text))
			}
		}
		for _, f := range dp.Funcs {
			check(f.Name, f.Doc)
		}
		for _, typ := range dp.Types {
			check(typ.Name, typ.Doc)
			for _, f := range typ.Funcs {
				check(f.Name, f.Doc)
			}
			for _, m := range typ.Methods {
				if ast.IsExported(m.Name) {
					check(m.Name, m.Doc)
				}
			}
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
