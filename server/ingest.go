package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/server/cockpit"
	"github.com/openrecall/openrecall/server/routemux"
)

// Endpoint names, as deliveries and metrics record them.
const (
	EndpointAlertmanager = "alertmanager"
	EndpointPagerDuty    = "pagerduty"
	EndpointAlerts       = "alerts"
)

func (s *Server) routes() {
	m := routemux.New()
	m.HandleFunc("POST /api/v1/alerts", s.scoped(ScopeIngest, s.ingest(intake.FormatAuto, EndpointAlerts)))
	m.HandleFunc("POST /v2/enqueue", s.pagerDuty)
	// Prometheus posts to an Alertmanager's /api/v2/alerts: it can name
	// openrecall as one.
	m.HandleFunc("POST /api/v2/alerts", s.scoped(ScopeIngest, s.ingest(intake.FormatPrometheus, "prometheus")))
	m.HandleFunc("POST /api/v1/alerts/{sender}", s.senderIngest)
	m.HandleFunc("POST /api/v1/retain", s.scoped(ScopeRetain, s.retain))
	m.HandleFunc("GET /api/v1/recall", s.scoped(ScopeRead, s.recall))
	m.HandleFunc("POST /api/v1/groups/{id}/decision", s.scoped(ScopeRetain, s.groupDecision))
	m.HandleFunc("GET /api/v1/groups", s.scoped(ScopeRead, s.groups))
	m.HandleFunc("GET /api/v1/results/{analysis_id}", s.scoped(ScopeRead, s.result))
	m.HandleFunc("GET /api/v1/results", s.scoped(ScopeRead, s.results))
	m.HandleFunc("GET /api/v1/cost", s.scoped(ScopeRead, s.cost))
	m.HandleFunc("GET /api/v1/audit/verify", s.scoped(ScopeRead, s.auditVerify))
	m.HandleFunc("GET /api/v1/exceptions", s.scoped(ScopeRead, s.exceptions))
	m.HandleFunc("POST /api/v1/exceptions", s.scoped(ScopeRetain, s.addException))
	m.HandleFunc("POST /api/v1/exceptions/{id}/revoke", s.scoped(ScopeRetain, s.revokeException))
	m.HandleFunc("GET /api/v1/outbox", s.scoped(ScopeRead, s.outbox))
	m.HandleFunc("POST /api/v1/outbox/{id}/retry", s.scoped(ScopeRetain, s.retryIntent))
	m.HandleFunc("GET /api/v1/history", s.scoped(ScopeRead, s.history))
	m.HandleFunc("POST /api/v1/history/{analysis_id}/wrong", s.scoped(ScopeRetain, s.wrong))
	if s.slack != nil {
		m.HandleFunc("POST /api/v1/slack/interactions", s.slackInteraction)
	}
	m.HandleFunc("GET /healthz", s.healthz)
	m.HandleFunc("GET /readyz", s.readyz)
	m.Handle("GET /metrics", s.obs.Handler())
	// The cockpit, and / redirecting to it.
	ui := s.cockpit.Handler()
	m.Handle(cockpit.Prefix, ui)
	m.Handle("GET /{$}", ui)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	// A known path with another method: 405 in JSON, with Allow.
	for path, allow := range map[string]string{
		"/api/v1/alerts": "POST", "/api/v1/alerts/{sender}": "POST", "/v2/enqueue": "POST", "/api/v2/alerts": "POST",
		"/api/v1/retain": "POST", "/api/v1/recall": "GET, HEAD", "/api/v1/groups": "GET, HEAD", "/api/v1/groups/{id}/decision": "POST", "/api/v1/results/{analysis_id}": "GET, HEAD", "/api/v1/results": "GET, HEAD",
		"/api/v1/cost": "GET, HEAD", "/api/v1/audit/verify": "GET, HEAD",
		"/api/v1/exceptions": "GET, HEAD, POST", "/api/v1/exceptions/{id}/revoke": "POST", "/healthz": "GET, HEAD", "/readyz": "GET, HEAD", "/metrics": "GET, HEAD",
		"/api/v1/outbox": "GET, HEAD", "/api/v1/outbox/{id}/retry": "POST",
		"/api/v1/history": "GET, HEAD", "/api/v1/history/{analysis_id}/wrong": "POST",
	} {
		m.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; use "+allow)
		})
	}
	s.mux, s.patterns = m.ServeMux, m.Patterns()
}

