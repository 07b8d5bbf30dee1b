package fakereceivers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"
)

// PagerDuty Events API v2, as PagerDuty documents it
// (developer.pagerduty.com, "Events API v2" and "Send an Alert Event"):
// POST /v2/enqueue; routing_key of 32 characters; event_action trigger,
// acknowledge or resolve; dedup_key required but for a trigger (PagerDuty
// makes one); a trigger's payload with summary (≤1024 characters), source
// and a severity of critical, error, warning, info; 202 {status: success,
// message: Event processed, dedup_key}; 400 {status: invalid event,
// message, errors[]} for an event it refuses.

// PagerDutyRefusal reads an Events API v2 body as PagerDuty does: the
// answer it refuses the event with (400 and its JSON body: status,
// message, errors), or, for an event it takes, nil and the event's
// dedup_key ("" when the event named none and PagerDuty would make one).
// routingKey, when set, is the only key taken. Tests of a receiver that
// speak the API with a server of their own use it, so the API's rules are
// written once.
func PagerDutyRefusal(body []byte, routingKey string) (dedupKey string, refusal []byte) {
	ev, r := checkPDEvent(body, routingKey)
	if r != nil {
		return "", r.body
	}
	return ev.DedupKey, nil
}

// checkPDEvent reads an event body, or the 400 answer refusing it.
func checkPDEvent(body []byte, routingKey string) (pdEvent, *answer) {
	var ev pdEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		a := reply(http.StatusBadRequest, map[string]any{"status": "Unrecognized object",
			"message": "Event object format is unrecognized", "errors": []string{"JSON parse error"}})
		return ev, &a
	}
	var errs []string
	switch {
	case len(ev.RoutingKey) != 32:
		errs = append(errs, "Length of 'routing_key' is incorrect (should be 32 characters)")
	case routingKey != "" && ev.RoutingKey != routingKey:
		errs = append(errs, "Invalid routing key")
	}
	if !slices.Contains([]string{"trigger", "acknowledge", "resolve"}, ev.EventAction) {
		errs = append(errs, "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')")
	}
	if ev.EventAction != "trigger" && ev.DedupKey == "" {
		errs = append(errs, "'dedup_key' is missing or blank")
	}
	if len(ev.DedupKey) > 255 {
		errs = append(errs, "'dedup_key' is too long (at most 255 characters)")
	}
	if ev.EventAction == "trigger" {
		switch p := ev.Payload; {
		case p == nil:
			errs = append(errs, "'payload' is missing or blank")
		case p.Summary == "" || p.Source == "":
			errs = append(errs, "'payload.summary' and 'payload.source' are required")
		case utf8.RuneCountInString(p.Summary) > 1024:
			errs = append(errs, "'payload.summary' is too long (at most 1024 characters)")
		case !slices.Contains([]string{"critical", "error", "warning", "info"}, p.Severity):
			errs = append(errs, "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')")
		}
	}
	if len(errs) > 0 {
		a := reply(http.StatusBadRequest, map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": errs})
		return ev, &a
	}
	return ev, nil
}

// pdEvent is what the fake reads of an event.
type pdEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     *struct {
		Summary       string          `json:"summary"`
		Source        string          `json:"source"`
		Severity      string          `json:"severity"`
		Timestamp     string          `json:"timestamp"`
		Component     string          `json:"component"`
		Group         string          `json:"group"`
		Class         string          `json:"class"`
		CustomDetails json.RawMessage `json:"custom_details"`
	} `json:"payload"`
	Client    string `json:"client"`
	ClientURL string `json:"client_url"`
	Links     []Link `json:"links"`
}

func (f *Fakes) pagerDutyAPI() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/enqueue", f.route(PagerDuty, true, f.pdEnqueue))
	mux.Handle("/", f.route(PagerDuty, false, func(*http.Request, []byte) answer {
		return reply(http.StatusNotFound, map[string]string{"status": "Not found"})
	}))
	return mux
}

// pdEnqueue accepts an event and applies it to the incidents.
func (f *Fakes) pdEnqueue(_ *http.Request, body []byte) answer {
	ev, refusal := checkPDEvent(body, f.cfg.PagerDutyRoutingKey)
	if refusal != nil {
		return *refusal
	}
	if ev.DedupKey == "" {
		ev.DedupKey = fmt.Sprintf("%032x", f.nextID())
	}
	f.pdApply(ev)
	return reply(http.StatusAccepted, map[string]string{"status": "success", "message": "Event processed", "dedup_key": ev.DedupKey})
}

// pdApply applies a valid event as PagerDuty does: a trigger opens an
// incident unless one of its dedup_key is open (then it is deduplicated
// into it); an acknowledge or a resolve changes the open incident of its
// dedup_key, and is dropped when there is none. The caller holds f.mu.
func (f *Fakes) pdApply(ev pdEvent) {
	at := f.now()
	pd := &f.st.PagerDuty
	open := -1
	for i := len(pd.Incidents) - 1; i >= 0; i-- {
		if in := pd.Incidents[i]; in.DedupKey == ev.DedupKey && in.Status != IncidentResolved {
			open = i
			break
		}
	}
	e := PagerDutyEvent{At: at, Action: ev.EventAction, DedupKey: ev.DedupKey, Outcome: "ignored"}
	switch {
	case ev.EventAction == "trigger" && open < 0:
		p := ev.Payload
		n := len(pd.Incidents) + 1
		pd.Incidents = append(pd.Incidents, Incident{Number: n, ID: fmt.Sprintf("Q%013d", n), DedupKey: ev.DedupKey,
			Status: IncidentTriggered, Summary: p.Summary, Source: p.Source, Severity: p.Severity, Timestamp: p.Timestamp,
			Component: p.Component, Group: p.Group, Class: p.Class, Client: ev.Client, ClientURL: ev.ClientURL,
			Links: ev.Links, CustomDetails: p.CustomDetails, Triggers: 1, TriggeredAt: at,
			Log: []LogEntry{{Action: "trigger", At: at}}})
		e.Outcome, e.Incident = "opened", n
	case open >= 0:
		in := &pd.Incidents[open]
		in.Log = append(in.Log, LogEntry{Action: ev.EventAction, At: at})
		e.Incident = in.Number
		switch ev.EventAction {
		case "trigger":
			in.Triggers++
			e.Outcome = "deduplicated"
		case "acknowledge":
			if in.Status == IncidentTriggered {
				in.Status, in.AcknowledgedAt = IncidentAcknowledged, at
			}
			e.Outcome = "acknowledged"
		case "resolve":
			in.Status, in.ResolvedAt = IncidentResolved, at
			e.Outcome = "resolved"
		}
	}
	pd.Events = append(pd.Events, e)
}
