// Package figures lets corpus tests report their measured figures to the
// person running make test: a line written with Report is appended to the
// file OPENRECALL_FIGURES names (make test prints it at the end), and
// logged to the test either way. The package imports only the standard
// library and the testing package.
package figures

import (
	"fmt"
	"os"
	"testing"
)

// Report logs a figure line to t and appends it to the OPENRECALL_FIGURES
// file when that variable is set.
func Report(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	path := os.Getenv("OPENRECALL_FIGURES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("figures: %v", err)
		return
	}
	if _, err := fmt.Fprintf(f, "  %s: %s\n", t.Name(), line); err != nil {
		t.Errorf("figures: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("figures: %v", err)
	}
}
