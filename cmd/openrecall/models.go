package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/model/openai"
	"github.com/openrecall/openrecall/routing"
)

// modelFlags are the provider flags of analyze, eval and serve; an empty value
// leaves the configuration's.
type modelFlags struct {
	provider, baseURL, cheap, strong string
}

func (m *modelFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&m.provider, "provider", "", "model provider: local (the embedded deterministic analyst) or openai (any OpenAI-compatible server); default: the config's models.provider")
	f.StringVar(&m.baseURL, "base-url", "", "the OpenAI-compatible server's API root, such as http://127.0.0.1:11434/v1 (models.base_url)")
	f.StringVar(&m.cheap, "cheap-model", "", "the cheap tier's model name on the server (models.cheap)")
	f.StringVar(&m.strong, "strong-model", "", "the strong tier's model name on the server (models.strong)")
}

// apply lays the flags over cfg and validates the result; a bad value is a
// usage error.
func (m *modelFlags) apply(cfg *config.Config) error {
	if *m == (modelFlags{}) {
		return nil
	}
	for _, f := range []struct {
		v   string
		dst *string
	}{{m.provider, &cfg.Models.Provider}, {m.baseURL, &cfg.Models.BaseURL}, {m.cheap, &cfg.Models.Cheap}, {m.strong, &cfg.Models.Strong}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("model flags: %v", err)
	}
	return nil
}

// liveMode is the mode of a run on an OpenAI-compatible server: its label
// says the calls are live and where they go.
func liveMode(baseURL string) openrecall.Mode {
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return openrecall.Mode{Memory: "sqlite", Model: "openai (live: " + host + ")"}
}

// models returns the two tiers the configuration names and the mode they
// make.
func (a *app) models(cfg config.Config) (cheap, strong routing.Model, mode openrecall.Mode, err error) {
	switch cfg.Models.Provider {
	case config.ProviderOpenAI:
		key := os.Getenv(cfg.Models.APIKeyEnv)
		cheap, strong, err = openaiModels(cfg.Models, cfg.Models.BaseURL, key, nil)
		return cheap, strong, liveMode(cfg.Models.BaseURL), err
	case config.ProviderLocal, "":
		return local.NewCheap(), local.NewStrong(), openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, nil
	}
	return nil, nil, openrecall.Mode{}, fmt.Errorf("models.provider %q: want local or openai", cfg.Models.Provider)
}

// openaiModels returns the cheap and strong models of m on the server at
// baseURL, sharing one concurrency limit. sleep, when not nil, replaces the
// back-off sleep.
func openaiModels(m config.Models, baseURL, key string, sleep func(context.Context, time.Duration) error) (routing.Model, routing.Model, error) {
	lim := openai.NewLimiter(m.Concurrency)
	retries := m.MaxRetries
	if retries == 0 {
		retries = -1 // openai.Options reads 0 as its default
	}
	mk := func(name string) (*openai.Model, error) {
		return openai.New(openai.Options{BaseURL: baseURL, APIKey: key, Model: name, Timeout: m.Timeout,
			MaxRetries: retries, Limiter: lim, Sleep: sleep})
	}
	cheap, err := mk(m.Cheap)
	if err != nil {
		return nil, nil, err
	}
	strong, err := mk(m.Strong)
	if err != nil {
		return nil, nil, err
	}
	return cheap, strong, nil
}
