package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/triage"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default configuration text.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// Triage holds the triage thresholds.
type Triage struct {
	StrongMatch      float64 `yaml:"strong_match"`
	Consistency      float64 `yaml:"consistency"`
	BypassConfidence float64 `yaml:"bypass_confidence"`
	GateConfidence   float64 `yaml:"gate_confidence"`
	RecallLimit      int     `yaml:"recall_limit"`
}

// Models names the model tiers and, for the openai provider, the server
// they run on.
type Models struct {
	Provider        string `yaml:"provider"`
	Cheap           string `yaml:"cheap"`
	Strong          string `yaml:"strong"`
	CheapMaxTokens  int    `yaml:"cheap_max_tokens"`
	StrongMaxTokens int    `yaml:"strong_max_tokens"`
	// StrongExpectedCompletionTokens is the strong model's expected
	// completion until the memory has recorded strong completions of its
	// own (their running mean then wins). It prices the baseline.
	StrongExpectedCompletionTokens int `yaml:"strong_expected_completion_tokens"`
	// BaseURL is the OpenAI-compatible server's API root.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the API key: the
	// key itself is never in a configuration file.
	APIKeyEnv string `yaml:"api_key_env"`
	// Timeout caps one attempt of one call.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetries is how many times a failed attempt is retried.
	MaxRetries int `yaml:"max_retries"`
	// Concurrency caps the model calls in flight.
	Concurrency int `yaml:"concurrency"`
}

// Model providers.
const (
	ProviderLocal  = "local"
	ProviderOpenAI = "openai"
)

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validate checks the models section.
func (m Models) validate() error {
	switch m.Provider {
	case ProviderLocal:
		return nil
	case ProviderOpenAI:
	default:
		return fmt.Errorf("models.provider %q: want \"local\" (the embedded deterministic analyst) or \"openai\" (any OpenAI-compatible server): %w", m.Provider, openrecall.ErrInvalid)
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("models.base_url %q: want http(s)://host[:port]/v1: %w", m.BaseURL, openrecall.ErrInvalid)
	}
	if u.User != nil {
		return fmt.Errorf("models.base_url: put no credentials in the URL; name the key's environment variable in models.api_key_env: %w", openrecall.ErrInvalid)
	}
	for _, t := range []struct{ key, name string }{{"models.cheap", m.Cheap}, {"models.strong", m.Strong}} {
		if strings.TrimSpace(t.name) == "" || strings.HasPrefix(t.name, "local-") {
			return fmt.Errorf("%s %q: with the openai provider, name the server's model (such as gpt-4o-mini or llama3.1:8b): %w", t.key, t.name, openrecall.ErrInvalid)
		}
	}
	if !envName.MatchString(m.APIKeyEnv) {
		return fmt.Errorf("models.api_key_env %q: want the name of an environment variable (the key itself never goes in the configuration): %w", m.APIKeyEnv, openrecall.ErrInvalid)
	}
	if m.Timeout < time.Second || m.Timeout > time.Hour {
		return fmt.Errorf("models.timeout %s must be between 1s and 1h: %w", m.Timeout, openrecall.ErrInvalid)
	}
	if m.MaxRetries < 0 || m.MaxRetries > 20 {
		return fmt.Errorf("models.max_retries %d must be between 0 and 20: %w", m.MaxRetries, openrecall.ErrInvalid)
	}
	if m.Concurrency < 1 || m.Concurrency > 1024 {
		return fmt.Errorf("models.concurrency %d must be between 1 and 1024: %w", m.Concurrency, openrecall.ErrInvalid)
	}
	return nil
}

// Price is one model's price in dollars per million tokens.
type Price struct {
	InputPerMillionUSD  float64 `yaml:"input_per_million_usd"`
	OutputPerMillionUSD float64 `yaml:"output_per_million_usd"`
}

// Grouping configures alert groups (DESIGN §6a).
type Grouping struct {
	// Enabled groups the firings of one alert under one analysis.
	Enabled bool `yaml:"enabled"`
	// Window is how far a firing may be from its group's last one.
	Window time.Duration `yaml:"window"`
}

// Exceptions configures exceptions (DESIGN §6b).
type Exceptions struct {
	// MaxExpiry caps how far ahead an exception a person approves or
	// writes may expire.
	MaxExpiry time.Duration `yaml:"max_expiry"`
}

