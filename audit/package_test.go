package audit

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPackageRules checks the house rules this stage package lives by: it
// imports only the root package and the standard library, and every
// exported name has a doc comment that starts with its name.
func TestPackageRules(t *testing.T) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != "github.com/openrecall/openrecall" && strings.Contains(strings.Split(path, "/")[0], ".") {
				t.Errorf("%s imports %s: a stage package imports only the root package and the standard library", name, path)
			}
		}
	}
	pkg, err := doc.NewFromFiles(fset, mapValues(files), "github.com/openrecall/openrecall/audit")
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Doc == "" {
		t.Errorf("package audit has no doc comment")
	}
	check := func(name, text string) {
		if !strings.HasPrefix(text, name+" ") {
			t.Errorf("%s: doc comment %q does not start with its name", name, text)
		}
	}
	for _, f := range pkg.Funcs {
		check(f.Name, f.Doc)
	}
	for _, typ := range pkg.Types {
		check(typ.Name, typ.Doc)
		for _, f := range typ.Funcs {
			check(f.Name, f.Doc)
		}
		for _, m := range typ.Methods {
			check(m.Name, m.Doc)
		}
	}
}

func mapValues(m map[string]*ast.File) []*ast.File {
	out := make([]*ast.File, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	return out
}
