package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "openrecall.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultsMatchTheTriagePackage(t *testing.T) {
	c, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.TriageConfig(), triage.DefaultConfig(); got != want {
		t.Errorf("embedded triage defaults %+v, triage.DefaultConfig %+v: keep them in step", got, want)
	}
	if c.Budget() != 0 || c.Models.Provider != "local" {
		t.Errorf("defaults: budget %s provider %q", c.Budget(), c.Models.Provider)
	}
	if c.Models.StrongExpectedCompletionTokens != routing.DefaultExpectedCompletionTokens {
		t.Errorf("embedded strong_expected_completion_tokens %d, routing.DefaultExpectedCompletionTokens %d: keep them in step",
			c.Models.StrongExpectedCompletionTokens, routing.DefaultExpectedCompletionTokens)
	}
}

func TestFileOverlaysDefaults(t *testing.T) {
	p := writeConfig(t, `
triage:
  recall_limit: 25
budget_usd: 1.25
prices:
  gpt-4o:
    input_per_million_usd: 2.5
    output_per_million_usd: 10
  my-model:
    input_per_million_usd: 0.000001
    output_per_million_usd: 0
`)
	c, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Triage.RecallLimit != 25 || c.Triage.StrongMatch != triage.DefaultStrongMatch {
		t.Errorf("overlay: recall_limit %d (want 25), strong_match %v (want the default kept)", c.Triage.RecallLimit, c.Triage.StrongMatch)
	}
	if c.Budget() != 1_250_000_000 {
		t.Errorf("budget %d nano-dollars, want 1250000000", c.Budget())
	}
	prices := c.PriceTable()
	if got := prices["gpt-4o"]; got.InputPerMillion != 2_500_000_000 || got.OutputPerMillion != 10_000_000_000 {
		t.Errorf("gpt-4o price %+v", got)
	}
	if got := prices["my-model"]; got.InputPerMillion != 1_000 {
		t.Errorf("my-model input %d nano-dollars per million, want 1000", got.InputPerMillion)
	}
	if _, ok := prices["gpt-4o-mini"]; !ok {
		t.Error("the built-in price table was replaced instead of extended")
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown key", "triage:\n  strong_mach: 0.9\n", "strong_mach"},
		{"strong match too low", "triage:\n  strong_match: 0.8\n", "triage.strong_match"},
		{"consistency above 1", "triage:\n  consistency: 1.5\n", "triage.consistency"},
		{"recall limit 0", "triage:\n  recall_limit: 0\n", "triage.recall_limit"},
		{"negative budget", "budget_usd: -1\n", "budget_usd"},
		{"unknown provider", "models:\n  provider: magic\n", "models.provider"},
		{"zero tokens", "models:\n  strong_max_tokens: 0\n", "models.strong_max_tokens"},
		{"zero expected completion", "models:\n  strong_expected_completion_tokens: 0\n", "models.strong_expected_completion_tokens"},
		{"the removed classification key", "models:\n  fingerprint_max_tokens: 120\n", "fingerprint_max_tokens"},
		{"negative price", "prices:\n  x:\n    input_per_million_usd: -1\n", "prices.x"},
		{"not yaml", "triage: [", "yaml"},
		{"openai without model names", "models:\n  provider: openai\n", "models.cheap"},
		{"openai base url not http", openai + "  base_url: 127.0.0.1:11434/v1\n", "models.base_url"},
		{"credentials in the base url", openai + "  base_url: https://u:pw@api.example.com/v1\n", "no credentials"},
		{"api key in place of its variable", openai + "  api_key_env: sk-abc123\n", "models.api_key_env"},
		{"timeout too short", openai + "  timeout: 10ms\n", "models.timeout"},
		{"timeout not a duration", openai + "  timeout: soon\n", "timeout"},
		{"negative retries", openai + "  max_retries: -1\n", "models.max_retries"},
		{"zero concurrency", openai + "  concurrency: 0\n", "models.concurrency"},
		{"unknown models key", "models:\n  api_key: sk-123\n", "api_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(writeConfig(t, tt.text))
			if err == nil {
				t.Fatal("loaded a bad config")
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.want)) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

func TestInvalidValuesWrapErrInvalid(t *testing.T) {
	_, err := config.Load(writeConfig(t, "budget_usd: -3\n"))
	if !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("err = %v, want it to wrap openrecall.ErrInvalid", err)
	}
}

func TestMissingFile(t *testing.T) {
	if _, err := config.Load(filepath.Join(t.TempDir(), "absent.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want a not-exist error", err)
	}
}

func TestDefaultDBPathHonoursXDG(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	p, err := config.DefaultDBPath()
	if err != nil || p != "/data/openrecall/memory.db" {
		t.Errorf("DefaultDBPath = %q, %v", p, err)
	}
}

// openai is the start of a valid openai models section.
const openai = "models:\n  provider: openai\n  cheap: gpt-4o-mini\n  strong: gpt-4o\n"

func TestOpenAIProviderConfig(t *testing.T) {
	c, err := config.Load(writeConfig(t, openai+"  base_url: http://127.0.0.1:11434/v1\n  api_key_env: OLLAMA_KEY\n  timeout: 90s\n  max_retries: 0\n  concurrency: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models
	if m.Provider != config.ProviderOpenAI || m.BaseURL != "http://127.0.0.1:11434/v1" || m.APIKeyEnv != "OLLAMA_KEY" ||
		m.Timeout != 90*time.Second || m.MaxRetries != 0 || m.Concurrency != 2 || m.Cheap != "gpt-4o-mini" {
		t.Fatalf("models %+v", m)
	}
	d, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	if d.Models.APIKeyEnv != "OPENAI_API_KEY" || d.Models.MaxRetries != 3 || d.Models.Timeout != time.Minute || d.Models.BaseURL != "https://api.openai.com/v1" {
		t.Fatalf("defaults %+v", d.Models)
	}
}

// TestUnknownKeyNamedByItsYAMLPath: a typo names the key as written in the
// file, with its section and line, not the Go type that has no such field.
func TestUnknownKeyNamedByItsYAMLPath(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"triage:\n  bypas_confidence: 0.9\n", "line 2: unknown key triage.bypas_confidence"},
		{"budget_us: 1\n", "line 1: unknown key budget_us"},
		{"prices:\n  strong:\n    input_per_milion_usd: 1\n", "line 3: unknown key prices.<name>.input_per_milion_usd"},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := config.Load(path)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "config.Triage") {
			t.Errorf("%q: err = %v, want it to say %q", tt.yaml, err, tt.want)
		}
	}
}

