package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// ModelHealth is what a model tier's circuit saw last (routing.Circuit):
// how many of its calls failed in a row, and whether that opened it.
type ModelHealth struct {
	Tier string `json:"tier"`
	// Open is set once enough calls in a row failed, until one succeeds.
	Open bool `json:"open"`
	// ConsecutiveFailures counts the calls that failed since the last
	// success; Since is when the first of them failed.
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Since               *time.Time `json:"since,omitempty"`
	// LastError is the latest failure's error, shown only to a request
	// with a token (it may name the model server).
	LastError string `json:"last_error,omitempty"`
}

// readiness is the answer of GET /readyz.
type readiness struct {
	Ready  bool            `json:"ready"`
	Mode   openrecall.Mode `json:"mode"`
	Shadow bool            `json:"shadow"`
	// Database is "writable" when the write probe passed, else "not
	// writable: " and the kind of failure (the error itself only with a
	// token).
	Database string `json:"database"`
	Models   string `json:"models"`
	// ModelTiers is each tier's circuit; Degraded is set while one is
	// open: alerts are still accepted, and those the failing tier should
	// analyse go to a person.
	ModelTiers []ModelHealth `json:"model_tiers,omitempty"`
	Degraded   bool          `json:"degraded,omitempty"`
	InboxDepth int           `json:"inbox_depth"`
	InboxLimit int           `json:"inbox_limit"`
}

// readyz answers GET /readyz: 200 when ready, 503 when not. Without a
// token (a token of any scope) errors are named by their kind only: a
// database error can carry its user, host and database name.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	_, known := s.lookupToken(bearer(r))
	rd := s.readinessFor(r.Context(), len(s.cfg.Tokens) == 0 || known)
	code := http.StatusOK
	if !rd.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

// readiness is what the cockpit's mode badge shows (behind its login).
func (s *Server) readiness(ctx context.Context) readiness { return s.readinessFor(ctx, true) }

// readinessFor is the readiness, with errors in full when detailed.
func (s *Server) readinessFor(ctx context.Context, detailed bool) readiness {
	mode, err := s.daemon.Mode()
	rd := readiness{Ready: s.ready.Load() && err == nil, Shadow: s.cfg.Shadow, Database: "writable", InboxLimit: s.cfg.InboxLimit}
	if err == nil {
		rd.Mode = mode
		rd.Models = "reachable"
		if rd.Mode.Model == "deterministic" {
			rd.Models = "reachable (deterministic local analyst, no live calls)"
		}
	} else {
		rd.Models = "unavailable: " + errorText(err, detailed)
	}
	if s.cfg.ModelHealth != nil {
		s.modelHealth(&rd, detailed)
	}
	if err := s.cfg.Store.Writable(ctx); err != nil {
		rd.Ready, rd.Database = false, "not writable: "+errorText(err, detailed)
	}
	if n, err := s.cfg.Store.InboxDepth(ctx); err == nil {
		rd.InboxDepth = n
		if n >= s.cfg.InboxLimit {
			rd.Ready = false
		}
	}
	return rd
}

// modelHealth adds the tiers' circuits to rd. An open circuit degrades
// readiness without making it false: the receiver still accepts (nothing
// is lost, the alerts go to a person), and only calls can close a circuit.
func (s *Server) modelHealth(rd *readiness, detailed bool) {
	var failing []string
	for _, h := range s.cfg.ModelHealth() {
		if !detailed {
			h.LastError = ""
		}
		rd.ModelTiers = append(rd.ModelTiers, h)
		if h.Open {
			rd.Degraded = true
			failing = append(failing, fmt.Sprintf("%s tier: %d calls in a row failed", h.Tier, h.ConsecutiveFailures))
		}
	}
	if len(failing) > 0 {
		rd.Models = "failing: " + strings.Join(failing, "; ") + "; its alerts go to a person"
	}
}

// errorText is err in full when detailed, else only its kind: no user,
// host, database or path.
func errorText(err error, detailed bool) string {
	if detailed {
		return err.Error()
	}
	kind := "a database or model error"
	switch {
	case errors.Is(err, openrecall.ErrNoSpace):
		kind = "no space left for the database"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		kind = "timed out"
	}
	return kind + " (send a token to see it)"
}