// Routes returns the pattern of every route Handler serves (net/http
// ServeMux patterns), the cockpit's after the server's own, in the order
// they were registered: what a test that must cover every route walks.
func (s *Server) Routes() []string {
	return append(slices.Clone(s.patterns), s.cockpit.Routes()...)
}

// counts tallies what Enqueue made of a body: queued, redelivered and
// rejected records.
func counts(ds []openrecall.Delivery) (accepted, duplicates, rejected int) {
	for _, d := range ds {
		switch {
		case d.Rejection != "":
			rejected++
		case d.Duplicate:
			duplicates++
		default:
			accepted++
		}
	}
	return accepted, duplicates, rejected
}

// Accepted is the 202 answer of the intake endpoints.
type Accepted struct {
	RequestID  string     `json:"request_id"`
	Accepted   int        `json:"accepted"`
	Duplicates int        `json:"duplicates"`
	Rejected   int        `json:"rejected"`
	Analyses   []Analysis `json:"analyses"`
}

// Analysis is one record of an accepted body: the analysis that will (or,
// for a redelivery, did) handle it.
type Analysis struct {
	AnalysisID string              `json:"analysis_id"`
	AlertID    string              `json:"alert_id,omitempty"`
	State      string              `json:"state,omitempty"`
	Duplicate  bool                `json:"duplicate,omitempty"`
	Position   openrecall.Position `json:"position"`
	Rejection  string              `json:"rejection,omitempty"`
}

// errBodyTooLarge is a body past the limit.
var errBodyTooLarge = errors.New("request body too large")

// readRecords streams body through intake within the size limit.
func (s *Server) readRecords(body io.Reader, format intake.Format, endpoint string) ([]intake.Record, error) {
	// Intake streams webhooks and arrays item by item; one record may be as
	// long as the body limit allows (the body itself is bounded before).
	rd := intake.NewReader(body, intake.Options{Format: format, Source: endpoint, MaxRecordBytes: int(s.cfg.MaxBodyBytes), Senders: s.cfg.Senders})
	var out []intake.Record
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge
		}
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		out = append(out, rec)
	}
}

// deliveries turns intake records into inbox deliveries.
func deliveries(recs []intake.Record, endpoint, requestID string) ([]openrecall.Delivery, int) {
	ds := make([]openrecall.Delivery, len(recs))
	alerts := 0
	for i, rec := range recs {
		d := openrecall.Delivery{Endpoint: endpoint, RequestID: requestID, Alert: rec.Alert}
		if rec.Err != nil {
			d.Alert = openrecall.Alert{Position: rec.Err.Position}
			d.Rejection = rec.Err.Reason
		} else {
			alerts++
		}
		ds[i] = d
	}
	return ds, alerts
}

// bodyLimited answers 413 and returns false when r announces a body past
// the limit; otherwise it bounds r.Body to the limit.
func (s *Server) bodyLimited(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, r, http.StatusRequestEntityTooLarge, tooLarge(s.cfg.MaxBodyBytes))
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	return true
}

func tooLarge(limit int64) string {
	return fmt.Sprintf("request body is larger than the limit of %d bytes (server.max_body_bytes)", limit)
}

// enqueue stores ds. On failure it returns the status to answer (503,
// with Retry-After set when the inbox is full) and a message.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request, endpoint string, ds []openrecall.Delivery) ([]openrecall.Delivery, int, string) {
	out, err := s.cfg.Store.Enqueue(r.Context(), ds, s.cfg.InboxLimit, s.daemon.AnalysisID)
	switch {
	case errors.Is(err, openrecall.ErrFull):
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
		s.obs.Refused(endpoint)
		return nil, http.StatusServiceUnavailable, "the inbox is full; retry later"
	case err != nil:
		s.log.Error("enqueue", zap.String("request_id", requestID(r)), zap.Error(err))
		return nil, http.StatusServiceUnavailable, "could not store the alerts; retry later"
	}
	s.daemon.Wake()
	acc, dup, rej := counts(out)
	s.obs.Received(endpoint, acc, dup, rej)
	s.observeSenders(out)
	return out, 0, ""
}

