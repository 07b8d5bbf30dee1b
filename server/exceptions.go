package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// exceptionRequest is the body of POST /api/v1/exceptions: a person's
// approval of a proposal (proposal_id set), or an exception written
// directly (rule, service, max_severity, decision, expires).
type exceptionRequest struct {
	ProposalID  string                 `json:"proposal_id"`
	Rule        string                 `json:"rule"`
	Service     string                 `json:"service"`
	DNA         openrecall.Fingerprint `json:"dna"`
	Match       map[string]string      `json:"match"`
	MaxSeverity string                 `json:"max_severity"`
	Decision    string                 `json:"decision"`
	// Expires is a Go duration ("720h"); empty keeps a proposal's.
	Expires string `json:"expires"`
	Analyst string `json:"analyst"`
	Note    string `json:"note"`
}

// revokeRequest is the body of POST /api/v1/exceptions/{id}/revoke and of
// POST /api/v1/history/{analysis_id}/wrong: the analyst, when given, must
// be the token's name (Server.actor).
type revokeRequest struct {
	Analyst string `json:"analyst"`
	Reason  string `json:"reason"`
}

// exceptions answers GET /api/v1/exceptions: what `exception list -o json`
// prints; ?state= keeps one state.
func (s *Server) exceptions(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.UseCases.ListExceptions(r.Context(), r.URL.Query().Get("state"))
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// addException answers POST /api/v1/exceptions: approve a proposal or
// write an exception; 201 when one was stored.
func (s *Server) addException(w http.ResponseWriter, r *http.Request) {
	var req exceptionRequest
	if !s.bodyLimited(w, r) || !s.decodeBody(w, r, "exception body", &req) {
		return
	}
	var expiry time.Duration
	if req.Expires != "" {
		d, err := time.ParseDuration(req.Expires)
		if err != nil || d <= 0 {
			writeError(w, r, http.StatusBadRequest, "expires "+req.Expires+": want a positive duration such as 720h")
			return
		}
		expiry = d
	}
	analyst, ok := s.actor(w, r, req.Analyst)
	if !ok {
		return
	}
	if strings.TrimSpace(analyst) == "" {
		writeError(w, r, http.StatusBadRequest, "analyst is required: a person approves an exception")
		return
	}
	var ch usecase.ExceptionChange
	var err error
	if req.ProposalID != "" {
		ch, err = s.cfg.UseCases.ApproveProposal(r.Context(), usecase.ApproveRequest{ProposalID: req.ProposalID, Analyst: analyst, Expiry: expiry, Note: req.Note})
	} else {
		ch, err = s.cfg.UseCases.AddException(r.Context(), usecase.AddRequest{
			Identity: openrecall.Identity{Rule: req.Rule, Service: req.Service}, DNA: req.DNA, Match: req.Match,
			MaxSeverity: openrecall.Severity(req.MaxSeverity), Decision: openrecall.Decision(req.Decision),
			Expiry: expiry, Analyst: analyst, Note: req.Note,
		})
	}
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	code := http.StatusOK
	if ch.Changed {
		code = http.StatusCreated
	}
	writeJSON(w, code, ch)
}

// reasoned reads a body of an analyst and a reason (what, in errors) and
// returns it with the actor (Server.actor): 400 without an analyst, or
// without a reason (why says why one is needed).
func (s *Server) reasoned(w http.ResponseWriter, r *http.Request, what, why string) (revokeRequest, string, bool) {
	var req revokeRequest
	if !s.bodyLimited(w, r) || !s.decodeBody(w, r, what, &req) {
		return req, "", false
	}
	analyst, ok := s.actor(w, r, req.Analyst)
	switch {
	case !ok:
		return req, "", false
	case strings.TrimSpace(analyst) == "":
		writeError(w, r, http.StatusBadRequest, "analyst is required")
		return req, "", false
	case strings.TrimSpace(req.Reason) == "":
		writeError(w, r, http.StatusBadRequest, "reason is required: "+why)
		return req, "", false
	}
	return req, analyst, true
}

// revokeException answers POST /api/v1/exceptions/{id}/revoke: analyst
// and reason are required (400 without either).
func (s *Server) revokeException(w http.ResponseWriter, r *http.Request) {
	req, analyst, ok := s.reasoned(w, r, "revoke body", "the audit trail records why an exception ended")
	if !ok {
		return
	}
	ch, err := s.cfg.UseCases.RevokeException(r.Context(), r.PathValue("id"), analyst, req.Reason)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ch)
}
