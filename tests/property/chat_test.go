package property

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/chat/slack"
	"github.com/openrecall/openrecall/server"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// chatProperty is the gate of deciding from chat (DESIGN §12c): a
// request changes nothing unless Slack signed it, lately, once, for a user
// who maps to an analyst who may decide.
func chatProperty() pbt.Property {
	return pbt.ForAll("P154_chat_request_changes_state_only_when_signed_fresh_new_and_mapped_to_a_decider",
		"No chat request changes state unless its signature verifies with the signing secret, its timestamp is within five minutes of now, it is not a replay of a signed request taken before, and its Slack user maps to an analyst whose token has the retain scope: for any sequence of interaction requests (a button decision, an approval as proposed, a note modal's submission) mixing the right and a wrong secret, timestamp offsets at, inside and past the window either way, replays and mapped, unmapped, read-only and tokenless users, the waiting rows and memories are unchanged exactly when one of those fails or the analysis was decided already, and otherwise the analysis is decided by the mapped analyst.",
		"ChatRequestGen", chatCaseGen(), checkChat, pbt.Expensive(4),
		pbt.Pin("a stale click, then the same click fresh, then its replay", chatCase{Requests: []chatReq{{Offset: 5}, {}, {Replay: true}}}),
		pbt.Pin("a click, then its replay with the signature's hex in upper case", chatCase{Requests: []chatReq{{}, {Replay: true, UpperHex: true}}}),
		pbt.Pin("a read-only analyst's note, then alice's", chatCase{Requests: []chatReq{{User: 1, Action: 2}, {Action: 2}}}),
		pbt.Classify(func(c chatCase) []string {
			l := simulateChat(c)
			slices.Sort(l)
			return slices.Compact(l)
		}),
		pbt.Cover("accepted", 30), pbt.Cover("replay", 5), pbt.Cover("stale", 10))
}

// chatOffsets are the timestamp offsets a request may carry, in seconds:
// inside the window, at its edges, past them.
var chatOffsets = []int64{0, -299, 299, -300, 300, -301, 301, -3600}

// chatUsers are the Slack users: alice decides, viewer reads, a stranger
// is not mapped, ghost maps to a name no token has.
var chatUsers = []string{"UALICE", "UVIEWER", "USTRANGER", "UGHOST"}

// chatPool is how many analyses wait.
const chatPool = 2

// chatReq is one interaction request.
type chatReq struct {
	WrongSecret bool
	Offset      int // chatOffsets index
	User        int // chatUsers index
	Target      int // analysis, mod chatPool
	Action      int // 0 decide real, 1 approve as proposed, 2 note submission
	// Replay resends the previous request byte for byte, headers too.
	Replay bool
	// UpperHex writes the signature's hex in upper case: the same
	// signature to whoever reads hex, so the same signed request.
	UpperHex bool
}

type chatCase struct{ Requests []chatReq }

func chatCaseGen() gopter.Gen {
	req := gg.Struct(reflect.TypeOf(chatReq{}), map[string]gopter.Gen{
		"WrongSecret": gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Offset":      gg.IntRange(0, len(chatOffsets)-1),
		"User":        gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(0)}, {Weight: 1, Gen: gg.Const(1)}, {Weight: 1, Gen: gg.Const(2)}, {Weight: 1, Gen: gg.Const(3)}}),
		"Target":      gg.IntRange(0, chatPool-1),
		"Action":      gg.IntRange(0, 2),
		"Replay":      gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"UpperHex":    gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
	})
	return gg.Struct(reflect.TypeOf(chatCase{}), map[string]gopter.Gen{"Requests": gg.SliceOf(req)})
}

// resolved is the request a chatReq sends: a replay is the previous one.
func (c chatCase) resolved() []chatReq {
	out := make([]chatReq, len(c.Requests))
	for i, r := range c.Requests {
		if r.Replay && i > 0 {
			out[i] = out[i-1]
			out[i].Replay, out[i].UpperHex = true, r.UpperHex
			continue
		}
		r.Replay = false
		out[i] = r
	}
	return out
}

