package server

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// history answers GET /api/v1/history: what was closed without a person
// (bypassed, grouped, exception), newest first, as ?kind= and ?search=
// (title, rule or service, ignoring case) select, at most ?limit= a page
// (100 by default, 1000 at most), the page after ?after= (the next cursor
// of the page before): what `openrecall history -o json` prints.
func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), 100, 1000)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "limit: "+err.Error())
		return
	}
	page, err := s.cfg.UseCases.History(r.Context(), openrecall.ClosureFilter{
		Kind: q.Get("kind"), Search: q.Get("search"), After: q.Get("after"), Limit: limit})
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// wrong answers POST /api/v1/history/{analysis_id}/wrong: a person's
// "this was wrong" (usecase.App.Wrong), with the token's name as the
// analyst and a required reason (400 without it); 404 for an analysis
// openrecall did not close without a person. Saying it again answers 200
// with changed false.
func (s *Server) wrong(w http.ResponseWriter, r *http.Request) {
	req, analyst, ok := s.reasoned(w, r, "wrong body", "the memories that vouched are forgotten with it")
	if !ok {
		return
	}
	id := r.PathValue("analysis_id")
	out, err := s.cfg.UseCases.Wrong(r.Context(), id, req.Reason, analyst)
	if err != nil {
		s.answerErr(w, r, err)
		return
	}
	if out.Changed {
		s.log.Info("closure said wrong", zap.String("analysis_id", id), zap.String("analyst", analyst),
			zap.Strings("forgotten", out.Forgotten), zap.String("revoked", out.Revoked), zap.String("request_id", requestID(r)))
	}
	writeJSON(w, http.StatusOK, out)
}
