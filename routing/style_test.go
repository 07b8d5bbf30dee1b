package routing_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkPackageStyle fails when a non-test file of the package in dir has an
// exported name without a doc comment that starts with the name, or imports
// something beyond the standard library and the allowed module packages.
func checkPackageStyle(t *testing.T, dir string, allowed ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && !contains(allowed, p) {
				t.Errorf("%s imports %s; allowed beyond the standard library: %v", path, p, allowed)
			}
		}
		doc := func(name string, cg *ast.CommentGroup, pos token.Pos) {
			if !ast.IsExported(name) {
				return
			}
			if cg == nil || !strings.HasPrefix(cg.Text(), name+" ") {
				t.Errorf("%s: exported %s lacks a doc comment starting with its name", fset.Position(pos), name)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				doc(d.Name.Name, d.Doc, d.Pos())
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						cg := s.Doc
						if cg == nil {
							cg = d.Doc
						}
						doc(s.Name.Name, cg, s.Pos())
					case *ast.ValueSpec:
						if d.Doc != nil && s.Doc == nil && len(d.Specs) > 1 {
							continue // a documented group of constants
						}
						cg := s.Doc
						if cg == nil {
							cg = d.Doc
						}
						for _, n := range s.Names {
							doc(n.Name, cg, s.Pos())
						}
					}
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
		t.Errorf("%s has no doc.go", dir)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestPackageStyle(t *testing.T) {
	t.Run("routing", func(t *testing.T) { checkPackageStyle(t, ".", "github.com/openrecall/openrecall") })
	t.Run("model/local", func(t *testing.T) {
		checkPackageStyle(t, "../model/local", "github.com/openrecall/openrecall", "github.com/openrecall/openrecall/routing")
	})
}
