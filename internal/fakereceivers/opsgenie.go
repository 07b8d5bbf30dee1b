package fakereceivers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Opsgenie Alert API v2, as Atlassian documents it (docs.opsgenie.com,
// "Alert API", "API overview", "Response"): Authorization: GenieKey KEY;
// POST /v2/alerts creates an alert (message required, at most 130
// characters, longer is cut; priority P1 to P5, default P3; an open
// alert of the same alias is deduplicated: its count grows); POST
// /v2/alerts/{identifier}/close and /notes, identifierType id (the
// default), tiny or alias; every accepted request answered 202 {result,
// took, requestId} and processed later (the fake processes it at once),
// its outcome at GET /v2/alerts/requests/{requestId}; errors {message,
// took, requestId}: 401 for a key refused, 422 for a body refused.

// ogCreate is what the fake reads of a create alert request.
type ogCreate struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description"`
	Tags        []string          `json:"tags"`
	Details     map[string]string `json:"details"`
	Entity      string            `json:"entity"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
	User        string            `json:"user"`
	Note        string            `json:"note"`
}

// ogAction is what the fake reads of a close or add note request.
type ogAction struct {
	User   string `json:"user"`
	Source string `json:"source"`
	Note   string `json:"note"`
}

func (f *Fakes) opsgenieAPI() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v2/alerts", f.route(Opsgenie, true, f.ogAuth(f.ogCreate)))
	mux.Handle("POST /v2/alerts/{identifier}/close", f.route(Opsgenie, true, f.ogAuth(f.ogClose)))
	mux.Handle("POST /v2/alerts/{identifier}/notes", f.route(Opsgenie, true, f.ogAuth(f.ogNote)))
	mux.Handle("GET /v2/alerts/requests/{requestID}", f.route(Opsgenie, false, f.ogAuth(f.ogRequest)))
	mux.Handle("GET /v2/alerts/{identifier}", f.route(Opsgenie, false, f.ogAuth(f.ogGet)))
	mux.Handle("/", f.route(Opsgenie, false, func(*http.Request, []byte) answer {
		return f.ogError(http.StatusNotFound, "Could not find the resource requested")
	}))
	return mux
}

// ogError is an error answer.
func (f *Fakes) ogError(status int, message string) answer {
	return reply(status, map[string]any{"message": message, "took": 0.001, "requestId": f.uuid()})
}

// ogAuth refuses a request without the API key.
func (f *Fakes) ogAuth(h handlerFunc) handlerFunc {
	return func(r *http.Request, body []byte) answer {
		scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "GenieKey") || key == "" ||
			f.cfg.OpsgenieAPIKey != "" && key != f.cfg.OpsgenieAPIKey {
			return f.ogError(http.StatusUnauthorized, "Could not authenticate")
		}
		return h(r, body)
	}
}

// ogAccepted records an accepted request's outcome and answers 202.
func (f *Fakes) ogAccepted(action string, success bool, status, alertID, alias string) answer {
	id := f.uuid()
	f.st.Opsgenie.Requests = append(f.st.Opsgenie.Requests, OpsgenieRequest{RequestID: id, Action: action, Success: success,
		Status: status, AlertID: alertID, Alias: alias, At: f.now()})
	return reply(http.StatusAccepted, map[string]any{"result": "Request will be processed", "took": 0.001, "requestId": id})
}

func (f *Fakes) ogCreate(_ *http.Request, body []byte) answer {
	var c ogCreate
	if err := json.Unmarshal(body, &c); err != nil {
		return f.ogError(http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.")
	}
	if strings.TrimSpace(c.Message) == "" {
		return f.ogError(http.StatusUnprocessableEntity, "Message can not be empty.")
	}
	switch c.Priority {
	case "":
		c.Priority = "P3"
	case "P1", "P2", "P3", "P4", "P5":
	default:
		return f.ogError(http.StatusUnprocessableEntity, "Priority should be one of [P1, P2, P3, P4, P5]")
	}
	if utf8.RuneCountInString(c.Message) > 130 {
		c.Message = string([]rune(c.Message)[:130])
	}
	at := f.now()
	og := &f.st.Opsgenie
	if c.Alias != "" {
		if i := f.ogOpen(c.Alias); i >= 0 {
			a := &og.Alerts[i]
			a.Count++
			a.UpdatedAt = at
			return f.ogAccepted("Create", true, "Alert deduplicated", a.ID, a.Alias)
		}
	}
	alias := c.Alias
	id := f.uuid()
	if alias == "" {
		alias = id
	}
	a := OpsgenieAlert{ID: id, TinyID: strconv.Itoa(len(og.Alerts) + 1), Alias: alias, Message: c.Message,
		Description: c.Description, Priority: c.Priority, Tags: c.Tags, Details: c.Details, Entity: c.Entity,
		Source: c.Source, Status: AlertOpen, Count: 1, CreatedAt: at, UpdatedAt: at}
	if c.Note != "" {
		a.Notes = append(a.Notes, OpsgenieNote{User: c.User, Source: c.Source, Note: c.Note, At: at})
	}
	og.Alerts = append(og.Alerts, a)
	return f.ogAccepted("Create", true, "Created alert", a.ID, a.Alias)
}

func (f *Fakes) ogClose(r *http.Request, body []byte) answer {
	var c ogAction
	if len(body) > 0 && json.Unmarshal(body, &c) != nil {
		return f.ogError(http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.")
	}
	i, bad := f.ogFind(r)
	if bad != nil {
		return *bad
	}
	if i < 0 {
		return f.ogAccepted("Close", false, "Alert does not exist", "", aliasOf(r))
	}
	a := &f.st.Opsgenie.Alerts[i]
	if a.Status == AlertClosed {
		return f.ogAccepted("Close", false, "Alert is already closed", a.ID, a.Alias)
	}
	at := f.now()
	a.Status, a.ClosedAt, a.ClosedBy, a.UpdatedAt = AlertClosed, at, c.User, at
	if c.Note != "" {
		a.Notes = append(a.Notes, OpsgenieNote{User: c.User, Source: c.Source, Note: c.Note, At: at})
	}
	return f.ogAccepted("Close", true, "Closed alert", a.ID, a.Alias)
}

func (f *Fakes) ogNote(r *http.Request, body []byte) answer {
	var c ogAction
	if err := json.Unmarshal(body, &c); err != nil {
		return f.ogError(http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.")
	}
	if strings.TrimSpace(c.Note) == "" {
		return f.ogError(http.StatusUnprocessableEntity, "Note can not be empty.")
	}
	i, bad := f.ogFind(r)
	if bad != nil {
		return *bad
	}
	if i < 0 {
		return f.ogAccepted("AddNote", false, "Alert does not exist", "", aliasOf(r))
	}
	a := &f.st.Opsgenie.Alerts[i]
	at := f.now()
	a.Notes = append(a.Notes, OpsgenieNote{User: c.User, Source: c.Source, Note: c.Note, At: at})
	a.UpdatedAt = at
	return f.ogAccepted("AddNote", true, "Added note", a.ID, a.Alias)
}

func (f *Fakes) ogRequest(r *http.Request, _ []byte) answer {
	id := r.PathValue("requestID")
	for _, q := range f.st.Opsgenie.Requests {
		if q.RequestID == id {
			return reply(http.StatusOK, map[string]any{"data": map[string]any{"success": q.Success, "action": q.Action,
				"processedAt": q.At.UTC().Format(time.RFC3339Nano), "isSuccess": q.Success, "status": q.Status,
				"alertId": q.AlertID, "alias": q.Alias}, "took": 0.001, "requestId": f.uuid()})
		}
	}
	return f.ogError(http.StatusNotFound, "Request does not exist")
}

func (f *Fakes) ogGet(r *http.Request, _ []byte) answer {
	i, bad := f.ogFind(r)
	if bad != nil {
		return *bad
	}
	if i < 0 {
		return f.ogError(http.StatusNotFound, "Alert does not exist")
	}
	a := f.st.Opsgenie.Alerts[i]
	return reply(http.StatusOK, map[string]any{"data": map[string]any{"id": a.ID, "tinyId": a.TinyID, "alias": a.Alias,
		"message": a.Message, "status": a.Status, "count": a.Count, "tags": nonNil(a.Tags), "priority": a.Priority,
		"source": a.Source, "entity": a.Entity, "description": a.Description, "details": a.Details,
		"createdAt": a.CreatedAt.UTC().Format(time.RFC3339Nano), "updatedAt": a.UpdatedAt.UTC().Format(time.RFC3339Nano)},
		"took": 0.001, "requestId": f.uuid()})
}

// ogFind returns the index of the alert r's path names by its
// identifierType (an alias names its open alert, else its latest), -1
// when there is none; or the answer to an identifierType Opsgenie does
// not know. The caller holds f.mu.
func (f *Fakes) ogFind(r *http.Request) (int, *answer) {
	ident := r.PathValue("identifier")
	alerts := f.st.Opsgenie.Alerts
	switch t := r.URL.Query().Get("identifierType"); t {
	case "", "id":
		return slices.IndexFunc(alerts, func(a OpsgenieAlert) bool { return a.ID == ident }), nil
	case "tiny":
		return slices.IndexFunc(alerts, func(a OpsgenieAlert) bool { return a.TinyID == ident }), nil
	case "alias":
		if i := f.ogOpen(ident); i >= 0 {
			return i, nil
		}
		return f.ogLatest(ident), nil
	default:
		a := f.ogError(http.StatusUnprocessableEntity, "Invalid identifierType: "+t+" (want id, tiny or alias)")
		return -1, &a
	}
}

// ogOpen returns the index of the open alert of alias, -1 when none is.
func (f *Fakes) ogOpen(alias string) int {
	return slices.IndexFunc(f.st.Opsgenie.Alerts, func(a OpsgenieAlert) bool { return a.Alias == alias && a.Status == AlertOpen })
}

// ogLatest returns the index of the latest alert of alias, -1 when none
// is.
func (f *Fakes) ogLatest(alias string) int {
	for i := len(f.st.Opsgenie.Alerts) - 1; i >= 0; i-- {
		if f.st.Opsgenie.Alerts[i].Alias == alias {
			return i
		}
	}
	return -1
}

// aliasOf returns the alias r's path names, "" when it names another
// identifier.
func aliasOf(r *http.Request) string {
	if r.URL.Query().Get("identifierType") == "alias" {
		return r.PathValue("identifier")
	}
	return ""
}