// observeSenders reports the alerts of stored deliveries per sender, and
// the alerts their senders said they left out.
func (s *Server) observeSenders(ds []openrecall.Delivery) {
	type tally struct{ alerts, dropped int }
	var order []string
	by := map[string]*tally{}
	for _, d := range ds {
		if d.Rejection != "" {
			continue
		}
		name := d.Alert.Sender
		t, ok := by[name]
		if !ok {
			t = &tally{}
			by[name] = t
			order = append(order, name)
		}
		if d.Alert.Dropped > 0 {
			t.dropped += d.Alert.Dropped
		} else {
			t.alerts++
		}
	}
	for _, name := range order {
		s.obs.Sender(name, by[name].alerts, by[name].dropped)
	}
}

// senderIngest is POST /api/v1/alerts/{sender}: the body is read as the
// named sender's payload (DESIGN §3), and answered as the generic receiver
// answers (202 with the analysis ids, 400 when the body holds no alert, 503
// with Retry-After when the inbox is full: what senders retry on). The
// senders are the server's (Config.Senders: the built-ins and the teams'
// mappings); the built-in senders keep their own readers unless a mapping
// overrides them; an unknown name is 404 with the list of senders.
func (s *Server) senderIngest(w http.ResponseWriter, r *http.Request) {
	name := strings.ToLower(r.PathValue("sender"))
	sd, _ := s.cfg.Senders.Lookup(name)
	format, ok := intake.SenderFormat(s.cfg.Senders, name)
	switch {
	case !ok:
		writeError(w, r, http.StatusNotFound, fmt.Sprintf("no sender %q: POST to /api/v1/alerts to detect the sender, or name one of %s",
			name, strings.Join(s.cfg.Senders.Names(), ", ")))
	case sd.Builtin && format == intake.FormatPagerDuty:
		// PagerDuty's own answers, and its routing_key as the token.
		s.pagerDuty(w, r)
	case s.authorize(w, r, ScopeIngest):
		s.ingest(format, name)(w, r)
	}
}

// ingest is the Alertmanager and generic receiver: 202 with the analysis
// ids once every record is in the inbox; 400 when the body holds no alert.
func (s *Server) ingest(format intake.Format, endpoint string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.bodyLimited(w, r) {
			return
		}
		recs, err := s.readRecords(r.Body, format, endpoint)
		switch {
		case errors.Is(err, errBodyTooLarge):
			writeError(w, r, http.StatusRequestEntityTooLarge, tooLarge(s.cfg.MaxBodyBytes))
			return
		case err != nil:
			writeError(w, r, http.StatusBadRequest, err.Error())
			return
		}
		ds, alerts := deliveries(recs, endpoint, requestID(r))
		if alerts == 0 {
			msg := "the body holds no alert"
			if len(ds) > 0 {
				msg += fmt.Sprintf("; %s: %s", ds[0].Alert.Position, ds[0].Rejection)
				if len(ds) > 1 {
					msg += fmt.Sprintf(" (and %d more rejected records)", len(ds)-1)
				}
			}
			s.obs.Received(endpoint, 0, 0, len(ds))
			writeError(w, r, http.StatusBadRequest, msg)
			return
		}
		out, code, msg := s.enqueue(w, r, endpoint, ds)
		if code != 0 {
			writeError(w, r, code, msg)
			return
		}
		acc := Accepted{RequestID: requestID(r), Analyses: make([]Analysis, len(out))}
		acc.Accepted, acc.Duplicates, acc.Rejected = counts(out)
		for i, d := range out {
			acc.Analyses[i] = Analysis{AnalysisID: d.AnalysisID, AlertID: d.Alert.ID, State: d.State, Duplicate: d.Duplicate,
				Position: d.Alert.Position, Rejection: d.Rejection}
		}
		writeJSON(w, http.StatusAccepted, acc)
	}
}