// TestSendersDir: senders.dir names a directory of mapping files; empty
// (the default) means the built-in senders alone; one that does not exist,
// or a file, is an error at load that names it; a typo under senders is
// named by its path; "~/" is the user's home.
func TestSendersDir(t *testing.T) {
	d, err := config.Default()
	if err != nil || d.Senders.Dir != "" {
		t.Fatalf("default senders.dir %q, %v; want empty", d.Senders.Dir, err)
	}
	dir := t.TempDir()
	c, err := config.Load(writeConfig(t, "senders:\n  dir: "+dir+"\n"))
	if err != nil || c.Senders.Dir != dir || c.Senders.Path() != dir {
		t.Fatalf("senders.dir %q (path %q), %v; want %q", c.Senders.Dir, c.Senders.Path(), err, dir)
	}
	file := filepath.Join(dir, "acme.yaml")
	if err := os.WriteFile(file, []byte("name: acme\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-dir")
	for _, tt := range []struct{ yaml, want string }{
		{"senders:\n  dir: " + missing + "\n", `senders.dir "` + missing + `": no such directory`},
		{"senders:\n  dir: " + file + "\n", `senders.dir "` + file + `" is not a directory`},
		{"senders:\n  directory: " + dir + "\n", "line 2: unknown key senders.directory"},
	} {
		_, err := config.Load(writeConfig(t, tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want it to say %q", tt.yaml, err, tt.want)
		}
	}
	if _, err := config.Load(writeConfig(t, "senders:\n  dir: "+missing+"\n")); !errors.Is(err, openrecall.ErrInvalid) {
		t.Errorf("a missing senders.dir: %v, want ErrInvalid", err)
	}
	t.Setenv("HOME", dir)
	if got := (config.Senders{Dir: "~/senders"}).Path(); got != filepath.Join(dir, "senders") {
		t.Errorf("~/senders is %q, want it under the home directory", got)
	}
	if err := (config.Senders{Dir: missing}).ValidateAs("--senders"); err == nil || !strings.HasPrefix(err.Error(), `--senders "`) {
		t.Errorf("ValidateAs(--senders): %v, want the flag named", err)
	}
}
