package server

import (
	"errors"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// outbox answers GET /api/v1/outbox: the notification intents that
// ?state=, ?receiver= and ?analysis= select, newest first, at most ?limit=
// (100 by default, 1000 at most): what `openrecall outbox -o json` prints.
func (s *Server) outbox(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), 100, 1000)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	list, err := usecase.ListIntents(r.Context(), s.cfg.Store, openrecall.IntentFilter{
		State: q.Get("state"), Receiver: q.Get("receiver"), AnalysisID: q.Get("analysis"), Limit: limit})
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// retryIntent answers POST /api/v1/outbox/{id}/retry: dead letter id is
// pending again (200, with the intent), audited with the token's name as
// the analyst (Server.actor); 404 for an unknown id; 409 for an intent
// that is not a dead letter, or whose episode went on without it
// (usecase.App.RetryIntent).
func (s *Server) retryIntent(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, r, http.StatusBadRequest, "intent id "+strconv.Quote(r.PathValue("id"))+": want the positive number `openrecall outbox` lists")
		return
	}
	analyst, ok := s.actor(w, r, "")
	if !ok {
		return
	}
	in, err := s.cfg.UseCases.RetryIntent(r.Context(), s.cfg.Store, id, analyst)
	switch {
	case errors.Is(err, openrecall.ErrInvalid):
		// The id is well formed: what refuses the retry is the intent's
		// state.
		writeError(w, r, http.StatusConflict, err.Error())
		return
	case err != nil:
		s.answerErr(w, r, err)
		return
	}
	s.log.Info("dead letter retried", zap.Int64("intent", id), zap.String("receiver", in.Receiver),
		zap.String("analysis_id", in.AnalysisID), zap.String("analyst", analyst), zap.String("request_id", requestID(r)))
	writeJSON(w, http.StatusOK, in)
}