// Senders configures the senders teams add (DESIGN §3, "Senders as
// data").
type Senders struct {
	// Dir is a directory of mapping files (*.yaml, *.yml), each adding a
	// sender or overriding a built-in one; read and validated at the start
	// of every command that reads alerts. Empty means the built-in senders
	// alone. A leading "~/" is the user's home directory.
	Dir string `yaml:"dir"`
}

// Path returns Dir with a leading "~/" made the user's home directory.
func (s Senders) Path() string {
	if strings.HasPrefix(s.Dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, s.Dir[2:])
		}
	}
	return s.Dir
}

// Validate checks that Dir, when set, is a directory that exists: a
// mistyped directory is an error at start, never a sender silently
// missing.
func (s Senders) Validate() error { return s.ValidateAs("senders.dir") }

// ValidateAs is Validate naming the directory as key ("senders.dir", or a
// flag that overrides it: "--senders").
func (s Senders) ValidateAs(key string) error {
	if s.Dir == "" {
		return nil
	}
	fi, err := os.Stat(s.Path())
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %q: no such directory: %w", key, s.Dir, openrecall.ErrInvalid)
	case err != nil:
		return fmt.Errorf("%s %q: %w", key, s.Dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %q is not a directory (name the directory of the mapping files): %w", key, s.Dir, openrecall.ErrInvalid)
	}
	return nil
}

// Config is the whole configuration.
type Config struct {
	DB         string           `yaml:"db"`
	Rules      string           `yaml:"rules"`
	Senders    Senders          `yaml:"senders"`
	Triage     Triage           `yaml:"triage"`
	Grouping   Grouping         `yaml:"grouping"`
	Exceptions Exceptions       `yaml:"exceptions"`
	Models     Models           `yaml:"models"`
	BudgetUSD  float64          `yaml:"budget_usd"`
	Prices     map[string]Price `yaml:"prices"`
	Server     Server           `yaml:"server"`
	// Notify is the notify: section as written, read by notify.ReadSettings
	// when serve starts (its secrets are read then, not at load), with
	// errors that name its lines.
	Notify yaml.Node `yaml:"notify"`
	// Chat is the chat: section as written (deciding from Slack, DESIGN
	// §12c), read by slack.ReadConfig when serve starts and by config
	// check, with errors that name its lines.
	Chat yaml.Node `yaml:"chat"`
}

// Default returns the embedded defaults.
func Default() (Config, error) {
	var c Config
	if err := decode(bytes.NewReader(defaultYAML), &c); err != nil {
		return Config{}, fmt.Errorf("embedded default config: %w", err)
	}
	return c, nil
}

// Load returns the defaults overlaid by the YAML file at path; an empty path
// returns the defaults. Keys the file leaves out keep their defaults.
func Load(path string) (Config, error) {
	c, err := Default()
	if err != nil {
		return Config{}, err
	}
	if path == "" {
		return c, c.Validate()
	}
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := decode(f, &c); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

func decode(r io.Reader, c *Config) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return explainYAML(err)
	}
	return nil
}

