package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/chat/slack"
	"github.com/openrecall/openrecall/server/httperr"
	"github.com/openrecall/openrecall/usecase"
)

// SlackAPI is the Slack Web API the interaction endpoint calls.
// *slack.Client satisfies it.
type SlackAPI interface {
	OpenView(ctx context.Context, triggerID string, view any) error
	Update(ctx context.Context, channel, ts, text string) error
	PostEphemeral(ctx context.Context, channel, user, text string) error
}

// SlackConfig turns on deciding from Slack (DESIGN §12c): POST
// /api/v1/slack/interactions.
type SlackConfig struct {
	// SigningSecret verifies every request before anything of it is read.
	SigningSecret string
	// Users maps a Slack user id to an analyst: the Analyst of a token of
	// Config.Tokens, which must have the retain scope.
	Users map[string]string
	// API updates messages, opens the note modal and tells a person what
	// was refused.
	API SlackAPI
	// Replays remembers the signatures taken (nil: a new set of
	// slack.DefaultReplayCapacity).
	Replays *slack.Replays
}

// Slack interactions' limits.
const (
	// slackMaxBody bounds an interaction body: a block_actions payload
	// carries the whole message it came from.
	slackMaxBody = 1 << 20
	// slackCallTimeout bounds one Web API call made after the answer;
	// slackViewTimeout views.open, made within the request (its trigger
	// expires three seconds after the click).
	slackCallTimeout = 10 * time.Second
	slackViewTimeout = 2500 * time.Millisecond
	// OriginSlack is the origin of a decision taken in Slack, as the audit
	// trail says it.
	OriginSlack = "slack"
)

// slackChat is the endpoint's state: its replays and the Web API calls
// still in flight after their answers (Serve waits for them).
type slackChat struct {
	cfg      SlackConfig
	replays  *slack.Replays
	inFlight sync.WaitGroup
}

func newSlackChat(cfg *SlackConfig) (*slackChat, error) {
	if cfg == nil {
		return nil, nil
	}
	if cfg.SigningSecret == "" || cfg.API == nil {
		return nil, fmt.Errorf("server: slack: a signing secret and a Web API client are required: %w", openrecall.ErrInvalid)
	}
	r := cfg.Replays
	if r == nil {
		r = slack.NewReplays(0)
	}
	return &slackChat{cfg: *cfg, replays: r}, nil
}

// later runs a Web API call after the answer, bounded by slackCallTimeout,
// logging its failure.
func (s *Server) later(what string, call func(ctx context.Context) error) {
	s.slack.inFlight.Add(1)
	go func() {
		defer s.slack.inFlight.Done()
		ctx, cancel := context.WithTimeout(context.Background(), slackCallTimeout)
		defer cancel()
		if err := call(ctx); err != nil {
			s.log.Warn("slack call failed", zap.String("call", what), zap.Error(err))
		}
	}()
}

// waitSlack waits for the Web API calls in flight (each is bounded).
func (s *Server) waitSlack() {
	if s.slack != nil {
		s.slack.inFlight.Wait()
	}
}

// slackInteraction answers POST /api/v1/slack/interactions: it verifies
// the signature and the timestamp over the raw body before reading
// anything of it, refuses a replay, maps the user to an analyst with the
// retain scope, then runs the use case the button or the modal asks for
// (the cockpit's: Decide, ApproveProposal, Wrong) and answers; the message
// is updated after the answer. A refusal is 401, counted and logged, and
// stores nothing.
func (s *Server) slackInteraction(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, slackMaxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("an interaction body is at most %d bytes", slackMaxBody))
			return
		}
		writeError(w, r, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	now := s.now()
	at, err := slack.Verify(s.slack.cfg.SigningSecret, r.Header, body, now)
	if err != nil {
		s.slackRefuse(w, r, err, slack.Interaction{})
		return
	}
	if !s.slack.replays.Take(r.Header.Get(slack.HeaderSignature), at, now) {
		s.slackRefuse(w, r, &slack.Refusal{Reason: slack.ReasonReplay, Detail: "this signed request was taken already"}, slack.Interaction{})
		return
	}
	in, err := slack.ParseForm(body)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	analyst, refused := s.slackAnalyst(in.User.ID)
	if refused != nil {
		s.slackRefuse(w, r, refused, in)
		return
	}
	switch in.Type {
	case slack.TypeBlockActions:
		s.slackAction(w, r, in, analyst)
	case slack.TypeViewSubmission:
		s.slackSubmission(w, r, in, analyst)
	default:
		// Nothing openrecall offers sends it: acknowledged, ignored.
		w.WriteHeader(http.StatusOK)
	}
}

