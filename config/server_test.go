package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
)

func TestServerDefaults(t *testing.T) {
	c, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if s.Listen != "127.0.0.1:9555" || s.MaxBodyBytes != 32<<20 || s.InboxLimit != 10000 || s.Workers != 2 ||
		s.RequestTimeout != 30*time.Second || s.BudgetUSDPerDay != 0 || len(s.Tokens) != 0 || s.Retention != 30*24*time.Hour {
		t.Errorf("server defaults: %+v", s)
	}
}

func TestServerValidation(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{"tiny body limit", "server:\n  max_body_bytes: 10\n", "server.max_body_bytes"},
		{"no workers", "server:\n  workers: 0\n", "server.workers"},
		{"negative budget", "server:\n  budget_usd_per_day: -1\n", "server.budget_usd_per_day"},
		{"negative retention", "server:\n  retention: -1h\n", "server.retention"},
		{"webhook not http", "server:\n  webhook_url: ftp://x\n", "server.webhook_url"},
		{"token without secret", "server:\n  tokens:\n    - name: am\n      scopes: [ingest]\n", "server.tokens[0]"},
		{"token with both", "server:\n  tokens:\n    - token: a\n      token_env: B\n      scopes: [ingest]\n", "server.tokens[0]"},
		{"unknown scope", "server:\n  tokens:\n    - token: a\n      scopes: [admin]\n", "server.tokens[0].scopes"},
		// Issue 33, item 9: a token of fewer than 16 bytes is guessed.
		{"short token", "server:\n  tokens:\n    - name: am\n      token: x\n      scopes: [ingest]\n", "at least 16 are required"},
		// Issue 33, item 7: a retain token writes decisions in its name.
		{"unnamed retain token", "server:\n  tokens:\n    - token: 0123456789abcdef0123\n      scopes: [read, retain]\n", "retain scope needs a name"},
		{"tls without key", "server:\n  tls:\n    cert_file: cert.pem\n", "server.tls"},
		{"proxy not a CIDR", "server:\n  trusted_proxies: [10.0.0.0/8, proxy.local]\n", "server.trusted_proxies[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(writeConfig(t, tt.yaml))
			if !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %v, want ErrInvalid naming %s", err, tt.key)
			}
		})
	}
}

func TestServerRetentionZeroKeepsForever(t *testing.T) {
	c, err := config.Load(writeConfig(t, "server:\n  retention: 0s\n"))
	if err != nil || c.Server.Retention != 0 {
		t.Fatalf("retention 0: %v, %v", c.Server.Retention, err)
	}
}

func TestResolvedTokens(t *testing.T) {
	c, err := config.Load(writeConfig(t, "server:\n  tokens:\n    - name: am\n      token_env: AM_TOKEN\n      scopes: [ingest]\n    - token: literal-0123456789abcdef\n      scopes: [read]\n    - name: alice\n      token: alice-0123456789abcdef\n      scopes: [read, retain]\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AM_TOKEN": " from-env-0123456789 ", "OPENRECALL_READ_TOKEN": "r1-0123456789abcdef, r2-0123456789abcdef", "OPENRECALL_INGEST_TOKEN": ""}
	got, err := c.Server.ResolvedTokens(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, tk := range got {
		parts = append(parts, tk.Name+"="+tk.Token+":"+strings.Join(tk.Scopes, "+"))
	}
	if want := "am=from-env-0123456789:ingest tokens[1]=literal-0123456789abcdef:read alice=alice-0123456789abcdef:read+retain $OPENRECALL_READ_TOKEN=r1-0123456789abcdef:read $OPENRECALL_READ_TOKEN=r2-0123456789abcdef:read"; strings.Join(parts, " ") != want {
		t.Errorf("tokens %q, want %q", strings.Join(parts, " "), want)
	}
	// Issue 33: a short secret from the environment, and a retain token
	// without a name, are refused at start; the error names the variable,
	// never the secret.
	for _, bad := range []map[string]string{
		{"AM_TOKEN": "short", "want": "$AM_TOKEN holds 5 bytes"},
		{"OPENRECALL_INGEST_TOKEN": "tiny", "want": "$OPENRECALL_INGEST_TOKEN: a token of 4 bytes"},
		{"OPENRECALL_RETAIN_TOKEN": "retain-0123456789abcdef", "want": "$OPENRECALL_RETAIN_TOKEN grants the retain scope"},
	} {
		e := map[string]string{"AM_TOKEN": "from-env-0123456789"}
		for k, v := range bad {
			e[k] = v
		}
		_, err := c.Server.ResolvedTokens(func(k string) string { return e[k] })
		if !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), bad["want"]) || strings.Contains(err.Error(), "tiny") {
			t.Errorf("%v: %v, want ErrInvalid saying %q", bad, err, bad["want"])
		}
	}
	delete(env, "AM_TOKEN")
	if _, err := c.Server.ResolvedTokens(func(k string) string { return env[k] }); !errors.Is(err, openrecall.ErrInvalid) || !strings.Contains(err.Error(), "AM_TOKEN") {
		t.Errorf("empty token_env: %v", err)
	}
}