// key is what a request's signature covers: two requests with the same
// key are the same signed request.
func (r chatReq) key() string {
	return fmt.Sprintf("%v/%d/%d/%d/%d", r.WrongSecret, r.Offset, r.User, r.Target%chatPool, r.Action)
}

// simulateChat is the rule, per request: "accepted" or why not
// (bad_signature, stale, replay, unmapped, read_only).
func simulateChat(c chatCase) []string {
	taken := map[string]bool{}
	var out []string
	for _, r := range c.resolved() {
		off := chatOffsets[r.Offset]
		switch {
		case r.WrongSecret:
			out = append(out, "bad_signature")
		case off > 300 || off < -300:
			out = append(out, "stale")
		case taken[r.key()]:
			out = append(out, "replay")
		case r.User == 1:
			taken[r.key()] = true
			out = append(out, "read_only")
		case r.User >= 2:
			taken[r.key()] = true
			out = append(out, "unmapped")
		default:
			taken[r.key()] = true
			out = append(out, "accepted")
		}
	}
	return out
}

// chatAPI stands in for the Web API: nothing of the property reads it.
type chatAPI struct{}

func (chatAPI) OpenView(context.Context, string, any) error                 { return nil }
func (chatAPI) Update(context.Context, string, string, string) error        { return nil }
func (chatAPI) PostEphemeral(context.Context, string, string, string) error { return nil }

const chatSecret = "p154-signing-secret"

func chatID(i int) string { return fmt.Sprintf("run-p154-%06d", i%chatPool) }

// chatBody is the form body of r as Slack sends it.
func chatBody(r chatReq) string {
	user := map[string]any{"id": chatUsers[r.User], "username": "u", "team_id": "T0"}
	var p map[string]any
	switch r.Action {
	case 2:
		p = map[string]any{"type": slack.TypeViewSubmission, "user": user, "view": map[string]any{
			"callback_id": slack.CallbackNote, "private_metadata": chatID(r.Target) + "||",
			"state": map[string]any{"values": map[string]any{
				"decision":   map[string]any{"decision": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": "false_positive"}}},
				"note":       map[string]any{"note": map[string]any{"type": "plain_text_input", "value": "cron noise"}},
				"dead_end_1": map[string]any{"dead_end": map[string]any{"type": "plain_text_input", "value": "restarted it"}},
			}}}}
	default:
		id := "openrecall:decide:real"
		if r.Action == 1 {
			id = slack.ActionApprove
		}
		p = map[string]any{"type": slack.TypeBlockActions, "user": user, "trigger_id": "1.2.3",
			"container": map[string]any{"type": "message", "message_ts": "1.000200", "channel_id": "C0"},
			"actions":   []map[string]any{{"type": "button", "action_id": id, "value": chatID(r.Target)}}}
	}
	b, _ := json.Marshal(p)
	return "payload=" + url.QueryEscape(string(b))
}

// chatState is what a request could change: each analysis's decision and
// the memories.
func chatState(ctx context.Context, d *keyedDesk) (string, error) {
	var sb strings.Builder
	for i := range chatPool {
		w, err := d.st.WaitingFor(ctx, chatID(i))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "%s:%v:%s:%s;", w.AnalysisID, w.Decided, w.DecidedBy, w.Decision)
	}
	incs, err := d.st.SearchIncidents(ctx, openrecall.IncidentFilter{Forgotten: true})
	if err != nil {
		return "", err
	}
	for _, inc := range incs {
		fmt.Fprintf(&sb, "%s:%s;", inc.ID, inc.Analyst)
	}
	return sb.String(), nil
}

func checkChat(c chatCase) error {
	ctx := context.Background()
	return inKeyedDesk(ctx, "openrecall-pbt-chat-", func(d *keyedDesk) error { return checkChatIn(ctx, d, c) })
}

