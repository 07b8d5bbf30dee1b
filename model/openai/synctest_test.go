package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openrecall/openrecall/routing"
)

// The tests of this file run in a synctest bubble: the model's timers (the
// attempt timeout, the back-off sleep, the limiter's wait) and the server's
// delays run on the bubble's fake clock, so they take no real time and the
// times they measure are exact. The server is an in-memory RoundTripper (a
// loopback server's goroutines would live outside the bubble).

// roundTrip is an in-memory server: it answers each request in the
// caller's goroutine.
type roundTrip func(r *http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reply is an HTTP response of status with body and, when retryAfter is
// not empty, a Retry-After header.
func reply(r *http.Request, status int, retryAfter, body string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}

// completion is a chat completion whose content is answer.
func completion(r *http.Request) *http.Response {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bubble", "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
	return reply(r, http.StatusOK, "", string(b))
}

// bubbleModel is a Model on the in-memory server rt, on the real clock and
// sleep (the bubble's), with o edited by edit.
func bubbleModel(t *testing.T, rt roundTrip, edit func(*Options)) *Model {
	t.Helper()
	o := Options{BaseURL: "http://model.test/v1", APIKey: testKey, Model: "gpt-4o-mini", HTTPClient: &http.Client{Transport: rt},
		Jitter: func() float64 { return 0.5 }}
	if edit != nil {
		edit(&o)
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLimiterCapsCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight, peak atomic.Int32
		rt := roundTrip(func(r *http.Request) (*http.Response, error) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(10 * time.Millisecond) // the bubble's clock
			inFlight.Add(-1)
			return completion(r), nil
		})
		lim := NewLimiter(2)
		a := bubbleModel(t, rt, func(o *Options) { o.Limiter = lim })
		b := bubbleModel(t, rt, func(o *Options) { o.Limiter = lim; o.Model = "gpt-4o" })
		start := time.Now()
		done := make(chan struct{})
		for i := range 12 {
			go func() {
				defer func() { done <- struct{}{} }()
				m := a
				if i%2 == 1 {
					m = b
				}
				if _, err := m.Complete(context.Background(), req); err != nil {
					t.Error(err)
				}
			}()
		}
		for range 12 {
			<-done
		}
		if peak.Load() != 2 {
			t.Fatalf("%d calls in flight at most, want the limit, 2", peak.Load())
		}
		// Twelve calls of 10ms, two at a time: six rounds.
		if got := time.Since(start); got != 60*time.Millisecond {
			t.Fatalf("twelve calls took %s, want 60ms (two at a time)", got)
		}
	})
}

func TestCancelledContextEndsTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTrip(func(r *http.Request) (*http.Response, error) {
			select {
			case <-time.After(5 * time.Second):
				return completion(r), nil
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := bubbleModel(t, rt, nil).Complete(ctx, req)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, routing.ErrUnavailable) {
			t.Fatalf("error %v: want the context's, not unavailable", err)
		}
		if got := time.Since(start); got != 50*time.Millisecond {
			t.Fatalf("the call ended after %s, want at the context's deadline, 50ms", got)
		}
	})
}

// An attempt that outlasts Options.Timeout fails and is retried after the
// back-off; the product's own timer sleep waits it out.
func TestAttemptTimeoutIsRetriedAfterTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		rt := roundTrip(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 {
				<-r.Context().Done() // a server that never answers
				return nil, r.Context().Err()
			}
			return completion(r), nil
		})
		m := bubbleModel(t, rt, func(o *Options) {
			o.Timeout, o.BaseBackoff, o.MaxBackoff = 2*time.Second, time.Second, 8*time.Second
		})
		start := time.Now()
		resp, err := m.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Attempts) != 2 || resp.Attempts[0].Latency != 2*time.Second || resp.Attempts[0].Wait <= 0 {
			t.Fatalf("attempts %+v: want a 2s timeout, a back-off, then an answer", resp.Attempts)
		}
		if got, want := time.Since(start), 2*time.Second+resp.Attempts[0].Wait; got != want {
			t.Fatalf("the call took %s, want the timeout and the back-off, %s", got, want)
		}
	})
}

// Retry-After is honoured by the product's own sleep: the answer comes
// exactly that long after the refusal, and a context cancelled during the
// wait ends the call then.
func TestRetryAfterIsWaitedOnTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		rt := roundTrip(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1)%2 == 1 {
				return reply(r, http.StatusTooManyRequests, "3", `{"error":{"message":"slow down","type":"rate_limit"}}`), nil
			}
			return completion(r), nil
		})
		m := bubbleModel(t, rt, nil)
		start := time.Now()
		resp, err := m.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 3*time.Second || resp.Attempts[0].Wait != 3*time.Second {
			t.Fatalf("answered after %s (attempts %+v), want after the 3s Retry-After", got, resp.Attempts)
		}

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		_, err = m.Complete(ctx, req)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v: want the context's cancellation", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Fatalf("a cancelled back-off ended after %s, want at the cancellation, 1s", got)
		}
	})
}
