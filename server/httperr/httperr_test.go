package httperr_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/server/httperr"
)

// sentinels are the root package's sentinel errors and the status each
// is answered with; TestStatusCoversEverySentinel keeps the list whole.
var sentinels = map[string]struct {
	err  error
	want int
}{
	"ErrInvalid":        {openrecall.ErrInvalid, http.StatusBadRequest},
	"ErrNotFound":       {openrecall.ErrNotFound, http.StatusNotFound},
	"ErrIntegrity":      {openrecall.ErrIntegrity, http.StatusConflict},
	"ErrGroupDecided":   {openrecall.ErrGroupDecided, http.StatusConflict},
	"ErrPruned":         {openrecall.ErrPruned, http.StatusGone},
	"ErrFull":           {openrecall.ErrFull, http.StatusInternalServerError},
	"ErrNoSpace":        {openrecall.ErrNoSpace, http.StatusInternalServerError},
	"ErrSchemaMismatch": {openrecall.ErrSchemaMismatch, http.StatusInternalServerError},
	// A dispatcher's own condition (another process took the intent): never
	// a person's request, so a server error if it ever reached one.
	"ErrLeaseLost": {openrecall.ErrLeaseLost, http.StatusInternalServerError},
}

func TestStatus(t *testing.T) {
	for name, s := range sentinels {
		t.Run(name, func(t *testing.T) {
			if got := httperr.Status(fmt.Errorf("context: %w", s.err)); got != s.want {
				t.Errorf("Status(%s) = %d, want %d", name, got, s.want)
			}
		})
	}
	if got := httperr.Status(errors.New("disk on fire")); got != http.StatusInternalServerError {
		t.Errorf("Status(other) = %d, want 500", got)
	}
	if got := httperr.Status(&openrecall.PrunedError{AnalysisID: "a"}); got != http.StatusGone {
		t.Errorf("Status(PrunedError) = %d, want 410", got)
	}
}

// TestStatusCoversEverySentinel fails when the root package declares a
// sentinel error (var ErrX = errors.New(...)) the table above does not
// list: say what it is answered with.
func TestStatusCoversEverySentinel(t *testing.T) {
	files, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, id := range vs.Names {
				if i < len(vs.Values) && isErrorsNew(vs.Values[i]) && id.IsExported() {
					found++
					if _, ok := sentinels[id.Name]; !ok {
						t.Errorf("%s declares openrecall.%s: add it to this test's sentinels with its status", name, id.Name)
					}
				}
			}
			return true
		})
	}
	if found != len(sentinels) {
		t.Errorf("the root package declares %d sentinel errors, the table lists %d", found, len(sentinels))
	}
}

// isErrorsNew reports whether e is a call of errors.New.
func isErrorsNew(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "errors" && sel.Sel.Name == "New"
}
