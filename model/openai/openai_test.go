package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrecall/openrecall/model/openai/fake"
	"github.com/openrecall/openrecall/routing"
)

const testKey = "sk-test-" + "k3yThatMustNeverLeak0000"

// clock is a fake clock that the fake sleep advances: no test waits for a
// real back-off.
type clock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return ctx.Err()
}

func newModel(t *testing.T, srv *fake.Server, c *clock, edit func(*Options)) *Model {
	t.Helper()
	o := Options{BaseURL: srv.URL, APIKey: testKey, Model: "gpt-4o-mini", Now: c.now, Sleep: c.sleep, Jitter: func() float64 { return 0.5 }}
	if edit != nil {
		edit(&o)
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var req = routing.Request{System: "answer in JSON", Prompt: "the case file", MaxTokens: 400, JSON: true}

const answer = `{"decision":"known_benign","confidence":0.8,"summary":"s","hypotheses":[],"verification_commands":[],"next_steps":[],"skip_paths":[],"cited_memory_ids":[]}`

func TestCompleteSendsTheRequestAndReadsUsage(t *testing.T) {
	srv := fake.New(nil, fake.Answer(answer, 321, 45))
	defer srv.Close()
	c := newClock()
	resp, err := newModel(t, srv, c, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != answer || !resp.Live || resp.PromptTokens != 321 || resp.CompletionTokens != 45 {
		t.Fatalf("response %+v: want the answer, live, usage 321/45", resp)
	}
	if len(resp.Attempts) != 1 || resp.Attempts[0].Status != 200 || resp.Attempts[0].Number != 1 {
		t.Fatalf("attempts %+v: want one HTTP 200", resp.Attempts)
	}
	got := srv.Received()[0]
	if got.Path != "/v1/chat/completions" || got.Request.Model != "gpt-4o-mini" || got.Request.MaxTokens != 400 {
		t.Fatalf("request %s model %q max_tokens %d", got.Path, got.Request.Model, got.Request.MaxTokens)
	}
	if got.Request.Text("system") != req.System || got.Request.Text("user") != req.Prompt {
		t.Fatalf("messages %+v", got.Request.Messages)
	}
	if !strings.Contains(string(got.Request.ResponseFormat), `"json_schema"`) || !strings.Contains(string(got.Request.ResponseFormat), `"known_benign"`) {
		t.Fatalf("response_format %s: want the answer's JSON schema", got.Request.ResponseFormat)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+testKey {
		t.Fatalf("Authorization %q", h)
	}
	if len(c.sleeps) != 0 {
		t.Fatalf("slept %v on a first-time answer", c.sleeps)
	}
}

func TestCompleteWithoutUsageReportsNone(t *testing.T) {
	srv := fake.New(nil, fake.Reply{Content: answer, NoUsage: true})
	defer srv.Close()
	resp, err := newModel(t, srv, newClock(), nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.PromptTokens != 0 || resp.CompletionTokens != 0 || !resp.Live {
		t.Fatalf("response %+v: no usage reported, so none may be invented here", resp)
	}
}

func TestRetries(t *testing.T) {
	date := newClock().now().Add(42 * time.Second).Format(http.TimeFormat)
	tests := []struct {
		name      string
		script    []fake.Reply
		wantSleep []time.Duration
		wantCodes []int
		wantErr   error // nil: answered
		calls     int
	}{
		{"429 with Retry-After seconds", []fake.Reply{fake.Status(429, "7"), fake.Answer(answer, 1, 1)},
			[]time.Duration{7 * time.Second}, []int{429, 200}, nil, 2},
		{"429 with Retry-After HTTP date", []fake.Reply{fake.Status(429, date), fake.Answer(answer, 1, 1)},
			[]time.Duration{42 * time.Second}, []int{429, 200}, nil, 2},
		{"500 then success, jittered back-off", []fake.Reply{fake.Status(500, ""), fake.Status(503, ""), fake.Answer(answer, 1, 1)},
			[]time.Duration{375 * time.Millisecond, 750 * time.Millisecond}, []int{500, 503, 200}, nil, 3},
		{"408 and 409 are retried", []fake.Reply{fake.Status(408, ""), fake.Status(409, ""), fake.Answer(answer, 1, 1)},
			[]time.Duration{375 * time.Millisecond, 750 * time.Millisecond}, []int{408, 409, 200}, nil, 3},
		{"retries exhausted: unavailable", []fake.Reply{fake.Status(502, ""), fake.Status(502, ""), fake.Status(502, ""), fake.Status(502, "")},
			[]time.Duration{375 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond}, []int{502, 502, 502, 502}, routing.ErrUnavailable, 4},
		{"insufficient_quota is never retried", []fake.Reply{fake.InsufficientQuota()},
			nil, []int{429}, routing.ErrUnavailable, 1},
		{"401 is never retried", []fake.Reply{fake.Status(401, "")}, nil, []int{401}, routing.ErrUnavailable, 1},
		{"a 400 schema error is never retried", []fake.Reply{{Status: 400, Message: "messages[1].content: expected string"}},
			nil, []int{400}, errAny, 1},
		{"a 200 whose body is not JSON is not retried", []fake.Reply{{Body: "<html>proxy error</html>"}},
			nil, []int{200}, errAny, 1},
		{"Retry-After beyond the limit: unavailable at once", []fake.Reply{fake.Status(429, "3600")},
			nil, []int{429}, routing.ErrUnavailable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fake.New(nil, tt.script...)
			defer srv.Close()
			c := newClock()
			resp, err := newModel(t, srv, c, nil).Complete(context.Background(), req)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("error %v, want an answer", err)
			case tt.wantErr == errAny && (err == nil || errors.Is(err, routing.ErrUnavailable)):
				t.Fatalf("error %v: want a plain model error", err)
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if srv.Calls() != tt.calls {
				t.Fatalf("%d calls, want %d", srv.Calls(), tt.calls)
			}
			var codes []int
			for i, a := range resp.Attempts {
				codes = append(codes, a.Status)
				if a.Number != i+1 {
					t.Fatalf("attempt %d numbered %d", i+1, a.Number)
				}
			}
			if !equal(codes, tt.wantCodes) {
				t.Fatalf("attempt statuses %v, want %v", codes, tt.wantCodes)
			}
			if !equal(c.sleeps, tt.wantSleep) {
				t.Fatalf("slept %v, want %v", c.sleeps, tt.wantSleep)
			}
			for _, a := range resp.Attempts {
				if strings.Contains(a.Error, testKey) {
					t.Fatalf("attempt error carries the API key: %s", a.Error)
				}
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Fatalf("error carries the API key: %v", err)
			}
		})
	}
}

var errAny = errors.New("any model error")

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTimeoutIsRetriedThenUnavailable(t *testing.T) {
	srv := fake.New(nil, fake.Reply{Delay: 5 * time.Second}, fake.Reply{Delay: 5 * time.Second})
	defer srv.Close()
	m := newModel(t, srv, newClock(), func(o *Options) { o.Timeout = 50 * time.Millisecond; o.MaxRetries = 1 })
	resp, err := m.Complete(context.Background(), req)
	if !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("error %v, want unavailable", err)
	}
	if len(resp.Attempts) != 2 || resp.Attempts[0].Status != 0 || !strings.Contains(resp.Attempts[0].Error, "timeout") {
		t.Fatalf("attempts %+v: want two timeouts", resp.Attempts)
	}
}

func TestHugeCompletionIsRefusedNotRetried(t *testing.T) {
	srv := fake.New(nil, fake.Answer(strings.Repeat("x", 64<<10), 10, 16000))
	defer srv.Close()
	m := newModel(t, srv, newClock(), func(o *Options) { o.MaxResponseBytes = 16 << 10 })
	_, err := m.Complete(context.Background(), req)
	if err == nil || errors.Is(err, routing.ErrUnavailable) || !strings.Contains(err.Error(), "limit") || srv.Calls() != 1 {
		t.Fatalf("error %v after %d calls: want one call refused for its size", err, srv.Calls())
	}
}

func TestResponseFormatFallsBackWhenRefused(t *testing.T) {
	refuse := fake.Reply{Status: 400, Message: "response_format json_schema is not supported by this server"}
	srv := fake.New(nil, refuse, fake.Answer(answer, 1, 1), fake.Answer(answer, 1, 1))
	defer srv.Close()
	m := newModel(t, srv, newClock(), nil)
	for range 2 {
		if _, err := m.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Received()
	for i, want := range []string{`json_schema`, `json_object`, `json_object`} {
		if !strings.Contains(string(got[i].Request.ResponseFormat), want) {
			t.Fatalf("request %d response_format %s, want %s", i, got[i].Request.ResponseFormat, want)
		}
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := newClock().now()
	tests := []struct {
		header, ms string
		want       time.Duration
		ok         bool
	}{
		{"3", "", 3 * time.Second, true},
		{"0", "", 0, true},
		{"1.5", "", 1500 * time.Millisecond, true},
		{now.Add(10 * time.Second).Format(http.TimeFormat), "", 10 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), "", 0, true},
		{"", "250", 250 * time.Millisecond, true},
		{"soon", "", 0, false},
		{"-4", "", 0, false},
		{"", "", 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set("Retry-After", tt.header)
		}
		if tt.ms != "" {
			h.Set("Retry-After-Ms", tt.ms)
		}
		got, ok := retryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Retry-After %q / ms %q: %v %v, want %v %v", tt.header, tt.ms, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{BaseURL: "127.0.0.1:8080/v1", Model: "m"}, {BaseURL: "ftp://x/v1", Model: "m"}, {BaseURL: "http://x/v1"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// The client reads OPENAI_* variables by itself; none of them may reach a
// server the configuration did not give them to.
func TestEnvironmentCredentialsDoNotLeak(t *testing.T) {
	const envKey = "sk-from-" + "environment-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", envKey)
	t.Setenv("OPENAI_ORG_ID", "org-secret")
	t.Setenv("OPENAI_PROJECT_ID", "proj-secret")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Team-Token: team-secret")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := fake.New(nil, fake.Answer(answer, 1, 1), fake.Answer(answer, 1, 1))
	defer srv.Close()
	for _, key := range []string{"", "ollama-local-key"} {
		if _, err := newModel(t, srv, newClock(), func(o *Options) { o.APIKey = key }).Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	for i, got := range srv.Received() {
		for name, vals := range got.Header {
			for _, v := range vals {
				for _, secret := range []string{envKey, "org-secret", "proj-secret", "team-secret"} {
					if strings.Contains(v, secret) {
						t.Fatalf("request %d: header %s carries %s from the environment", i, name, secret)
					}
				}
			}
		}
	}
	if h := srv.Received()[0].Header.Get("Authorization"); h != "" {
		t.Fatalf("no key configured, yet Authorization %q", h)
	}
	if h := srv.Received()[1].Header.Get("Authorization"); h != "Bearer ollama-local-key" {
		t.Fatalf("Authorization %q, want the configured key", h)
	}
}
