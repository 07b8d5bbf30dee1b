package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall/internal/storetest"
	"github.com/openrecall/openrecall/server/cockpit"
)

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// loginClient is a browser without redirects: each answer is seen as is.
func loginClient(t *testing.T, tlsCfg *tls.Config) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: tlsCfg},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login posts a token to the cockpit's login form, with extra headers.
func login(t *testing.T, c *http.Client, base, token string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

func loggedIn(resp *http.Response) bool {
	return resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/ui/queue"
}

// TestLoginIsThrottled (issue 33, item 9): failed logins from one address
// are throttled with a growing back-off — 429 with Retry-After, and the
// right token is refused too until the back-off has passed (the clock is
// the test's) — each failure is logged at Warn with the client's address
// and never the token, and counted. Fails without the fix: 500 wrong
// tokens in a row, and the right one right after, logged in.
func TestLoginIsThrottled(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
	core, logs := observer.New(zapcore.InfoLevel)
	e := newEnv(t, options{noServe: true, tokens: actorTokens, log: zap.New(core),
		throttle: cockpit.NewThrottle(cockpit.DefaultPerAddress, cockpit.DefaultOverall, clock.Now)})
	c := loginClient(t, nil)
	const wrong = "wrong-token-0123456789"
	for i := range cockpit.DefaultPerAddress.Free + 1 {
		if resp := login(t, c, e.url, wrong, nil); resp.StatusCode != http.StatusSeeOther || loggedIn(resp) {
			t.Fatalf("wrong token %d: %d to %q", i+1, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// Past the free failures: one second's block; the right token waits.
	resp := login(t, c, e.url, aliceSecret, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("the right token while throttled: %d, Retry-After %q; want 429 after 1 s", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.Add(time.Second)
	// Another failure doubles the block.
	login(t, c, e.url, wrong, nil)
	if resp := login(t, c, e.url, aliceSecret, nil); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("after a seventh failure: %d, Retry-After %q; want 429 after 2 s", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.Add(2 * time.Second)
	if resp := login(t, c, e.url, aliceSecret, nil); !loggedIn(resp) {
		t.Fatalf("the right token once the back-off passed: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The logs: failures at Warn with the address, the token nowhere.
	failed, throttled, ok := 0, 0, 0
	for _, entry := range logs.All() {
		line := fmt.Sprintf("%s %v", entry.Message, entry.ContextMap())
		if strings.Contains(line, wrong) || strings.Contains(line, aliceSecret) {
			t.Errorf("a log line holds a token: %s", line)
		}
		switch entry.Message {
		case "login failed":
			failed++
			if entry.Level != zapcore.WarnLevel || entry.ContextMap()["client"] != "127.0.0.1" || entry.ContextMap()["outcome"] != cockpit.LoginUnknown {
				t.Errorf("failure logged as %s %v", entry.Level, entry.ContextMap())
			}
		case "login refused: throttled after failed logins":
			throttled++
		case "login":
			ok++
		}
	}
	if failed != 7 || throttled != 2 || ok != 1 {
		t.Errorf("logged %d failures, %d throttled, %d logins; want 7, 2, 1", failed, throttled, ok)
	}
	if got := e.metric("openrecall_cockpit_login_failures_total"); got != "9" {
		t.Errorf("login failures counted %s, want 9", got)
	}
}

// TestLoginThrottledOverall: a guesser spread over many addresses (here
// through a trusted proxy's X-Forwarded-For) is throttled overall, and a
// new address is refused too while the overall back-off runs. From a peer
// that is not a trusted proxy, X-Forwarded-For is ignored: the peer is
// throttled, whatever address it claims.
func TestLoginThrottledOverall(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
	e := newEnv(t, options{noServe: true, tokens: actorTokens, proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		throttle: cockpit.NewThrottle(cockpit.DefaultPerAddress, cockpit.DefaultOverall, clock.Now)})
	c := loginClient(t, nil)
	for i := range cockpit.DefaultOverall.Free + 1 {
		from := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)}
		if resp := login(t, c, e.url, "wrong-token-0123456789", from); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("failure %d: %d", i+1, resp.StatusCode)
		}
	}
	if resp := login(t, c, e.url, aliceSecret, map[string]string{"X-Forwarded-For": "203.0.113.7"}); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a new address during the overall back-off: %d, want 429", resp.StatusCode)
	}
	clock.Add(time.Second)
	if resp := login(t, c, e.url, aliceSecret, map[string]string{"X-Forwarded-For": "203.0.113.7"}); !loggedIn(resp) {
		t.Fatalf("after the overall back-off: %d", resp.StatusCode)
	}

	// Not a trusted peer: its X-Forwarded-For is not believed.
	clock.Add(time.Hour)
	f := newEnv(t, options{noServe: true, tokens: actorTokens,
		throttle: cockpit.NewThrottle(cockpit.DefaultPerAddress, cockpit.DefaultOverall, clock.Now)})
	for i := range cockpit.DefaultPerAddress.Free + 1 {
		login(t, c, f.url, "wrong-token-0123456789", map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)})
	}
	if resp := login(t, c, f.url, aliceSecret, map[string]string{"X-Forwarded-For": "203.0.113.8"}); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an untrusted peer claiming another address: %d, want 429", resp.StatusCode)
	}
}

// TestSessionsLiveInTheDatabase (issue 33, item 9): a login on one serve
// process is known to another on the same database and to the next start,
// and `openrecall serve revoke-sessions` (memory.Store.RevokeSessions)
// ends it everywhere. Fails without the fix: sessions lived in one
// process's memory.
func TestSessionsLiveInTheDatabase(t *testing.T) {
	db := storetest.Location(t)
	a := newEnv(t, options{noServe: true, db: db, tokens: actorTokens})
	b := newEnv(t, options{noServe: true, db: db, tokens: actorTokens})
	c := loginClient(t, nil)
	if resp := login(t, c, a.url, aliceSecret, nil); !loggedIn(resp) {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	u, _ := url.Parse(a.url + "/ui/")
	cookies := c.Jar.Cookies(u)
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	page := func(base string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/ui/queue", nil)
		req.AddCookie(cookies[0])
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := page(b.url); code != http.StatusOK {
		t.Fatalf("the session on the other process: %d, want 200", code)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	restarted := newEnv(t, options{noServe: true, db: db, tokens: actorTokens})
	if code := page(restarted.url); code != http.StatusOK {
		t.Fatalf("the session after a restart: %d, want 200", code)
	}
	if n, err := b.store.RevokeSessions(context.Background()); err != nil || n != 1 {
		t.Fatalf("revoked %d, %v", n, err)
	}
	for _, base := range []string{b.url, restarted.url} {
		if code := page(base); code != http.StatusSeeOther {
			t.Errorf("a revoked session at %s: %d, want 303 to the login", base, code)
		}
	}
}

// selfSigned returns a certificate for 127.0.0.1, made now, and a pool
// that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openrecall test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestSessionCookieSecure (issue 33, item 9): the session cookie is Secure
// when serve terminates TLS itself (server.tls), and behind a trusted
// proxy that says X-Forwarded-Proto: https; a peer that is not a trusted
// proxy cannot say so. Fails without the fix: serve had no TLS listener
// and believed no proxy, so the cookie was never Secure.
func TestSessionCookieSecure(t *testing.T) {
	cert, pool := selfSigned(t)
	secure := func(resp *http.Response) bool {
		for _, ck := range resp.Cookies() {
			if ck.Name == cockpit.SessionCookie {
				return ck.Secure
			}
		}
		t.Fatalf("no session cookie: %d %v", resp.StatusCode, resp.Header)
		return false
	}
	tlsEnv := newEnv(t, options{tokens: actorTokens, tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	if resp := login(t, loginClient(t, &tls.Config{RootCAs: pool}), tlsEnv.url, aliceSecret, nil); !loggedIn(resp) || !secure(resp) {
		t.Errorf("over TLS: logged in %v, want a Secure cookie", loggedIn(resp))
	}
	https := map[string]string{"X-Forwarded-Proto": "https"}
	proxied := newEnv(t, options{noServe: true, tokens: actorTokens, proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if resp := login(t, loginClient(t, nil), proxied.url, aliceSecret, https); !loggedIn(resp) || !secure(resp) {
		t.Errorf("behind a trusted TLS proxy: want a Secure cookie")
	}
	direct := newEnv(t, options{noServe: true, tokens: actorTokens, proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if resp := login(t, loginClient(t, nil), direct.url, aliceSecret, https); !loggedIn(resp) || secure(resp) {
		t.Errorf("an untrusted peer saying https: want a cookie that is not Secure")
	}
}
