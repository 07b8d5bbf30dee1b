package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/openrecall/openrecall/routing"
)

// Defaults of Options.
const (
	DefaultTimeout          = 60 * time.Second
	DefaultMaxRetries       = 3
	DefaultBaseBackoff      = 500 * time.Millisecond
	DefaultMaxBackoff       = 30 * time.Second
	DefaultMaxRetryAfter    = 2 * time.Minute
	DefaultMaxResponseBytes = 4 << 20
)

// Options configures a Model.
type Options struct {
	// BaseURL is the server's API root, such as https://api.openai.com/v1
	// or http://127.0.0.1:11434/v1; required.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// Model is the model name sent with every request; required.
	Model string
	// Timeout caps one attempt (default DefaultTimeout).
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried (default
	// DefaultMaxRetries; negative means none).
	MaxRetries int
	// Limiter caps calls in flight; share one between the tiers of one
	// server. Nil means no cap.
	Limiter *Limiter
	// BaseBackoff and MaxBackoff shape the exponential back-off (defaults
	// DefaultBaseBackoff and DefaultMaxBackoff).
	BaseBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a server asking for
	// more is treated as unavailable (default DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// MaxResponseBytes caps a response body (default DefaultMaxResponseBytes):
	// a huge completion fails instead of filling memory.
	MaxResponseBytes int64
	// HTTPClient is the client requests go through; nil means a new one.
	HTTPClient *http.Client
	// Now, Sleep and Jitter are the clock, the back-off sleep and the jitter
	// source in [0, 1); nil means time.Now, a context-aware timer sleep and
	// math/rand/v2.
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64
}

// Model is one model on one OpenAI-compatible server. It is safe for
// concurrent use.
type Model struct {
	o      Options
	client sdk.Client
	// format is the response format the server accepts: formatSchema, then
	// formatObject, then formatNone once it has refused the richer ones.
	format atomic.Int32
}

const (
	formatSchema int32 = iota
	formatObject
	formatNone
)

// New returns a Model, or an error when BaseURL is not an http(s) URL or
// Model is empty.
func New(o Options) (*Model, error) {
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want http(s)://host[:port]/path", o.BaseURL)
	}
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("openai: model name is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = DefaultBaseBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	hc = &http.Client{Transport: limitBody{next: transport(hc), max: o.MaxResponseBytes}, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}
	m := &Model{o: o}
	m.client = sdk.NewClient(
		option.WithBaseURL(strings.TrimSuffix(o.BaseURL, "/")+"/"),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // attempts are ours to count and record
		option.WithMiddleware(onlyOurCredentials(o.APIKey)),
	)
	return m, nil
}

// onlyOurCredentials undoes what the client takes from the environment
// (OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS):
// a server gets the key the configuration named, or none, and no account
// identifiers meant for another server.
func onlyOurCredentials(key string) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		r.Header.Del("Authorization")
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		r.Header.Del("OpenAI-Organization")
		r.Header.Del("OpenAI-Project")
		for _, line := range strings.Split(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok {
				r.Header.Del(strings.TrimSpace(name))
			}
		}
		return next(r)
	}
}

// Name returns the model name sent to the server; the router prices calls
// by it (prices.<name> in the configuration).
func (m *Model) Name() string { return m.o.Model }

