package notify

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSendPostsJSON(t *testing.T) {
	api := newFakeAPI(t, func(APIRequest) (int, http.Header, string) { return 202, nil, `{"ok":true}` })
	got, err := send(context.Background(), nil, request{What: "test", URL: api.URL + "/x?y=1", Header: http.Header{"X-Key": {"k"}}, Body: map[string]int{"a": 1}})
	if err != nil || string(got.Body) != `{"ok":true}` {
		t.Fatalf("send = %q, %v", got.Body, err)
	}
	req := api.Last(t)
	if req.Method != http.MethodPost || req.Path != "/x" || req.Query != "y=1" || string(req.Body) != `{"a":1}` ||
		req.Header.Get("Content-Type") != "application/json" || req.Header.Get("X-Key") != "k" {
		t.Errorf("request %+v", req)
	}
	// Raw JSON is sent as is.
	if _, err := send(context.Background(), nil, request{URL: api.URL, Body: []byte(`[1]`)}); err != nil || string(api.Last(t).Body) != `[1]` {
		t.Errorf("raw body: %v %q", err, api.Last(t).Body)
	}
}

// TestSendClassifiesAnswers holds the classification every receiver
// relies on: what is refused is never retried, what is throttled or broken
// is retried, after the Retry-After the answer gave.
func TestSendClassifiesAnswers(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []errorAnswer{
		{name: "400 with its error body", status: 400, body: `{"message":"Request body is not processable","errors":["message is empty"]}`, permanent: true, bodyHas: `"errors":["message is empty"]`},
		{name: "401", status: 401, body: `{"message":"Key format is not valid!"}`, permanent: true, bodyHas: "Key format is not valid!"},
		{name: "403", status: 403, body: `forbidden`, permanent: true, bodyHas: "forbidden"},
		{name: "404", status: 404, body: `{"message":"Alert not found"}`, permanent: true, bodyHas: "Alert not found"},
		{name: "413", status: 413, body: `too large`, permanent: true, bodyHas: "too large"},
		{name: "422", status: 422, body: `{"message":"priority is not valid"}`, permanent: true, bodyHas: "priority is not valid"},
		{name: "a redirect is not followed", status: 302, header: http.Header{"Location": {"https://elsewhere.example.com/"}}, permanent: true},
		{name: "429 with Retry-After seconds", status: 429, header: http.Header{"Retry-After": {"30"}}, retryAfter: 30 * time.Second},
		{name: "429 without Retry-After", status: 429},
		{name: "500", status: 500, body: "oops", bodyHas: "oops"},
		{name: "503 with Retry-After in seconds", status: 503, header: http.Header{"Retry-After": {"7"}}, retryAfter: 7 * time.Second},
		{name: "408", status: 408},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t, func(APIRequest) (int, http.Header, string) { return tt.status, tt.header, tt.body })
			_, err := send(context.Background(), nil, request{URL: api.URL, Body: map[string]string{}})
			checkClassified(t, err, tt)
			if n := len(api.Requests()); n != 1 {
				t.Errorf("%d requests, want 1 (no redirect followed, no retry inside)", n)
			}
		})
	}
	t.Run("503 with Retry-After as an HTTP date", func(t *testing.T) {
		api := newFakeAPI(t, func(APIRequest) (int, http.Header, string) {
			return 503, http.Header{"Retry-After": {date}}, "maintenance"
		})
		_, err := send(context.Background(), nil, request{URL: api.URL, Body: 1})
		se := asSendError(err)
		if se.Permanent || se.Status != 503 || se.RetryAfter < 80*time.Second || se.RetryAfter > 90*time.Second {
			t.Errorf("SendError %+v, want retried after about 90s", se)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"Sun, 01 Mar 2026 10:01:30 GMT", 90 * time.Second},
		{"Sunday, 01-Mar-26 10:00:10 GMT", 10 * time.Second}, // RFC 850, obsolete but allowed
		{"Sun, 01 Mar 2026 09:59:00 GMT", 0},                 // past
		{"soon", 0},
		{"99999999999", maxRetryAfter},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.v, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

func TestSendNoAnswerIsRetried(t *testing.T) {
	t.Run("timeout from ctx", func(t *testing.T) {
		s := HangingAPI(t)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := send(ctx, nil, request{URL: s.URL + "/secret-path?token=abc", Body: 1})
		se := asSendError(err)
		if se.Permanent || se.Status != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("SendError %+v (%v), want retried, no status, deadline exceeded", se, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("took %s: the ctx's deadline was not the request's", time.Since(start))
		}
		if strings.Contains(err.Error(), "secret-path") || strings.Contains(err.Error(), "abc") {
			t.Errorf("error %q shows the URL's path or query", err)
		}
	})
	t.Run("refused connection", func(t *testing.T) {
		_, err := send(context.Background(), nil, request{URL: RefusedURL(t), Body: 1})
		se := asSendError(err)
		if se.Permanent || se.Status != 0 || !strings.Contains(err.Error(), "refused") {
			t.Errorf("SendError %+v (%v), want retried, no status", se, err)
		}
	})
}

func TestSendBoundsTheBody(t *testing.T) {
	api := newFakeAPI(t, func(APIRequest) (int, http.Header, string) { return 200, nil, "" })
	_, err := send(context.Background(), nil, request{URL: api.URL, Body: strings.Repeat("x", maxRequestBody)})
	if se := asSendError(err); !se.Permanent || se.Status != 0 {
		t.Errorf("oversized body: %v, want refused permanently before sending", err)
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestSendHidesSecrets(t *testing.T) {
	secret, err := ParseSecret("S3CR3T-KEY-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	api := newFakeAPI(t, func(req APIRequest) (int, http.Header, string) {
		return 400, nil, `{"message":"invalid key S3CR3T-KEY-0123456789 in ` + string(req.Body) + `"}`
	})
	_, err = send(context.Background(), nil, request{URL: api.URL, Body: map[string]string{"key": secret.Reveal()}, Secrets: []string{secret.Reveal()}})
	if err == nil || strings.Contains(err.Error(), secret.Reveal()) || strings.Contains(asSendError(err).Body, secret.Reveal()) {
		t.Errorf("error %v shows the secret", err)
	}
	if !strings.Contains(asSendError(err).Body, "invalid key xxxxx") {
		t.Errorf("body %q, want the answer with the secret masked", asSendError(err).Body)
	}
	// An error body is kept to its first KiB.
	api.Handle(Replies(func(APIRequest) (int, http.Header, string) { return 422, nil, strings.Repeat("é", 4000) }))
	_, err = send(context.Background(), nil, request{URL: api.URL, Body: 1})
	if b := asSendError(err).Body; len(b) > maxErrorBody || !strings.HasPrefix(b, "éé") {
		t.Errorf("body of %d bytes, want at most %d", len(b), maxErrorBody)
	}
}