func checkChatIn(ctx context.Context, d *keyedDesk, c chatCase) error {
	for i := range chatPool {
		name := fmt.Sprintf("Chat%d", i)
		r := openrecall.Result{
			AnalysisID: chatID(i), Batch: "run-p154", Outcome: openrecall.ResultTriaged,
			Alert:    openrecall.Alert{ID: "a-" + name, Title: "alert " + name, Severity: openrecall.SeverityHigh, Status: "firing", Labels: map[string]string{"alertname": name, "service": "db"}},
			Identity: openrecall.Identity{Rule: name, Service: "db"}, Decision: openrecall.DecisionEscalated,
			Triage:   openrecall.TriageResult{Decision: openrecall.DecisionEscalated, RequiresHumanApproval: true},
			Analysis: &openrecall.Analysis{Decision: openrecall.DecisionKnownBenign, Model: "local-strong"},
			Steps:    []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK}},
		}
		r.Audit = audit.Entries(r, fixedNow())
		if _, err := d.sink.Persist(ctx, r, nil); err != nil {
			return fmt.Errorf("setup: persist: %v", err)
		}
	}
	h, _, err := authServer(d, fixedNow, nil, func(cfg *server.Config) {
		cfg.Tokens = []server.Token{
			{Name: "alice", Analyst: "alice", Secret: "alice-secret-0123456789", Scopes: []string{server.ScopeRead, server.ScopeRetain}},
			{Name: "viewer", Analyst: "viewer", Secret: "viewer-secret-0123456789", Scopes: []string{server.ScopeRead}},
		}
		cfg.Slack = &server.SlackConfig{SigningSecret: chatSecret, API: chatAPI{},
			Users: map[string]string{"UALICE": "alice", "UVIEWER": "viewer", "UGHOST": "ghost"}}
	})
	if err != nil {
		return err
	}
	want := simulateChat(c)
	decided := map[string]bool{}
	for i, r := range c.resolved() {
		before, err := chatState(ctx, d)
		if err != nil {
			return fmt.Errorf("read: %v", err)
		}
		secret := chatSecret
		if r.WrongSecret {
			secret = "not-" + chatSecret
		}
		ts := fixedNow().Add(time.Duration(chatOffsets[r.Offset]) * time.Second).Unix()
		body := chatBody(r)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/slack/interactions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(slack.HeaderTimestamp, strconv.FormatInt(ts, 10))
		sig := slack.Sign(secret, ts, []byte(body))
		if r.UpperHex {
			sig = "v0=" + strings.ToUpper(strings.TrimPrefix(sig, "v0="))
		}
		req.Header.Set(slack.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		after, err := chatState(ctx, d)
		if err != nil {
			return fmt.Errorf("read: %v", err)
		}
		id := chatID(r.Target)
		accepted := want[i] == "accepted"
		wantChange := accepted && !decided[id]
		switch {
		case accepted && rec.Code != http.StatusOK:
			return fmt.Errorf("request %d (%+v) should be taken: %d %s", i, r, rec.Code, rec.Body)
		case !accepted && (rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), want[i])):
			return fmt.Errorf("request %d (%+v) should be refused %s: %d %s", i, r, want[i], rec.Code, rec.Body)
		case wantChange && before == after:
			return fmt.Errorf("request %d (%+v) was taken and changed nothing: %s", i, r, after)
		case !wantChange && before != after:
			return fmt.Errorf("request %d (%+v), %s, changed the state: %s → %s", i, r, want[i], before, after)
		}
		if wantChange {
			w, err := d.st.WaitingFor(ctx, id)
			if err != nil || !w.Decided || w.DecidedBy != "alice" {
				return fmt.Errorf("request %d: %s decided %+v, %v; want by alice", i, id, w, err)
			}
			decided[id] = true
		}
	}
	return nil
}