// unknownField matches the YAML decoder's message for a key that no field
// takes, which names the Go type rather than the key's place in the file.
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type config\.(\w+)$`)

// explainYAML rewrites unknown-key errors to name the YAML key by its path
// in the file ("line 2: unknown key triage.bypas_confidence").
func explainYAML(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	sections := yamlSections()
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if g := unknownField.FindStringSubmatch(m); g != nil {
			key := g[2]
			if sec, ok := sections[g[3]]; ok {
				key = sec + "." + key
			}
			m = fmt.Sprintf("line %s: unknown key %s (a typo? 'openrecall config defaults' lists every key)", g[1], key)
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// yamlSections maps the Go type of each section of Config to its YAML
// path: "Triage" → "triage", "Price" → "prices.<name>".
func yamlSections() map[string]string {
	out := map[string]string{}
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch ft := f.Type; ft.Kind() {
		case reflect.Struct:
			out[ft.Name()] = name
		case reflect.Map:
			if ft.Elem().Kind() == reflect.Struct {
				out[ft.Elem().Name()] = name + ".<name>"
			}
		}
	}
	return out
}

// Validate checks every value and names the first bad key.
func (c Config) Validate() error {
	t := c.Triage
	if !(t.StrongMatch > openrecall.MinStrongThreshold && t.StrongMatch <= 1) {
		return fmt.Errorf("triage.strong_match %v must be above %.2f and at most 1: at or below %.2f a match that differs in error class, service role, environment or attack pattern would count as strong: %w",
			t.StrongMatch, openrecall.MinStrongThreshold, openrecall.MinStrongThreshold, openrecall.ErrInvalid)
	}
	for key, v := range map[string]float64{"triage.consistency": t.Consistency, "triage.bypass_confidence": t.BypassConfidence, "triage.gate_confidence": t.GateConfidence} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%s %v must be between 0 and 1: %w", key, v, openrecall.ErrInvalid)
		}
	}
	if t.RecallLimit < 1 || t.RecallLimit > 1000 {
		return fmt.Errorf("triage.recall_limit %d must be between 1 and 1000: %w", t.RecallLimit, openrecall.ErrInvalid)
	}
	if err := c.TriageConfig().Validate(); err != nil {
		return fmt.Errorf("triage: %w", err)
	}
	if c.Grouping.Window < time.Second || c.Grouping.Window > 7*24*time.Hour {
		return fmt.Errorf("grouping.window %s must be between 1s and 168h: %w", c.Grouping.Window, openrecall.ErrInvalid)
	}
	if c.Exceptions.MaxExpiry < time.Hour || c.Exceptions.MaxExpiry > 3650*24*time.Hour {
		return fmt.Errorf("exceptions.max_expiry %s must be between 1h and 87600h: %w", c.Exceptions.MaxExpiry, openrecall.ErrInvalid)
	}
	if c.BudgetUSD < 0 || math.IsNaN(c.BudgetUSD) || math.IsInf(c.BudgetUSD, 0) {
		return fmt.Errorf("budget_usd %v must be a non-negative number: %w", c.BudgetUSD, openrecall.ErrInvalid)
	}
	if err := c.Models.validate(); err != nil {
		return err
	}
	for name, v := range map[string]int{
		"models.cheap_max_tokens": c.Models.CheapMaxTokens, "models.strong_max_tokens": c.Models.StrongMaxTokens,
		"models.strong_expected_completion_tokens": c.Models.StrongExpectedCompletionTokens,
	} {
		if v < 1 || v > 1_000_000 {
			return fmt.Errorf("%s %d must be between 1 and 1000000: %w", name, v, openrecall.ErrInvalid)
		}
	}
	if err := c.Server.Validate(); err != nil {
		return err
	}
	if err := c.Senders.Validate(); err != nil {
		return err
	}
	for model, p := range c.Prices {
		if p.InputPerMillionUSD < 0 || p.OutputPerMillionUSD < 0 || math.IsNaN(p.InputPerMillionUSD) || math.IsNaN(p.OutputPerMillionUSD) {
			return fmt.Errorf("prices.%s must be non-negative: %w", model, openrecall.ErrInvalid)
		}
	}
	return nil
}

// TriageConfig returns the triage thresholds as the triage package takes them.
func (c Config) TriageConfig() triage.Config {
	return triage.Config{
		StrongMatch:      c.Triage.StrongMatch,
		Consistency:      c.Triage.Consistency,
		BypassConfidence: c.Triage.BypassConfidence,
		GateConfidence:   c.Triage.GateConfidence,
		RecallLimit:      c.Triage.RecallLimit,
	}
}

// PriceTable returns the default price table with this configuration's
// prices laid over it, in nano-dollars per million tokens.
func (c Config) PriceTable() routing.Prices {
	p := routing.DefaultPrices()
	for model, v := range c.Prices {
		p[model] = routing.Price{
			InputPerMillion:  openrecall.DollarsToNano(v.InputPerMillionUSD),
			OutputPerMillion: openrecall.DollarsToNano(v.OutputPerMillionUSD),
		}
	}
	return p
}

// Budget returns the run budget in nano-dollars; 0 means none.
func (c Config) Budget() openrecall.NanoUSD { return openrecall.DollarsToNano(c.BudgetUSD) }

// DefaultDBPath returns the default memory database file in the user's data
// directory.
func DefaultDBPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "openrecall", "memory.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the user's data directory: %w", err)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "openrecall", "memory.db"), nil
	}
	return filepath.Join(home, ".local", "share", "openrecall", "memory.db"), nil
}