// Host returns the host (and port) of the base URL, for the mode line.
func (m *Model) Host() string {
	u, err := url.Parse(m.o.BaseURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// Complete sends one chat-completions request (system and user message,
// max_tokens from req.MaxTokens, a JSON response format when req.JSON),
// retrying as the package documents, and returns the first answer with its
// reported usage and Live true. Response.Attempts lists every attempt, with
// the error too. The error wraps routing.ErrUnavailable when the server
// could not answer, and is ctx's error when ctx ended.
func (m *Model) Complete(ctx context.Context, req routing.Request) (routing.Response, error) {
	if err := m.o.Limiter.acquire(ctx); err != nil {
		return routing.Response{}, err
	}
	defer m.o.Limiter.release()
	// Secrets never leave the machine, whoever built the request.
	req.System, req.Prompt = routing.Redact(req.System), routing.Redact(req.Prompt)

	var attempts []routing.Attempt
	retries := 0
	for n := 1; ; n++ {
		format := m.format.Load()
		start := m.o.Now()
		resp, fail := m.attempt(ctx, req, format)
		a := routing.Attempt{Number: n, Status: fail.status, Latency: m.o.Now().Sub(start)}
		if fail.err == nil {
			a.Status = http.StatusOK
			attempts = append(attempts, a)
			resp.Attempts = attempts
			return resp, nil
		}
		a.Error = fail.err.Error()
		if ctx.Err() != nil {
			attempts = append(attempts, a)
			return routing.Response{Attempts: attempts}, ctx.Err()
		}
		var wait time.Duration
		switch {
		case fail.formatRefused && req.JSON && format < formatNone:
			// Not a retry: the server told us what it does not support.
			m.format.CompareAndSwap(format, format+1)
			a.Error += "; asking again without " + formatName(format)
		case fail.retryable && retries < m.o.MaxRetries:
			retries++
			wait = m.backoff(retries)
			if fail.retryAfter > 0 || fail.hasRetryAfter {
				wait = fail.retryAfter
			}
			if wait > m.o.MaxRetryAfter {
				attempts = append(attempts, a)
				return routing.Response{Attempts: attempts}, fmt.Errorf("%s: the server asks to wait %s, more than the %s allowed: %w",
					m.o.Model, wait.Round(time.Second), m.o.MaxRetryAfter, routing.ErrUnavailable)
			}
			a.Wait = wait
		default:
			attempts = append(attempts, a)
			err := fmt.Errorf("%s: %s", m.o.Model, a.Error)
			if fail.retryable {
				err = fmt.Errorf("%s: %d attempts failed, the last: %s: %w", m.o.Model, n, a.Error, routing.ErrUnavailable)
			} else if fail.unavailable {
				err = fmt.Errorf("%s: %s: %w", m.o.Model, a.Error, routing.ErrUnavailable)
			}
			return routing.Response{Attempts: attempts}, err
		}
		attempts = append(attempts, a)
		if wait > 0 {
			if err := m.o.Sleep(ctx, wait); err != nil {
				return routing.Response{Attempts: attempts}, err
			}
		}
	}
}

// failure is how one attempt failed; err nil means it answered.
type failure struct {
	err           error
	status        int
	retryable     bool
	unavailable   bool
	formatRefused bool
	retryAfter    time.Duration
	hasRetryAfter bool
}

// attempt makes one request under its own timeout.
func (m *Model) attempt(ctx context.Context, req routing.Request, format int32) (routing.Response, failure) {
	actx, cancel := context.WithTimeout(ctx, m.o.Timeout)
	defer cancel()
	params := sdk.ChatCompletionNewParams{
		Model: m.o.Model,
		Messages: []sdk.ChatCompletionMessageParamUnion{
			sdk.SystemMessage(req.System),
			sdk.UserMessage(req.Prompt),
		},
	}
	if req.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: every compatible server
		// knows it.
		params.MaxTokens = sdk.Int(int64(req.MaxTokens))
	}
	if req.JSON {
		switch format {
		case formatSchema:
			params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: routing.AnswerSchemaName, Strict: sdk.Bool(true), Schema: routing.AnswerSchema(),
				},
			}
		case formatObject:
			jo := shared.NewResponseFormatJSONObjectParam()
			params.ResponseFormat.OfJSONObject = &jo
		}
	}
	var raw *http.Response
	cc, err := m.client.Chat.Completions.New(actx, params, option.WithResponseInto(&raw))
	if err != nil {
		return routing.Response{}, m.classify(ctx, actx, raw, err)
	}
	if len(cc.Choices) == 0 {
		return routing.Response{}, failure{err: errors.New("the answer has no choices"), status: http.StatusOK}
	}
	msg := cc.Choices[0].Message
	text := msg.Content
	if text == "" && msg.Refusal != "" {
		return routing.Response{}, failure{err: fmt.Errorf("the model refused: %.200s", msg.Refusal), status: http.StatusOK}
	}
	resp := routing.Response{Text: text, Live: true}
	if cc.JSON.Usage.Valid() {
		resp.PromptTokens, resp.CompletionTokens = int(cc.Usage.PromptTokens), int(cc.Usage.CompletionTokens)
	}
	return resp, failure{}
}

