package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/internal/testenv"
)

// buildBinary builds cmd/openrecall once for the end-to-end tests.
func buildBinary(t *testing.T) (bin, repo string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and drives the binary; skipped with -short")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Build(t, repo), repo
}

// TestSmoke builds the binary once and runs the whole smoke test with it:
// on the bundled example it must pass, and with a ground truth that a
// bypass contradicts it must fail.
func TestSmoke(t *testing.T) {
	bin, repo := buildBinary(t)
	t.Run("bundled example passes", func(t *testing.T) { smokePasses(t, bin, repo) })
	t.Run("wrong bypass fails", func(t *testing.T) { smokeCatchesWrongBypass(t, bin, repo) })
}

// smokePasses runs the smoke test on the bundled example: it must pass and
// print the figures line.
func smokePasses(t *testing.T, bin, repo string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-bin", bin, "-repo", repo}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("smoke exit %d, want 0\nstderr:\n%s", code, errOut.String())
	}
	for _, want := range []string{"bypass_steps=", "results=95 ", "savings="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("figures line %q lacks %q", out.String(), want)
		}
	}
}

// smokeCatchesWrongBypass gives the smoke test a ground truth in which one
// bypassed family is an attack: it must fail loudly, naming the alerts.
func smokeCatchesWrongBypass(t *testing.T, bin, repo string) {
	fake := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fake, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"queue.jsonl", "seed.jsonl", "bad.jsonl"} {
		b, err := os.ReadFile(filepath.Join(repo, "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, "examples", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	truth, err := loadTruth(filepath.Join(repo, "examples", "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range truth {
		if truth[i].Family == "batch-oom" && truth[i].Kind == kindRepeat {
			truth[i].Truth, truth[i].Kind = truthAttack, "disguised"
		}
	}
	b, err := json.Marshal(map[string]any{"alerts": truth})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "examples", "truth.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-bin", bin, "-repo", fake}, &out, &errOut)
	if code != smokeFailed {
		t.Fatalf("smoke exit %d, want %d\nstdout: %s\nstderr:\n%s", code, smokeFailed, out.String(), errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("a failed smoke test printed figures: %q", out.String())
	}
	if want := "memory bypassed an alert whose truth is attack (disguised, family batch-oom)"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
	}
}
