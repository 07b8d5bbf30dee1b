package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file holds what the tests of every receiver share: a fake
// receiver API, the checks of a failed Send (no answer in time, an error
// answer classified), decodeJSON. The internal
// tests and those of package notify_test use them (hence the exported
// names, which only the test build has).

// APIRequest is a request a FakeAPI received.
type APIRequest struct {
	Method string
	// Path is the request's path as sent (escaped); Query its raw query.
	Path, Query string
	Header      http.Header
	Body        []byte
}

// FakeAPI is a receiver's API on loopback (httptest): it records every
// request, then answers it with its handler. It is closed when the test
// ends.
type FakeAPI struct {
	*httptest.Server
	mu     sync.Mutex
	got    []APIRequest
	handle func(w http.ResponseWriter, r *http.Request, body []byte)
}

// NewFakeAPI starts a FakeAPI that answers with handle, which is given the
// body already read; a nil handle answers 200 "ok".
func NewFakeAPI(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *FakeAPI {
	t.Helper()
	f := &FakeAPI{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the whole body first also lets the server notice a
		// client that gives up (r.Context() ends).
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, apiRequestOf(r, body))
		handle := f.handle
		f.mu.Unlock()
		if handle == nil {
			_, _ = io.WriteString(w, "ok")
			return
		}
		handle(w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func apiRequestOf(r *http.Request, body []byte) APIRequest {
	return APIRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
}

// Handle replaces the API's handler.
func (f *FakeAPI) Handle(handle func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handle = handle
}

// Requests returns what the API received.
func (f *FakeAPI) Requests() []APIRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// Last returns the last request, failing t when there is none.
func (f *FakeAPI) Last(t testing.TB) APIRequest {
	t.Helper()
	got := f.Requests()
	if len(got) == 0 {
		t.Fatal("the API received no request")
	}
	return got[len(got)-1]
}

// Only returns the one request, failing t when there is not exactly one.
func (f *FakeAPI) Only(t testing.TB) APIRequest {
	t.Helper()
	got := f.Requests()
	if len(got) != 1 {
		t.Fatalf("the API received %d requests, want 1", len(got))
	}
	return got[0]
}

// Replies returns a handler that answers each request with what answer
// returns for it: a status, header fields, a body (application/json unless
// the header says otherwise).
func Replies(answer func(req APIRequest) (status int, header http.Header, body string)) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		status, h, b := answer(apiRequestOf(r, body))
		for k, vs := range h {
			w.Header()[k] = vs
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, b)
	}
}

// newFakeAPI starts a FakeAPI that answers as answer says (Replies).
func newFakeAPI(t testing.TB, answer func(req APIRequest) (int, http.Header, string)) *FakeAPI {
	t.Helper()
	return NewFakeAPI(t, Replies(answer))
}

// HangingAPI answers nothing until the client gives up or the test ends
// (so that closing the server never waits on a handler).
func HangingAPI(t testing.TB) *FakeAPI {
	t.Helper()
	release := make(chan struct{})
	f := NewFakeAPI(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close: cleanups run last first
	return f
}

// RefusedURL returns a loopback address nothing listens on.
func RefusedURL(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

// CheckNoAnswerInTime sends n through r under a context that ends after
// d, r's peer never answering, and fails t unless Send came back in time
// with a failure that is retried, has no status, and says the deadline
// passed. It returns the failure.
func CheckNoAnswerInTime(t testing.TB, r Receiver, n Notification, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	_, err := r.Send(ctx, n)
	var se *SendError
	if err == nil || errors.As(err, &se) && (se.Permanent || se.Status != 0) {
		t.Fatalf("error %v, want a retried failure without an answer", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not say the deadline passed", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Send returned after %s, past its context's deadline", took)
	}
	return err
}

// decodeJSON decodes b into a fresh value of v's type, failing t.
func decodeJSON[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("request body is not the JSON expected: %v\n%s", err, b)
	}
	return v
}

// errorAnswer is an error answer of an API and how it must be classified.
type errorAnswer struct {
	name       string
	status     int
	header     http.Header
	body       string
	permanent  bool
	retryAfter time.Duration
	// bodyHas is what SendError.Body must hold of the answer.
	bodyHas string
}

// checkClassified checks that err classifies the answer as want says.
func checkClassified(t *testing.T, err error, want errorAnswer) {
	t.Helper()
	se, ok := err.(*SendError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *SendError", err, err)
	}
	if se.Status != want.status || se.Permanent != want.permanent || se.RetryAfter != want.retryAfter {
		t.Errorf("SendError{Status %d, Permanent %v, RetryAfter %s}, want {%d, %v, %s}: %v",
			se.Status, se.Permanent, se.RetryAfter, want.status, want.permanent, want.retryAfter, se)
	}
	if !strings.Contains(se.Body, want.bodyHas) {
		t.Errorf("SendError.Body = %q, want it to hold %q", se.Body, want.bodyHas)
	}
}
