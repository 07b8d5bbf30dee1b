package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

// TestE2ELLMCatchesWrongProducts runs the driver end to end against
// mock-llm: on the real binary it must pass; on a wrong product (a wrapper
// around the real binary that misprices baselines or prices, or hides the
// rate-limited attempt from the audit trail) it must fail, saying what is
// wrong. It needs node and npm (and, once, the npm registry); .ci/run
// installs them, so in CI their absence fails the test.
func TestE2ELLMCatchesWrongProducts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs mock-llm; skipped with -short")
	}
	testenv.Tools(t, ".ci/run installs node and npm", "node", "npm")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := testenv.Build(t, repo)
	dir := t.TempDir()
	// wrapper writes an executable script standing for a wrong product.
	wrapper := func(name, script string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/bash\nreal="+bin+"\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// withConfig is the real binary run with a configuration file.
	withConfig := func(name, yaml string) string {
		cfg := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return wrapper(name, `exec "$real" --config `+cfg+` "$@"`+"\n")
	}
	tests := []struct {
		name, bin, want string
	}{
		{"real product passes", bin, ""},
		{"baselines priced at the completion cap", withConfig("cap", "models:\n  strong_expected_completion_tokens: 800\n"),
			"bypass with cost $0.000000 and baseline"},
		{"a price table that is not the list price", withConfig("price", "prices:\n  gpt-4o:\n    input_per_million_usd: 2.75\n    output_per_million_usd: 10\n"),
			"strong step billed 1200/200 tokens $0.005300"},
		{"the rate-limited attempt missing from the audit trail", wrapper("ledger", `case " $* " in
*" audit show -o jsonl "*)
  "$real" "$@" | grep -v '"outcome":"retried"'
  exit "${PIPESTATUS[0]}" ;;
esac
exec "$real" "$@"
`), "the audit trail of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), options{bin: tt.bin, dir: filepath.Join(repo, ".e2e-llm"),
				rules: filepath.Join(repo, "scripts", "e2ellm", "mock-llm.yaml"), queue: filepath.Join(repo, "examples", "queue.jsonl"), out: &out})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("the real product fails: %v\n%s", err, out.String())
			case tt.want == "" && !strings.Contains(out.String(), "ledger of"):
				t.Errorf("the real product passes without its report:\n%s", out.String())
			case tt.want != "" && err == nil:
				t.Fatalf("a wrong product passes:\n%s", out.String())
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("a wrong product fails for another reason: %v; want %q", err, tt.want)
			}
		})
	}
}
