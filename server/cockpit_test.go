package server_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/server/cockpit"
)

// TestCockpitIsServed: serve mounts the cockpit under /ui/ with / leading
// there; only a token the configuration named logs in; the mode badge is
// the readiness behind /readyz; every answer, the JSON API's too, carries
// the CSP.
func TestCockpitIsServed(t *testing.T) {
	e := newEnv(t, options{noServe: true, tokens: []server.Token{
		{Name: "tokens[0]", Secret: "unnamed-secret", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
		{Name: "alice", Analyst: "alice", Secret: "alice-secret", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
		{Name: "$OPENRECALL_READ_TOKEN", Secret: "env-secret", Scopes: []string{server.ScopeRead}},
	}})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		if got := resp.Header.Get("Content-Security-Policy"); got != cockpit.CSP {
			t.Errorf("%s: CSP %q", path, got)
		}
		return resp, string(b)
	}
	if resp, _ := get("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, p := range []string{"/healthz", "/api/v1/nothing"} {
		get(p)
	}
	// Not serving yet (handler only), so not ready: the badge says so.
	ready, _ := get("/readyz")
	wantBadge := `class="badge notready" id="mode">memory=sqlite model=deterministic (not ready)`
	if ready.StatusCode == http.StatusOK {
		wantBadge = `class="badge ready" id="mode">memory=sqlite model=deterministic<`
	}
	for secret, ok := range map[string]bool{"unnamed-secret": false, "env-secret": false, "alice-secret": true} {
		resp, err := c.PostForm(e.url+"/ui/login", url.Values{"token": {secret}})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("Location") == "/ui/queue"; got != ok {
			t.Errorf("login with %s: to %q, want logged in %v", secret, resp.Header.Get("Location"), ok)
		}
	}
	resp, body := get("/ui/cost")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, wantBadge) {
		t.Errorf("cost page: %d, no mode badge from readiness:\n%s", resp.StatusCode, body)
	}
}