// pagerDutyAnswer has the shape of PagerDuty's Events API v2 answers, so
// senders that speak PagerDuty work unchanged.
type pagerDutyAnswer struct {
	Status    string   `json:"status"`
	Message   string   `json:"message"`
	DedupKey  string   `json:"dedup_key,omitempty"`
	Errors    []string `json:"errors,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
}

// pagerDuty receives one PagerDuty Events v2 event. The bearer token or the
// event's routing_key must be an ingest token. The headers are checked
// before the body is read; when they carry no ingest token, the routing_key
// is read while streaming, within the first RoutingKeyWithin bytes of the
// event, and checked before the rest is read: a refused event never costs
// more than that bound.
func (s *Server) pagerDuty(w http.ResponseWriter, r *http.Request) {
	answer := func(code int, a pagerDutyAnswer) {
		a.RequestID = requestID(r)
		writeJSON(w, code, a)
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		answer(http.StatusRequestEntityTooLarge, pagerDutyAnswer{Status: "invalid event", Message: tooLarge(s.cfg.MaxBodyBytes)})
		return
	}
	limited := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	code := s.authStatus(bearer(r), ScopeIngest)
	var prefix []byte
	why := "missing or unknown routing_key or bearer token"
	if code != 0 {
		key, read, err := intake.RoutingKey(limited, s.cfg.RoutingKeyWithin)
		prefix = read
		switch {
		case err != nil:
			why += "; " + err.Error()
		case key != "":
			code = s.authStatus(key, ScopeIngest)
		}
	}
	switch code {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="openrecall"`)
		// What is left of the body is not read: the connection closes.
		w.Header().Set("Connection", "close")
		answer(code, pagerDutyAnswer{Status: "unauthorized", Message: why})
		return
	case http.StatusForbidden:
		w.Header().Set("Connection", "close")
		answer(code, pagerDutyAnswer{Status: "forbidden", Message: "this token lacks the ingest scope"})
		return
	}
	body, err := io.ReadAll(io.MultiReader(bytes.NewReader(prefix), limited))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		answer(http.StatusRequestEntityTooLarge, pagerDutyAnswer{Status: "invalid event", Message: tooLarge(s.cfg.MaxBodyBytes)})
		return
	case err != nil:
		answer(http.StatusBadRequest, pagerDutyAnswer{Status: "invalid event", Message: "read body: " + err.Error()})
		return
	}
	recs, err := intake.ParseBytes(bytes.TrimSpace(body), intake.Options{Format: intake.FormatPagerDuty, Source: EndpointPagerDuty})
	switch {
	case err != nil:
		answer(http.StatusBadRequest, pagerDutyAnswer{Status: "invalid event", Message: err.Error()})
		return
	case len(recs) != 1:
		answer(http.StatusBadRequest, pagerDutyAnswer{Status: "invalid event", Message: "Event object is invalid",
			Errors: []string{fmt.Sprintf("want one event object, got %d records", len(recs))}})
		return
	case recs[0].Err != nil:
		s.obs.Received(EndpointPagerDuty, 0, 0, 1)
		answer(http.StatusBadRequest, pagerDutyAnswer{Status: "invalid event", Message: "Event object is invalid", Errors: []string{recs[0].Err.Reason}})
		return
	}
	// An event without a dedup_key gets one, as PagerDuty gives one; later
	// acknowledge and resolve events name it.
	a := recs[0].Alert
	dedup, ok := strings.CutPrefix(a.ID, "pd-")
	if !ok {
		dedup, a.ID = a.ID, "pd-"+a.ID
		recs[0].Alert = a
	}
	ds, _ := deliveries(recs, EndpointPagerDuty, requestID(r))
	if _, code, msg := s.enqueue(w, r, EndpointPagerDuty, ds); code != 0 {
		answer(code, pagerDutyAnswer{Status: "throttle event", Message: msg})
		return
	}
	answer(http.StatusAccepted, pagerDutyAnswer{Status: "success", Message: "Event processed", DedupKey: dedup})
}
