package config

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// Server configures `openrecall serve`.
type Server struct {
	Listen string `yaml:"listen"`
	// MaxBodyBytes bounds one request body; a longer one is answered 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// InboxLimit is back-pressure on the deliveries waiting in the inbox:
	// while that many or more wait, the receivers answer 503 with
	// Retry-After; a body that finds fewer is stored whole, however many
	// alerts it holds.
	InboxLimit int `yaml:"inbox_limit"`
	// Workers analyse inbox deliveries concurrently.
	Workers         int           `yaml:"workers"`
	RequestTimeout  time.Duration `yaml:"request_timeout"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// BudgetUSDPerDay caps model spend per UTC day; 0 means no cap.
	BudgetUSDPerDay float64 `yaml:"budget_usd_per_day"`
	// WebhookURL, when set, receives a JSON POST for every alert escalated
	// to a person.
	WebhookURL string `yaml:"webhook_url"`
	// Tokens are the bearer tokens the server accepts.
	Tokens []TokenEntry `yaml:"tokens"`
	// Retention is how long the delivery and result documents of a
	// finished inbox row are kept; serve prunes older ones (ids, decisions,
	// alert state, groups, memories and the audit and cost chains stay).
	// 0 keeps them forever.
	Retention time.Duration `yaml:"retention"`
	// ArchiveDir, with a Retention, is where serve archives the audit and
	// cost chains older than the retention at each pruning pass, then
	// forgets the rows only those analyses needed (DESIGN §11). Empty
	// keeps everything but the pruned documents.
	ArchiveDir string `yaml:"archive_dir"`
	// Instance names this serve process among those sharing one database
	// (several receivers behind a load balancer on PostgreSQL): a start of
	// the same instance claims at once what its former run held, so two
	// processes running at once must not share one. Empty is the host name
	// and the configured listen address ("host/127.0.0.1:9555").
	Instance string `yaml:"instance"`
	// Lease is how long a process's claim of an inbox delivery lasts; the
	// process renews it every third of it while it works. After a crash,
	// another process takes the delivery over once the lease passed.
	Lease time.Duration `yaml:"lease"`
	// TLS, when both files are given, makes serve listen with TLS itself
	// (the session cookie is then Secure).
	TLS TLS `yaml:"tls"`
	// TrustedProxies are the addresses (CIDRs such as 10.0.0.0/8, or
	// single addresses) of reverse proxies in front of serve: from these
	// peers only, X-Forwarded-Proto says whether the client's request came
	// over TLS (the session cookie is Secure behind a TLS proxy) and
	// X-Forwarded-For names the client (login throttling, logs).
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// TLS is a certificate and its private key, PEM files.
type TLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// MinTokenBytes is the shortest secret a token may have: a shorter one is
// refused at start (a token is guessed by trying, and logins are only
// throttled, not impossible).
const MinTokenBytes = 16

// TokenEntry is one entry of server.tokens: a bearer token's name, its
// scopes (openrecall.ScopeIngest, ScopeRetain, ScopeRead) and its secret,
// given as Token or, better, as the environment variable named by
// TokenEnv. ResolvedTokens reads the secrets; the server accepts each as
// an openrecall.Token.
type TokenEntry struct {
	Name     string   `yaml:"name"`
	Token    string   `yaml:"token"`
	TokenEnv string   `yaml:"token_env"`
	Scopes   []string `yaml:"scopes"`
}

// TokenEnvScopes maps the environment variables that may hold tokens (a
// comma-separated list each) to the scope they grant.
var TokenEnvScopes = map[string]string{
	"OPENRECALL_INGEST_TOKEN": openrecall.ScopeIngest,
	"OPENRECALL_RETAIN_TOKEN": openrecall.ScopeRetain,
	"OPENRECALL_READ_TOKEN":   openrecall.ScopeRead,
}

// Validate checks the server section and names the first bad key.
func (s Server) Validate() error {
	switch {
	case s.MaxBodyBytes < 1024:
		return fmt.Errorf("server.max_body_bytes %d must be at least 1024: %w", s.MaxBodyBytes, openrecall.ErrInvalid)
	case s.InboxLimit < 1:
		return fmt.Errorf("server.inbox_limit %d must be at least 1: %w", s.InboxLimit, openrecall.ErrInvalid)
	case s.Workers < 1 || s.Workers > 256:
		return fmt.Errorf("server.workers %d must be between 1 and 256: %w", s.Workers, openrecall.ErrInvalid)
	case s.RequestTimeout <= 0 || s.ShutdownTimeout <= 0:
		return fmt.Errorf("server.request_timeout and server.shutdown_timeout must be positive durations such as 30s: %w", openrecall.ErrInvalid)
	case s.Lease < 3*time.Second:
		return fmt.Errorf("server.lease %s must be at least 3s (renewed every third of it): %w", s.Lease, openrecall.ErrInvalid)
	case s.Retention < 0:
		return fmt.Errorf("server.retention %s must be 0 (keep forever) or a positive duration such as 720h: %w", s.Retention, openrecall.ErrInvalid)
	case s.ArchiveDir != "" && s.Retention <= 0:
		return fmt.Errorf("server.archive_dir %q needs a positive server.retention (what is older than it is archived): %w", s.ArchiveDir, openrecall.ErrInvalid)
	case s.BudgetUSDPerDay < 0 || math.IsNaN(s.BudgetUSDPerDay) || math.IsInf(s.BudgetUSDPerDay, 0):
		return fmt.Errorf("server.budget_usd_per_day %v must be a non-negative number: %w", s.BudgetUSDPerDay, openrecall.ErrInvalid)
	case s.WebhookURL != "" && !strings.HasPrefix(s.WebhookURL, "http://") && !strings.HasPrefix(s.WebhookURL, "https://"):
		return fmt.Errorf("server.webhook_url %q must be an http or https URL: %w", s.WebhookURL, openrecall.ErrInvalid)
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		return fmt.Errorf("server.tls: give both cert_file and key_file (PEM files), or neither: %w", openrecall.ErrInvalid)
	}
	if _, err := ParseProxies(s.TrustedProxies); err != nil {
		return err
	}
	for i, t := range s.Tokens {
		if (t.Token == "") == (t.TokenEnv == "") {
			return fmt.Errorf("server.tokens[%d]: give exactly one of token and token_env: %w", i, openrecall.ErrInvalid)
		}
		if len(t.Scopes) == 0 {
			return fmt.Errorf("server.tokens[%d]: scopes must list ingest, retain or read: %w", i, openrecall.ErrInvalid)
		}
		for _, sc := range t.Scopes {
			if !slices.Contains([]string{openrecall.ScopeIngest, openrecall.ScopeRetain, openrecall.ScopeRead}, sc) {
				return fmt.Errorf("server.tokens[%d].scopes: %q is not ingest, retain or read: %w", i, sc, openrecall.ErrInvalid)
			}
		}
		if strings.TrimSpace(t.Name) == "" && slices.Contains(t.Scopes, openrecall.ScopeRetain) {
			return fmt.Errorf("server.tokens[%d]: a token with the retain scope needs a name: every decision written with it records that name as its analyst: %w", i, openrecall.ErrInvalid)
		}
		if t.Token != "" && len(t.Token) < MinTokenBytes {
			return fmt.Errorf("server.tokens[%d]: the token is %d bytes, at least %d are required (generate one with `openssl rand -hex 16`): %w", i, len(t.Token), MinTokenBytes, openrecall.ErrInvalid)
		}
	}
	return nil
}

// ParseProxies parses server.trusted_proxies: CIDRs, or single addresses
// (a /32 or /128).
func ParseProxies(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for i, v := range list {
		v = strings.TrimSpace(v)
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("server.trusted_proxies[%d]: %q is neither a CIDR (10.0.0.0/8) nor an address: %w", i, v, openrecall.ErrInvalid)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// ResolvedTokens returns the configured tokens with their secrets read from
// the environment, then one token per value of each TokenEnvScopes variable
// (getenv is os.Getenv when nil). A token_env naming an empty variable is an
// error: a server must not start without the secret it was told to use.
func (s Server) ResolvedTokens(getenv func(string) string) ([]TokenEntry, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []TokenEntry
	for i, t := range s.Tokens {
		if t.TokenEnv != "" {
			t.Token = strings.TrimSpace(getenv(t.TokenEnv))
			if t.Token == "" {
				return nil, fmt.Errorf("server.tokens[%d].token_env: $%s is empty: %w", i, t.TokenEnv, openrecall.ErrInvalid)
			}
			if len(t.Token) < MinTokenBytes {
				return nil, fmt.Errorf("server.tokens[%d].token_env: $%s holds %d bytes, at least %d are required (generate one with `openssl rand -hex 16`): %w", i, t.TokenEnv, len(t.Token), MinTokenBytes, openrecall.ErrInvalid)
			}
		}
		if t.Name == "" {
			t.Name = fmt.Sprintf("tokens[%d]", i)
		}
		out = append(out, t)
	}
	envs := make([]string, 0, len(TokenEnvScopes))
	for k := range TokenEnvScopes {
		envs = append(envs, k)
	}
	slices.Sort(envs)
	for _, env := range envs {
		for v := range strings.SplitSeq(getenv(env), ",") {
			if v = strings.TrimSpace(v); v != "" {
				if TokenEnvScopes[env] == openrecall.ScopeRetain {
					return nil, fmt.Errorf("$%s grants the retain scope, but a decision records its analyst and a token from this variable has no name: "+
						"name it in server.tokens instead (name: alice, token_env: ALICE_TOKEN, scopes: [read, retain]): %w", env, openrecall.ErrInvalid)
				}
				if len(v) < MinTokenBytes {
					return nil, fmt.Errorf("$%s: a token of %d bytes, at least %d are required (generate one with `openssl rand -hex 16`): %w", env, len(v), MinTokenBytes, openrecall.ErrInvalid)
				}
				out = append(out, TokenEntry{Name: "$" + env, Token: v, Scopes: []string{TokenEnvScopes[env]}})
			}
		}
	}
	return out, nil
}