// slackAnalyst returns the analyst Slack user id maps to, or a refusal:
// unmapped when no analyst of the tokens is mapped, read_only when that
// analyst's token has not the retain scope. The same rule as the API's:
// the actor is the mapped name, never a field of the payload.
func (s *Server) slackAnalyst(userID string) (string, *slack.Refusal) {
	name := s.slack.cfg.Users[userID]
	if name == "" || userID == "" {
		return "", &slack.Refusal{Reason: slack.ReasonUnmapped, Detail: fmt.Sprintf("Slack user %q is not in chat.slack.users", userID)}
	}
	known := false
	for _, t := range s.cfg.Tokens {
		if t.Analyst != name {
			continue
		}
		known = true
		if slices.Contains(t.Scopes, ScopeRetain) {
			return name, nil
		}
	}
	if !known {
		return "", &slack.Refusal{Reason: slack.ReasonUnmapped, Detail: fmt.Sprintf("Slack user %s maps to %q, which names no token of server.tokens", userID, name)}
	}
	return "", &slack.Refusal{Reason: slack.ReasonReadOnly, Detail: fmt.Sprintf("Slack user %s maps to %s, whose token has not the retain scope", userID, name)}
}

// slackRefuse answers 401, counts and logs the refusal; a person who is
// not allowed to decide is told so in the channel, alone.
func (s *Server) slackRefuse(w http.ResponseWriter, r *http.Request, err error, in slack.Interaction) {
	reason := slack.ReasonBadSignature
	var rf *slack.Refusal
	if errors.As(err, &rf) {
		reason = rf.Reason
	}
	s.obs.SlackRefused(reason)
	s.log.Warn("slack interaction refused", zap.String("request_id", requestID(r)), zap.String("reason", reason), zap.Error(err))
	if reason == slack.ReasonUnmapped || reason == slack.ReasonReadOnly {
		channel, _ := in.MessageRef()
		if in.Type == slack.TypeViewSubmission {
			channel = slack.ParseMetadata(in.View.PrivateMetadata).Channel
		}
		msg := "openrecall did not take this: your Slack user is not mapped to an analyst (ask whoever runs openrecall to add " + in.User.ID + " to chat.slack.users)."
		if reason == slack.ReasonReadOnly {
			msg = "openrecall did not take this: the analyst your Slack user maps to may read but not decide (their token has no retain scope)."
		}
		if channel != "" {
			user := in.User.ID
			s.later("chat.postEphemeral", func(ctx context.Context) error { return s.slack.cfg.API.PostEphemeral(ctx, channel, user, msg) })
		}
	}
	writeError(w, r, http.StatusUnauthorized, "slack interaction refused: "+reason)
}