// classify turns a failed request into a failure.
func (m *Model) classify(ctx, actx context.Context, raw *http.Response, err error) failure {
	if ctx.Err() != nil {
		return failure{err: ctx.Err()}
	}
	if errors.Is(err, errBodyTooLarge) {
		return failure{err: fmt.Errorf("the answer passed the %d-byte limit", m.o.MaxResponseBytes), status: http.StatusOK}
	}
	status := 0
	if raw != nil {
		status = raw.StatusCode
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status = apiErr.StatusCode
	}
	if status == 0 || status < 300 {
		if actx.Err() != nil {
			return failure{err: fmt.Errorf("timeout after %s", m.o.Timeout), retryable: true}
		}
		if status >= 200 && status < 300 {
			// The server answered 2xx with a body the client could not read.
			return failure{err: fmt.Errorf("unreadable answer: %s", clean(err.Error(), m.o.APIKey)), status: status}
		}
		return failure{err: fmt.Errorf("connection error: %s", clean(err.Error(), m.o.APIKey)), retryable: true}
	}
	code, msg := "", ""
	if apiErr != nil {
		code, msg = firstNonEmpty(apiErr.Code, apiErr.Type), apiErr.Message
	}
	what := strings.ToLower(http.StatusText(status))
	if code != "" {
		what += " (" + code + ")"
	}
	if msg != "" {
		what += ": " + msg
	}
	f := failure{err: errors.New(clean(clip(what, 300), m.o.APIKey)), status: status}
	switch {
	case apiErr != nil && (apiErr.Code == "insufficient_quota" || apiErr.Type == "insufficient_quota"):
		f.unavailable = true
	case status == 408 || status == 409 || status == 429 || status >= 500:
		f.retryable = true
		if raw != nil {
			f.retryAfter, f.hasRetryAfter = retryAfter(raw.Header, m.o.Now())
		}
	case status == 401 || status == 403 || status == 404:
		f.unavailable = true
	case (status == 400 || status == 422) && apiErr != nil:
		l := strings.ToLower(msg + " " + apiErr.Param)
		f.formatRefused = strings.Contains(l, "response_format") || strings.Contains(l, "json_schema") || strings.Contains(l, "json_object")
	}
	return f
}

// backoff is the wait before retry n (1-based): the base doubled n-1 times,
// capped, with equal jitter (half fixed, half random).
func (m *Model) backoff(n int) time.Duration {
	d := float64(m.o.BaseBackoff) * math.Pow(2, float64(n-1))
	d = math.Min(d, float64(m.o.MaxBackoff))
	return time.Duration(d/2 + d/2*m.o.Jitter())
}

// retryAfter reads Retry-After (delay seconds or an HTTP date) or OpenAI's
// retry-after-ms. A date in the past means now.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsNaN(s) || s > 1e6 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func formatName(f int32) string {
	if f == formatSchema {
		return "the JSON schema"
	}
	return "the JSON response format"
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// clean removes the API key from a text, should a server or a transport
// error ever echo it.
func clean(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, routing.Redacted)
	}
	return routing.Redact(s)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func transport(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// errBodyTooLarge is returned by a body past MaxResponseBytes.
var errBodyTooLarge = errors.New("response body too large")

// limitBody caps every response body.
type limitBody struct {
	next http.RoundTripper
	max  int64
}

func (l limitBody) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.next.RoundTrip(r)
	if err != nil || res.Body == nil {
		return res, err
	}
	res.Body = &cappedBody{rc: res.Body, left: l.max}
	return res, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := c.rc.Read(one[:]); n > 0 {
			return 0, errBodyTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }
