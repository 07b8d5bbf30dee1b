package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is how every HTTP receiver speaks HTTP: one POST (send), and
// one reading of the answer into a *SendError that says whether to retry.
// No error shows a URL's path or query (a webhook's URL may be its
// credential) nor any secret the request carries, even when the answer
// echoes it.

// Bounds of one request.
const (
	// maxRequestBody bounds what a receiver posts: 512 KiB, PagerDuty's
	// limit for one event, more than any other receiver's message takes.
	// A receiver trims its fields to stay far below it; a body past it is
	// refused before it is sent (permanently: it would be refused again).
	maxRequestBody = 512 << 10
	// maxResponseBody bounds how much of an answer is read.
	maxResponseBody = 64 << 10
	// maxErrorBody bounds the part of an answer a SendError keeps, for the
	// person reading a dead letter.
	maxErrorBody = 1 << 10
	// defaultTimeout bounds a request whose context has no deadline (a
	// receiver that never answers must not hold a delivery for ever), and
	// one Send of a receiver whose configuration says no timeout.
	defaultTimeout = 10 * time.Second
	// maxRetryAfter bounds the wait a Retry-After asks for.
	maxRetryAfter = 24 * time.Hour
)

// request is one POST a receiver sends.
type request struct {
	// What names the receiver, and the call when it makes several ("slack
	// chat.update"): every error begins with it.
	What string
	URL  string
	// SecretURL says the URL is itself a credential (a Slack or Teams
	// webhook's, a webhook URL held as a Secret): no error shows it, nor
	// its long path segments and query values (urlSecrets), even when the
	// answer echoes them.
	SecretURL bool
	// ContentType is the body's type, "application/json" when empty.
	ContentType string
	// Header holds the request's other fields (Authorization, …).
	Header http.Header
	// Body is sent as is when it is a []byte or a json.RawMessage, else
	// encoded with encoding/json.
	Body any
	// Secrets are the values no error may show: keys, tokens, signing
	// secrets.
	Secrets []string
}

// answer is a 2xx answer: its status, its header and the first 64 KiB of
// its body.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// send POSTs req under ctx and returns the answer when its status is 2xx.
// It follows no redirect, whatever client does: an API that answers 3xx is
// misconfigured, and a followed POST turns into a GET or carries a
// credential to another host. A nil client is a plain one. When ctx has no
// deadline the request ends after defaultTimeout.
//
// Every failure is a *SendError:
//   - 401 and 403: Permanent, "credential refused";
//   - every other 3xx and 4xx but 408, 425 and 429 (400, 404, 410, 413,
//     422, …): Permanent — the receiver refused the notification, and
//     sending it again changes nothing;
//   - 408, 425, 429 and 5xx: retried, with RetryAfter from the answer's
//     Retry-After (delay-seconds or an HTTP date, at most 24h; 0 when
//     absent);
//   - no answer (a timeout, a refused connection, a reset): retried,
//     Status 0;
//   - a body that cannot be encoded or is larger than 512 KiB: Permanent,
//     Status 0, nothing sent.
//
// A refusal keeps the start of the answer (Body, 1 KiB). An error shows the
// URL's scheme and host only, and every secret (req.Secrets, and the URL's
// parts when req.SecretURL) masked as xxxxx, in its text and its Body.
// send is safe for concurrent use with a shared client.
func send(ctx context.Context, client *http.Client, req request) (answer, error) {
	secrets := req.Secrets
	if req.SecretURL {
		secrets = append(urlSecrets(req.URL), secrets...)
	}
	payload, err := encodeBody(req.Body)
	if err != nil {
		return answer{}, &SendError{Permanent: true, Err: masked{fmt.Errorf("%s: encode the request: %w", req.What, err), secrets}}
	}
	if len(payload) > maxRequestBody {
		return answer{}, &SendError{Permanent: true,
			Err: fmt.Errorf("%s: request body of %d bytes is larger than %d", req.What, len(payload), maxRequestBody)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
	}
	where := origin(req.URL)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(payload))
	if err != nil {
		// Its text would quote the URL: only that it is invalid is said.
		return answer{}, &SendError{Permanent: true, Err: fmt.Errorf("%s: post to %s: invalid request", req.What, where)}
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	contentType := req.ContentType
	if contentType == "" {
		contentType = "application/json"
	}
	hr.Header.Set("Content-Type", contentType)
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "application/json")
	}
	if hr.Header.Get("User-Agent") == "" {
		hr.Header.Set("User-Agent", "openrecall")
	}
	resp, err := noRedirects(client).Do(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the whole URL
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer in time: %w", err)
		}
		return answer{}, &SendError{Err: masked{fmt.Errorf("%s: post to %s: %w", req.What, where, err), secrets}}
	}
	defer func() { _ = resp.Body.Close() }() // read below; nothing more to say
	// A body that breaks off is kept as far as it came: the status is the
	// answer, and a caller that needs the body (Slack) finds it
	// undecodable.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	a := answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if a.Status >= 200 && a.Status < 300 {
		return a, nil
	}
	return answer{}, refusal(req.What, where, a, secrets, time.Now())
}

// encodeBody returns body as send posts it.
func encodeBody(body any) ([]byte, error) {
	switch b := body.(type) {
	case []byte:
		return b, nil
	case json.RawMessage:
		return b, nil
	}
	return json.Marshal(body)
}

// refusal classifies a non-2xx answer from where (see send). Retry-After
// dates are read against now.
func refusal(what, where string, a answer, secrets []string, now time.Time) *SendError {
	e := &SendError{Status: a.Status, Body: snippet(a.Body, secrets...)}
	status := strings.ToLower(http.StatusText(a.Status))
	if status == "" {
		status = "an unknown status"
	}
	switch s := a.Status; {
	case s == http.StatusTooManyRequests, s == http.StatusRequestTimeout, s == http.StatusTooEarly:
		e.RetryAfter = parseRetryAfter(a.Header.Get("Retry-After"), now)
		e.Err = fmt.Errorf("%s: %s answered %s", what, where, status)
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		e.Permanent = true
		e.Err = fmt.Errorf("%s: credential refused by %s (%s)", what, where, status)
	case s >= 300 && s < 400:
		e.Permanent = true
		e.Err = fmt.Errorf("%s: %s answered %s, a redirect, which is not followed", what, where, status)
	case s >= 400 && s < 500:
		e.Permanent = true
		e.Err = fmt.Errorf("%s: %s refused the request (%s)", what, where, status)
	default:
		e.RetryAfter = parseRetryAfter(a.Header.Get("Retry-After"), now)
		e.Err = fmt.Errorf("%s: %s answered %s", what, where, status)
	}
	return e
}

// parseRetryAfter reads a Retry-After field (RFC 9110 §10.2.3):
// delay-seconds or an HTTP date, as a wait from now; 0 when absent,
// unreadable or past, and at most 24h.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// snippet returns the start of an answer for a person reading a dead
// letter: secrets masked, valid UTF-8 on one line, at most maxErrorBody
// bytes (an ellipsis last when it was cut). Masking comes first, so a
// secret is never cut in half and shown in part.
func snippet(b []byte, secrets ...string) string {
	s := oneLine(mask(strings.ToValidUTF8(string(b), "\uFFFD"), secrets))
	if len(s) > maxErrorBody {
		cut := maxErrorBody - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// urlSecrets returns what of a URL that is a credential an answer might
// echo: the URL itself, and each long path segment and query value (a
// Slack webhook's last segment, a Teams workflow's sig), as they are and
// escaped.
func urlSecrets(raw string) []string {
	out := []string{raw}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	long := func(s string) {
		if len(s) >= 16 {
			out = append(out, s)
		}
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		long(seg)
		if v, err := url.PathUnescape(seg); err == nil && v != seg {
			long(v)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			long(v)
			long(url.QueryEscape(v))
		}
	}
	return out
}

// mask replaces every non-empty secret in s with xxxxx.
func mask(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "xxxxx")
		}
	}
	return s
}

// masked is an error whose text has its secrets masked; it unwraps to
// the error it masks (errors.Is still finds context.DeadlineExceeded).
type masked struct {
	err     error
	secrets []string
}

func (m masked) Error() string { return mask(m.err.Error(), m.secrets) }
func (m masked) Unwrap() error { return m.err }

// origin returns target's scheme and host, which an error may show; never
// its path, query or user.
func origin(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "the receiver"
	}
	return u.Scheme + "://" + u.Host
}

// noRedirects returns a client that sends as c does (its transport, jar
// and timeout; a plain client's when c is nil) but follows no redirect.
func noRedirects(c *http.Client) *http.Client {
	var nc http.Client
	if c != nil {
		nc = *c
	}
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &nc
}

// checkURL reports whether u is an absolute http or https URL with a host,
// and https unless anyHTTP allows http or the host is this machine (a
// test's server): a credential does not cross a network in clear text.
// Its error does not repeat u, which may be or carry a credential; it
// reads after the field's name ("url is required").
func checkURL(u string, anyHTTP bool) error {
	if u == "" {
		return errors.New("is required")
	}
	parsed, err := url.Parse(u)
	if err != nil || webURL(u) == "" || parsed.Host == "" {
		return errors.New("is not an absolute http or https URL")
	}
	if parsed.Scheme == "http" && !anyHTTP && !loopback(parsed.Hostname()) {
		return errors.New("must be https (plain http only to a loopback address)")
	}
	return nil
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// orDefault returns a configured timeout, defaultTimeout when it is zero.
func orDefault(d time.Duration) time.Duration {
	if d == 0 {
		return defaultTimeout
	}
	return d
}

// asSendError returns err as a *SendError; a failure that is not one is
// wrapped as one that is retried.
func asSendError(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return &SendError{Err: err}
}
