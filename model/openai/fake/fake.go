package fake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Reply is one scripted answer. The zero Reply is a 200 with empty content
// and usage 0/0.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Content is the assistant message's content (status 200).
	Content string
	// Body, when not empty, is sent as the whole response body instead of a
	// chat completion or an error object (invalid JSON, odd shapes).
	Body string
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
	// ErrorCode and ErrorType fill the error object of a non-2xx answer
	// (for example "insufficient_quota").
	ErrorCode, ErrorType string
	// Message is the error object's message.
	Message string
	// Delay holds the answer back (timeouts); a cancelled request ends it.
	Delay time.Duration
	// PromptTokens and CompletionTokens are the reported usage.
	PromptTokens, CompletionTokens int
	// NoUsage leaves the usage object out.
	NoUsage bool
	// Model is the model name reported; empty echoes the request's.
	Model string
}

// Received is one request the server got.
type Received struct {
	Path   string
	Header http.Header
	Body   []byte
	// Request is the body decoded (zero when it was not JSON).
	Request ChatRequest
}

// ChatRequest is the part of a chat-completions request the fake reads.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	ResponseFormat      json.RawMessage `json:"response_format"`
}

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Text returns the content of the first message with role.
func (r ChatRequest) Text(role string) string {
	for _, m := range r.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

// Responder answers one request; Server calls it for every request after
// the script is used up.
type Responder func(Received) Reply

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to configure a client with, ending in /v1.
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	script   []Reply
	next     Responder
	received []Received
}

// New starts a server that answers the script in order, then with then
// (nil: a 500 "script exhausted" error, so an unplanned call shows).
func New(then Responder, script ...Reply) *Server {
	s := &Server{script: script, next: then}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Received returns a copy of the requests received so far, in order.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Calls returns how many requests the server received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &rec.Request)
	s.mu.Lock()
	s.received = append(s.received, rec)
	var rep Reply
	switch {
	case len(s.script) > 0:
		rep, s.script = s.script[0], s.script[1:]
	case s.next != nil:
		next := s.next
		s.mu.Unlock()
		rep = next(rec)
		s.mu.Lock()
	default:
		rep = Reply{Status: http.StatusInternalServerError, Message: "fake: script exhausted"}
	}
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		rep = Reply{Status: http.StatusNotFound, Message: "fake: no route " + r.Method + " " + r.URL.Path}
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	write(w, rec.Request, rep)
}

func write(w http.ResponseWriter, req ChatRequest, rep Reply) {
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Body != "" {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	if status >= 300 {
		w.WriteHeader(status)
		msg := rep.Message
		if msg == "" {
			msg = http.StatusText(status)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": msg, "type": rep.ErrorType, "code": nullable(rep.ErrorCode), "param": nil,
		}})
		return
	}
	model := rep.Model
	if model == "" {
		model = req.Model
	}
	out := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 1767225600, "model": model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.Content, "refusal": nil},
		}},
	}
	if !rep.NoUsage {
		out["usage"] = map[string]any{
			"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
			"total_tokens": rep.PromptTokens + rep.CompletionTokens,
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Answer is a 200 reply with content and the given usage.
func Answer(content string, promptTokens, completionTokens int) Reply {
	return Reply{Content: content, PromptTokens: promptTokens, CompletionTokens: completionTokens}
}

// Status is an error reply with the HTTP status and, when retryAfter is not
// empty, a Retry-After header.
func Status(code int, retryAfter string) Reply {
	return Reply{Status: code, RetryAfter: retryAfter, Message: "fake: " + strconv.Itoa(code) + " " + http.StatusText(code)}
}

// InsufficientQuota is OpenAI's 429 for an account out of credit: not a
// rate limit, never worth a retry.
func InsufficientQuota() Reply {
	return Reply{Status: http.StatusTooManyRequests, ErrorCode: "insufficient_quota", ErrorType: "insufficient_quota",
		Message: "You exceeded your current quota, please check your plan and billing details."}
}

// String describes the reply for test failure messages.
func (r Reply) String() string {
	switch {
	case r.Body != "":
		return fmt.Sprintf("body(%d, %.40q)", r.Status, r.Body)
	case r.Status >= 300:
		return fmt.Sprintf("status(%d, retry-after %q, code %q)", r.Status, r.RetryAfter, r.ErrorCode)
	}
	return fmt.Sprintf("answer(%.60q, usage %d/%d, none=%v)", r.Content, r.PromptTokens, r.CompletionTokens, r.NoUsage)
}
