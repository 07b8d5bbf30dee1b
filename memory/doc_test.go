package memory

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestExportedNamesDocumented fails when an exported name of the package
// lacks a doc comment that starts with its name.
func TestExportedNamesDocumented(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg := pkgs["memory"]
	if pkg == nil {
		t.Fatal("package memory not found")
	}
	check := func(name string, doc *ast.CommentGroup, pos token.Pos) {
		if !ast.IsExported(name) {
			return
		}
		if doc == nil || !strings.HasPrefix(doc.Text(), name+" ") {
			t.Errorf("%s: %s has no doc comment starting with its name", fset.Position(pos), name)
		}
	}
	hasPackageDoc := false
	for _, f := range pkg.Files {
		hasPackageDoc = hasPackageDoc || f.Doc != nil
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				check(d.Name.Name, d.Doc, d.Pos())
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						doc := sp.Doc
						if doc == nil {
							doc = d.Doc
						}
						check(sp.Name.Name, doc, sp.Pos())
					case *ast.ValueSpec:
						doc := sp.Doc
						if doc == nil {
							doc = d.Doc
						}
						for _, n := range sp.Names {
							check(n.Name, doc, n.Pos())
						}
					}
				}
			}
		}
	}
	if !hasPackageDoc {
		t.Error("package memory has no package doc comment")
	}
}
