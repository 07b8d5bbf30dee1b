package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/intake/sender"
	"github.com/openrecall/openrecall/server/httperr"
	"github.com/openrecall/openrecall/usecase"
)

// retainRequest is the body of POST /api/v1/retain: the decision, and what
// it is about: an analysis id of this server, an alert (any intake object),
// or a canonical fingerprint.
type retainRequest struct {
	AnalysisID  string          `json:"analysis_id"`
	Alert       json.RawMessage `json:"alert"`
	Fingerprint string          `json:"fingerprint"`
	AlertID     string          `json:"alert_id"`
	Decision    string          `json:"decision"`
	Note        string          `json:"note"`
	DeadEnds    []string        `json:"dead_ends"`
	// Analyst may repeat the token's name; the token's name is recorded
	// (Server.actor).
	Analyst       string `json:"analyst"`
	ImpactMinutes int    `json:"impact_minutes"`
}

// subject resolves what a retain or recall names: exactly one of an
// analysis id of this server, an alert (any intake object) or a canonical
// fingerprint; an alert is read by senders, as the intake endpoints read
// it. A bad reference is an error wrapping openrecall.ErrInvalid.
func subject(analysisID string, alert json.RawMessage, fingerprint string, senders sender.Set) (usecase.Subject, error) {
	given := 0
	for _, set := range []bool{analysisID != "", len(alert) > 0 && string(alert) != "null", fingerprint != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return usecase.Subject{}, fmt.Errorf("give exactly one of analysis_id, alert and fingerprint: %w", openrecall.ErrInvalid)
	}
	switch {
	case fingerprint != "":
		fp, err := openrecall.ParseFingerprint(fingerprint)
		return usecase.Subject{Fingerprint: &fp}, err
	case analysisID != "":
		return usecase.Subject{AnalysisID: analysisID}, nil
	}
	recs, err := intake.ParseBytes(alert, intake.Options{Source: "alert", Senders: senders})
	if err != nil {
		return usecase.Subject{}, err
	}
	if len(recs) == 0 {
		return usecase.Subject{}, fmt.Errorf("alert: no alert in it: %w", openrecall.ErrInvalid)
	}
	if recs[0].Err != nil {
		return usecase.Subject{}, fmt.Errorf("alert: %s: %w", recs[0].Err.Reason, openrecall.ErrInvalid)
	}
	return usecase.Subject{Alerts: []openrecall.Alert{recs[0].Alert}}, nil
}

// answerErr answers err with httperr.Status's code (the cockpit's too):
// its text for a client's error; for ErrIntegrity (409) the text and
// integrity "failed", logged as a warning; for a server's error a request
// id, the error logged and not shown.
func (s *Server) answerErr(w http.ResponseWriter, r *http.Request, err error) {
	code := httperr.Status(err)
	switch {
	case code == http.StatusConflict && errors.Is(err, openrecall.ErrIntegrity):
		// As audit verify answers a trail that is not intact, and never
		// the edited document: the row is stored but does not match its
		// seal in the audit chain (audit verify names it). It is not
		// transient: a retry gets the same answer.
		s.log.Warn("integrity check failed", zap.String("request_id", requestID(r)), zap.Error(err))
		writeJSON(w, code, errorBody{Error: err.Error(), RequestID: requestID(r), Integrity: "failed"})
	case httperr.Shown(code):
		writeError(w, r, code, err.Error())
	default:
		s.log.Error("request failed", zap.String("request_id", requestID(r)), zap.Error(err))
		writeError(w, r, code, "internal error; see the server log for request "+requestID(r))
	}
}

func (s *Server) retain(w http.ResponseWriter, r *http.Request) {
	if !s.bodyLimited(w, r) {
		return
	}
	var req retainRequest
	if !s.decodeBody(w, r, "retain body", &req) {
		return
	}
	d, ok := decisionOf(w, r, req.Decision, req.ImpactMinutes)
	if !ok {
		return
	}
	analyst, ok := s.actor(w, r, req.Analyst)
	if !ok {
		return
	}
	about, err := subject(req.AnalysisID, req.Alert, req.Fingerprint, s.cfg.Senders)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	out, err := s.cfg.UseCases.Retain(r.Context(), usecase.RetainRequest{
		Decision: usecase.Decision{Decision: d, Note: req.Note, DeadEnds: req.DeadEnds, Analyst: analyst,
			ImpactMinutes: req.ImpactMinutes, AlertID: req.AlertID},
		Subject:      about,
		IdentityHint: "retained by fingerprint, or an alert without alertname, class or title",
	})
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	code := http.StatusOK
	if out[0].Created {
		code = http.StatusCreated
	}
	writeJSON(w, code, out[0])
}

