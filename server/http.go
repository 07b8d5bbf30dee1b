package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall/server/cockpit"
)

type ctxKey int

const requestIDKey ctxKey = 0

// requestID returns the request id the middleware gave r.
func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware gives every request an id (the client's X-Request-Id when it is
// a plain token, else a new one), a timeout, panic recovery, an access log
// line and its metrics, and gzips the API's answers (cockpit.Compress).
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		cockpit.SecurityHeaders(w.Header())
		ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), requestIDKey, id), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in handler", zap.Any("panic", p), zap.String("request_id", id), zap.Stack("stack"))
				if sw.status == 0 {
					writeError(sw, r, http.StatusInternalServerError, "internal error")
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			s.obs.Request(route, sw.status, d)
			s.log.Info("request",
				zap.String("request_id", id),
				zap.String("method", r.Method),
				zap.String("path", r.URL.Path),
				zap.String("route", route),
				zap.Int("status", sw.status),
				zap.Int64("bytes", sw.bytes),
				zap.Duration("duration", d),
				zap.String("remote", r.RemoteAddr),
				zap.String("user_agent", r.UserAgent()))
		}()
		h := next
		if strings.HasPrefix(r.URL.Path, "/api/") {
			// The API's JSON is gzipped as the cockpit's pages are
			// (/metrics compresses itself).
			h = cockpit.Compress(next)
		}
		h.ServeHTTP(sw, r)
	})
}

// writeJSON answers v with code. The encoder escapes HTML, so alert text is
// never rendered as markup by whatever shows the answer.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is every error answer.
type errorBody struct {
	Error     string `json:"error"`
	RequestID string `json:"request_id,omitempty"`
	// Integrity is "failed" when what was asked for is stored but does
	// not match its seal in the audit chain (openrecall.ErrIntegrity).
	Integrity string `json:"integrity,omitempty"`
}

func writeError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg, RequestID: requestID(r)})
}

// tokenDigest hides a secret's length from the timing of comparisons.
func tokenDigest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// lookupToken returns the configured token whose secret is secret.
func (s *Server) lookupToken(secret string) (Token, bool) {
	if secret == "" {
		return Token{}, false
	}
	got := tokenDigest(secret)
	var found Token
	ok := false
	for _, t := range s.cfg.Tokens {
		want := tokenDigest(t.Secret)
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 && !ok {
			found, ok = t, true
		}
	}
	return found, ok
}

// bearer returns the token r presents, "" when there is none: a bearer
// token in the Authorization header; else the password of HTTP basic
// authentication (senders that only take a URL put it there:
// https://openrecall:TOKEN@host/…); else the token query parameter
// (?token=TOKEN, for senders that can set neither). Neither the header nor
// the query is ever logged: the access log records the path alone.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	if _, pass, ok := r.BasicAuth(); ok && pass != "" {
		return pass
	}
	return strings.TrimSpace(r.URL.Query().Get("token"))
}

// authStatus says whether secret grants scope: 0 when it does (or no token
// is configured), 401 for a missing or unknown token, 403 for a token
// without the scope.
func (s *Server) authStatus(secret, scope string) int {
	if len(s.cfg.Tokens) == 0 {
		return 0
	}
	t, ok := s.lookupToken(secret)
	switch {
	case !ok:
		return http.StatusUnauthorized
	case !slices.Contains(t.Scopes, scope):
		return http.StatusForbidden
	}
	return 0
}

// authorize answers 401 or 403 and returns false unless r's bearer token
// grants scope.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, scope string) bool {
	switch s.authStatus(bearer(r), scope) {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="openrecall"`)
		writeError(w, r, http.StatusUnauthorized, "missing or unknown bearer token")
		return false
	case http.StatusForbidden:
		writeError(w, r, http.StatusForbidden, "this token lacks the "+scope+" scope")
		return false
	}
	return true
}

// tokenKey is the context key of the token that authorised a request.
type tokenKey struct{}

// scoped wraps h behind a scope check; h finds the token that passed it in
// the request's context (actor reads it).
func (s *Server) scoped(scope string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorize(w, r, scope) {
			return
		}
		if t, ok := s.lookupToken(bearer(r)); ok {
			r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, t))
		}
		h(w, r)
	}
}

// actor returns the analyst a write over the API records (a retain, a
// group decision, an exception approved, written or revoked): the name of
// the token that authorised it, never a name the body gives. A body may
// repeat that name or leave it out; another name is answered 403, and so
// is a token without a name (an environment token, an unnamed entry of
// server.tokens): it cannot speak for anyone. With no token configured (a
// loopback server) there is no credential to speak for: the body's
// analyst is taken as given, as the command line's --analyst is.
func (s *Server) actor(w http.ResponseWriter, r *http.Request, claimed string) (string, bool) {
	if len(s.cfg.Tokens) == 0 {
		return claimed, true
	}
	t, _ := r.Context().Value(tokenKey{}).(Token)
	if t.Analyst == "" {
		writeError(w, r, http.StatusForbidden, "this token has no name, and a decision records who took it: "+
			"name the token in server.tokens (its name is the analyst) to write decisions with it")
		return "", false
	}
	if c := strings.TrimSpace(claimed); c != "" && c != t.Analyst {
		writeError(w, r, http.StatusForbidden, fmt.Sprintf("analyst %q is not this token's name: a token writes as its own analyst (%q); leave analyst out or give that name",
			claimed, t.Analyst))
		return "", false
	}
	return t.Analyst, true
}