// slackAction runs the button of a block_actions payload.
func (s *Server) slackAction(w http.ResponseWriter, r *http.Request, in slack.Interaction, analyst string) {
	w.WriteHeader(http.StatusOK)
	if len(in.Actions) == 0 {
		return
	}
	act := in.Actions[0]
	channel, ts := in.MessageRef()
	tell := func(msg string) {
		if channel != "" {
			user := in.User.ID
			s.later("chat.postEphemeral", func(ctx context.Context) error { return s.slack.cfg.API.PostEphemeral(ctx, channel, user, msg) })
		}
	}
	update := func(msg string) {
		if channel != "" && ts != "" {
			s.later("chat.update", func(ctx context.Context) error { return s.slack.cfg.API.Update(ctx, channel, ts, msg) })
		}
	}
	ctx := r.Context()
	note := "decided from Slack by " + analyst
	switch id := act.ActionID; {
	case id == slack.ActionNote:
		vctx, cancel := context.WithTimeout(ctx, slackViewTimeout)
		defer cancel()
		if err := s.slack.cfg.API.OpenView(vctx, in.TriggerID, slack.NoteModal(slack.Metadata{AnalysisID: act.Value, Channel: channel, TS: ts})); err != nil {
			s.log.Warn("slack views.open failed", zap.String("request_id", requestID(r)), zap.Error(err))
			tell("openrecall could not open the note: " + err.Error())
		}
	case id == slack.ActionApprove:
		out, err := s.cfg.UseCases.Decide(ctx, usecase.DecideRequest{AnalysisID: act.Value, AsProposed: true,
			Decision: usecase.Decision{Analyst: analyst, Note: note, Origin: OriginSlack}})
		s.slackDecided(r, out, err, update, tell)
	case strings.HasPrefix(id, slack.ActionDecidePrefix):
		d, err := usecase.ParseDecision(strings.TrimPrefix(id, slack.ActionDecidePrefix))
		if err != nil {
			tell("openrecall did not take this: " + err.Error())
			return
		}
		out, err := s.cfg.UseCases.Decide(ctx, usecase.DecideRequest{AnalysisID: act.Value,
			Decision: usecase.Decision{Decision: d, Analyst: analyst, Note: note, Origin: OriginSlack}})
		s.slackDecided(r, out, err, update, tell)
	case id == slack.ActionApproveException:
		ch, err := s.cfg.UseCases.ApproveProposal(ctx, usecase.ApproveRequest{ProposalID: act.Value, Analyst: analyst,
			Note: "approved from Slack by " + analyst, Origin: OriginSlack})
		if err != nil {
			tell(s.slackErr(r, err))
			return
		}
		e := ch.Exception
		update(fmt.Sprintf("Exception %s approved by %s at %s (%s until %s).", e.ID, e.Analyst, clock(s.now()), e.Decision, e.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")))
	case id == slack.ActionWrong:
		out, err := s.cfg.UseCases.Wrong(ctx, act.Value, "said from Slack by "+analyst, analyst)
		if err != nil {
			tell(s.slackErr(r, err))
			return
		}
		// The digest lists other closures: it keeps its buttons, and the
		// person alone hears what happened.
		msg := fmt.Sprintf("Analysis %s is back in the queue: %s said closing it was wrong.", act.Value, out.Closure.WrongBy)
		if len(out.Forgotten) > 0 {
			msg += " Memories taken back: " + strings.Join(out.Forgotten, ", ") + "."
		}
		if out.Revoked != "" {
			msg += " Exception revoked: " + out.Revoked + "."
		}
		tell(msg)
	default:
		s.log.Debug("slack action not openrecall's", zap.String("action_id", id))
	}
}

// slackDecided updates the message with what Decide did, or tells the
// person why it did not.
func (s *Server) slackDecided(r *http.Request, out usecase.Decided, err error, update, tell func(string)) {
	if err != nil {
		tell(s.slackErr(r, err))
		return
	}
	update(decidedText(out))
}

// decidedText says what a decision did, for the message it came from.
func decidedText(out usecase.Decided) string {
	w := out.Waiting
	msg := fmt.Sprintf("Decided %s by %s at %s", w.Decision, w.DecidedBy, clock(w.DecidedAt))
	if !out.Changed {
		msg = "Already " + strings.ToLower(msg[:1]) + msg[1:]
	}
	if out.Retained != nil && out.Retained.Group != nil && out.Retained.Group.Size > 1 {
		g := out.Retained.Group
		msg += fmt.Sprintf(", for its alert group %s (%d firings)", g.ID, g.Size)
	}
	if out.Retained != nil && out.Retained.Incident.Note != "" {
		msg += " — note: " + out.Retained.Incident.Note
	}
	return msg
}

// clock is a time as a person on shift reads it.
func clock(t time.Time) string { return t.UTC().Format("15:04 UTC") }

// slackErr is what a person is told of a use case's error: its text when
// it is theirs to fix, else a request id (and the error logged).
func (s *Server) slackErr(r *http.Request, err error) string {
	if code := httperr.Status(err); httperr.Shown(code) {
		return "openrecall did not take this: " + err.Error()
	}
	s.log.Error("slack interaction failed", zap.String("request_id", requestID(r)), zap.Error(err))
	return "openrecall failed to take this; see its log for request " + requestID(r)
}

// slackSubmission takes the note modal: the decision, the note and the
// dead ends, retained through Decide; a missing decision or note is
// answered as errors on the modal's inputs.
func (s *Server) slackSubmission(w http.ResponseWriter, r *http.Request, in slack.Interaction, analyst string) {
	if in.View.CallbackID != slack.CallbackNote {
		w.WriteHeader(http.StatusOK)
		return
	}
	sub := slack.ReadSubmission(in.View)
	errs := map[string]string{}
	d, err := usecase.ParseDecision(sub.Decision)
	if err != nil {
		errs[slack.BlockDecision] = "Choose a decision: " + usecase.Decisions() + "."
	}
	if sub.Note == "" {
		errs[slack.BlockNote] = "A note is required: memory keeps why."
	}
	if sub.AnalysisID == "" {
		errs[slack.BlockDecision] = "This form names no analysis: open it again from the message."
	}
	if len(errs) > 0 {
		writeJSON(w, http.StatusOK, slackErrors{Action: "errors", Errors: errs})
		return
	}
	out, err := s.cfg.UseCases.Decide(r.Context(), usecase.DecideRequest{AnalysisID: sub.AnalysisID,
		Decision: usecase.Decision{Decision: d, Note: sub.Note, DeadEnds: sub.DeadEnds, Analyst: analyst, Origin: OriginSlack}})
	if err != nil {
		writeJSON(w, http.StatusOK, slackErrors{Action: "errors", Errors: map[string]string{slack.BlockDecision: s.slackErr(r, err)}})
		return
	}
	w.WriteHeader(http.StatusOK)
	if sub.Channel != "" && sub.TS != "" {
		channel, ts, msg := sub.Channel, sub.TS, decidedText(out)
		s.later("chat.update", func(ctx context.Context) error { return s.slack.cfg.API.Update(ctx, channel, ts, msg) })
	}
}

// slackErrors is a view_submission's answer that keeps the modal open
// with errors under the inputs (https://docs.slack.dev/surfaces/modals).
type slackErrors struct {
	Action string            `json:"response_action"`
	Errors map[string]string `json:"errors"`
}