// recall answers GET /api/v1/recall: what `recall -o json` prints.
func (s *Server) recall(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), s.cfg.RecallLimit, 1000)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	about, err := subject(q.Get("analysis_id"), nil, q.Get("fingerprint"), s.cfg.Senders)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	rc, err := s.cfg.UseCases.Recall(r.Context(), about, limit)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rc)
}

// intParam parses an optional positive integer query parameter, capped.
func intParam(v string, def, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errors.New("want a positive integer")
	}
	return min(n, max), nil
}

func (s *Server) result(w http.ResponseWriter, r *http.Request) {
	sv, err := usecase.ReadResult(r.Context(), s.cfg.Store, r.PathValue("analysis_id"), s.cfg.Retention)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sv)
}

// results answers GET /api/v1/results?since=: finished analyses in
// completion order, and the cursor to pass next.
func (s *Server) results(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since int64
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, r, http.StatusBadRequest, "since: want the next cursor of a previous answer (0 or more)")
			return
		}
		since = n
	}
	limit, err := intParam(q.Get("limit"), 100, 1000)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	out, err := usecase.ReadResults(r.Context(), s.cfg.Store, since, limit)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// cost answers the cost curve of ?batch=, or of the run of the day when it
// has points, or of the latest run: what `cost -o json` prints.
func (s *Server) cost(w http.ResponseWriter, r *http.Request) {
	c, err := usecase.ReadCost(r.Context(), s.cfg.Store, usecase.CostRequest{Batch: r.URL.Query().Get("batch"), Prefer: s.daemon.CostBatch()})
	var none *usecase.NoCostPointsError
	if errors.As(err, &none) {
		writeError(w, r, http.StatusNotFound, "batch "+strconv.Quote(none.Batch)+" has no cost points")
		return
	}
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c.Summary)
}

// auditVerify answers 200 for an intact trail and 409 for a tampered one;
// ?checkpoint= also proves the trail extends that checkpoint.
func (s *Server) auditVerify(w http.ResponseWriter, r *http.Request) {
	rep, err := s.cfg.UseCases.VerifyAudit(r.Context(), r.URL.Query().Get("checkpoint"))
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	code := http.StatusOK
	if !rep.Intact {
		code = http.StatusConflict
	}
	writeJSON(w, code, rep)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

// groupDecisionRequest is the body of POST /api/v1/groups/{id}/decision.
type groupDecisionRequest struct {
	Decision      string   `json:"decision"`
	Note          string   `json:"note"`
	DeadEnds      []string `json:"dead_ends"`
	Analyst       string   `json:"analyst"`
	ImpactMinutes int      `json:"impact_minutes"`
}

// groupDecision answers POST /api/v1/groups/{id}/decision: a person
// decides an alert group once (DESIGN §6a), as `retain --group ID -o json`
// prints it; 409 when the group was decided before.
func (s *Server) groupDecision(w http.ResponseWriter, r *http.Request) {
	if !s.bodyLimited(w, r) {
		return
	}
	var req groupDecisionRequest
	if !s.decodeBody(w, r, "group decision body", &req) {
		return
	}
	d, ok := decisionOf(w, r, req.Decision, req.ImpactMinutes)
	if !ok {
		return
	}
	analyst, ok := s.actor(w, r, req.Analyst)
	if !ok {
		return
	}
	out, err := s.cfg.UseCases.DecideGroup(r.Context(), r.PathValue("id"), usecase.Decision{Decision: d, Note: req.Note,
		DeadEnds: req.DeadEnds, Analyst: analyst, ImpactMinutes: req.ImpactMinutes})
	if errors.Is(err, openrecall.ErrGroupDecided) {
		writeError(w, r, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// groups answers GET /api/v1/groups: the alert groups waiting for a
// decision, newest first (?all=true: decided ones too; ?limit=), as
// `openrecall groups -o json` prints them.
func (s *Server) groups(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), 50, 1000)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	all := q.Get("all") == "true"
	gs, err := s.cfg.UseCases.ListGroups(r.Context(), !all, limit)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, gs)
}

// decodeBody decodes a JSON request body (no unknown fields) into v, or
// answers 413 or 400 and returns false.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, what string, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, r, http.StatusRequestEntityTooLarge, tooLarge(s.cfg.MaxBodyBytes))
		return false
	}
	writeError(w, r, http.StatusBadRequest, what+": "+err.Error())
	return false
}

// decisionOf reads an analyst's decision and impact minutes from a request
// body, or answers 400 and returns false.
func decisionOf(w http.ResponseWriter, r *http.Request, decision string, impactMinutes int) (openrecall.Decision, bool) {
	d, err := usecase.ParseDecision(decision)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "decision "+strconv.Quote(decision)+": want "+usecase.Decisions())
		return "", false
	}
	if impactMinutes < 0 {
		writeError(w, r, http.StatusBadRequest, "impact_minutes must be 0 or more")
		return "", false
	}
	return d, true
}
