package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// SlackAPIURL is the Slack Web API's base URL.
const SlackAPIURL = "https://slack.com/api/"

// The block and action ids of a Slack message's buttons (SlackConfig
// Interactive), which the interaction endpoint (deciding from chat,
// DESIGN §12c) reads back from a block_actions payload. Each decision
// button's value is the analysis id; approve exception's is the
// proposal's id. An action_id need only be unique within its block
// (https://docs.slack.dev/reference/block-kit/block-elements/button-element).
const (
	// SlackBlockActions is the block_id of a message's decision buttons.
	// A message updated after a decision has no block of that id.
	SlackBlockActions = "openrecall:actions"
	// SlackActionReview is the link button to the review page (Slack
	// still sends its click to the interaction endpoint, which only
	// acknowledges it).
	SlackActionReview = "openrecall:review"
	// SlackActionApprove approves the analysis's proposed decision.
	SlackActionApprove = "openrecall:approve"
	// SlackActionDecide prefixes the buttons that decide as they say:
	// "openrecall:decide:real", "…:known_benign", "…:false_positive".
	SlackActionDecide = "openrecall:decide:"
	// SlackActionNote opens the note modal (a decision, a note and dead
	// ends).
	SlackActionNote = "openrecall:note"
	// SlackActionApproveException approves the exception memory proposes
	// for a detection; its value is the proposal's id.
	SlackActionApproveException = "openrecall:approve_exception"
	// SlackActionWrong is a digest's "This was wrong" on a closed
	// analysis, as the History page's correction.
	SlackActionWrong = "openrecall:wrong"
)

// SlackConfig configures a Slack receiver: a bot token and a channel (the
// Web API's chat.postMessage and chat.update), or an incoming webhook's
// URL.
type SlackConfig struct {
	// Name is the receiver's name, which routes name (required).
	Name string
	// Token is a bot token (xoxb-…) with the chat:write scope. Exactly
	// one of Token and WebhookURL is set.
	Token Secret
	// Channel is the channel's id or name the bot posts to (required with
	// Token; the bot must be in it).
	Channel string
	// WebhookURL is an incoming webhook's URL, itself the credential.
	// Webhook messages cannot be edited: a resolve or an update is posted
	// as a new message.
	WebhookURL Secret
	// APIURL is the Web API's base URL (default SlackAPIURL).
	APIURL string
	// Interactive adds the decision buttons (approve as proposed, real,
	// benign, false positive, add a note; approve exception for a
	// detection with a proposed exception) to a message left to a person,
	// and "This was wrong" to a digest's analyses. The Slack app's
	// interactivity must point at openrecall's interaction endpoint
	// (POST /api/v1/slack/interactions); off by default, so a receiver
	// without it shows no dead buttons.
	Interactive bool
	// Timeout bounds one Send (default 10s).
	Timeout time.Duration
	// Client sends the requests (default: a client of its own).
	Client *http.Client
}

// Slack posts notifications to a Slack channel as Block Kit messages.
// With a bot token, a trigger is posted with chat.postMessage and its
// delivery keeps the message's channel and ts; the episode's resolve and
// updates then edit that message with chat.update (to show it resolved or
// decided), and post a new one when there is no message to edit. With an
// incoming webhook every notification is a new message. Safe for
// concurrent use.
//
// Written to https://docs.slack.dev/reference/methods/chat.postMessage,
// https://docs.slack.dev/reference/methods/chat.update,
// https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks,
// https://docs.slack.dev/reference/block-kit/blocks and
// https://docs.slack.dev/apis/web-api/rate-limits.
type Slack struct {
	name        string
	token       Secret
	channel     string
	webhook     string
	api         string
	interactive bool
	timeout     time.Duration
	client      *http.Client
}

// NewSlack validates cfg and returns its receiver. Its errors name the
// configuration field at fault, never a secret's value.
func NewSlack(cfg SlackConfig) (*Slack, error) {
	if cfg.Name == "" {
		return nil, errors.New("slack receiver: name is required")
	}
	fail := func(format string, a ...any) (*Slack, error) {
		return nil, fmt.Errorf("slack receiver %s: "+format, append([]any{cfg.Name}, a...)...)
	}
	s := &Slack{name: cfg.Name, token: cfg.Token, channel: cfg.Channel, interactive: cfg.Interactive,
		timeout: orDefault(cfg.Timeout), client: cfg.Client, api: cfg.APIURL}
	switch {
	case cfg.Token.IsZero() == cfg.WebhookURL.IsZero():
		return fail("set exactly one of token (a bot token) and webhook_url (an incoming webhook)")
	case !cfg.Token.IsZero() && strings.TrimSpace(cfg.Channel) == "":
		return fail("channel is required with a token")
	case !cfg.Token.IsZero() && strings.ContainsAny(cfg.Token.Reveal(), " \r\n"):
		return fail("token holds white space")
	case cfg.Timeout < 0:
		return fail("timeout %s is negative", cfg.Timeout)
	}
	if !cfg.WebhookURL.IsZero() {
		if err := checkURL(cfg.WebhookURL.Reveal(), false); err != nil {
			return fail("webhook_url %v", err)
		}
		s.webhook = cfg.WebhookURL.Reveal()
	}
	if s.api == "" {
		s.api = SlackAPIURL
	}
	if err := checkURL(s.api, false); err != nil {
		return fail("api_url %q %v", s.api, err)
	}
	if !strings.HasSuffix(s.api, "/") {
		s.api += "/"
	}
	return s, nil
}

// Name returns the receiver's configured name.
func (s *Slack) Name() string { return s.name }

// Type returns "slack".
func (s *Slack) Type() string { return "slack" }

// Send posts n, or edits the episode's message (see Slack). A trigger's
// delivery keeps channel and ts (bot token only) and what its resolve
// shows of the decision.
func (s *Slack) Send(ctx context.Context, n Notification) (Delivery, error) {
	if n.Kind == KindDigest {
		return s.sendDigest(ctx, n)
	}
	if err := checkKind(n); err != nil {
		return Delivery{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v := viewOf(n)
	text, blocks := v.slackFallback(), s.blocks(v, n.Result)
	if s.webhook != "" {
		return s.postWebhook(ctx, n, text, blocks)
	}
	kept := keptFor(n)
	if n.Kind != KindTrigger {
		if ch, ts := n.Prior["channel"], n.Prior["ts"]; ch != "" && ts != "" {
			ans, err := s.call(ctx, "chat.update", slackMessage{Channel: ch, TS: ts, Text: text, Blocks: blocks})
			if err == nil {
				return Delivery{State: withMessage(kept, ans.Channel, ans.TS, ch, ts)}, nil
			}
			var se *SendError
			if !errors.As(err, &se) || !slackGone[se.slackCode()] {
				return Delivery{}, err
			}
			// The message is gone or can no longer be edited: the resolve
			// or decision is posted as a message of its own.
		}
	}
	ans, err := s.call(ctx, "chat.postMessage", slackMessage{Channel: s.channel, Text: text, Blocks: blocks})
	if err != nil {
		return Delivery{}, err
	}
	return Delivery{State: withMessage(kept, ans.Channel, ans.TS, s.channel, "")}, nil
}

// withMessage adds the message's channel and ts to kept: the answer's,
// else the request's.
func withMessage(kept map[string]string, channel, ts, reqChannel, reqTS string) map[string]string {
	if channel == "" {
		channel = reqChannel
	}
	if ts == "" {
		ts = reqTS
	}
	kept["channel"], kept["ts"] = channel, ts
	return kept
}

// postWebhook posts a message to the incoming webhook. It answers 200
// "ok", or an HTTP error with a short text ("invalid_payload",
// "channel_not_found", …).
func (s *Slack) postWebhook(ctx context.Context, n Notification, text string, blocks []slackBlock) (Delivery, error) {
	_, err := send(ctx, s.client, request{What: "slack webhook", URL: s.webhook, SecretURL: true, ContentType: slackContentType,
		Body: slackMessage{Text: text, Blocks: blocks}})
	if err != nil {
		return Delivery{}, err
	}
	if n.Kind == KindTrigger {
		return Delivery{State: keptOf(n.Result)}, nil
	}
	return Delivery{}, nil
}

// slackAnswer is the Web API's answer: ok, or the error's code.
type slackAnswer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// slackContentType is the type of the JSON bodies Slack takes: without
// the charset, the Web API warns (missing_charset).
const slackContentType = "application/json; charset=utf-8"

// call POSTs payload as JSON to the Web API method with the bot token.
// The API answers HTTP 200 with {"ok": false, "error": code} for what it
// refuses, and 429 with Retry-After when rate limited (classified by
// send, as every other HTTP failure).
func (s *Slack) call(ctx context.Context, method string, payload slackMessage) (slackAnswer, error) {
	token := s.token.Reveal()
	a, err := send(ctx, s.client, request{What: "slack " + method, URL: s.api + method, ContentType: slackContentType,
		Header: http.Header{"Authorization": {"Bearer " + token}}, Body: payload, Secrets: []string{token}})
	if err != nil {
		return slackAnswer{}, err
	}
	var ans slackAnswer
	if err := json.Unmarshal(a.Body, &ans); err != nil {
		return slackAnswer{}, &SendError{Status: a.Status, Body: snippet(a.Body, token),
			Err: fmt.Errorf("slack %s: the answer is not the API's JSON", method)}
	}
	if !ans.OK {
		code := ans.Error
		if code == "" {
			code = "unknown_error"
		}
		return slackAnswer{}, &SendError{Status: a.Status, Permanent: slackPermanent[code],
			RetryAfter: parseRetryAfter(a.Header.Get("Retry-After"), time.Now()), Body: snippet(a.Body, token),
			Err: slackError{method: method, code: code}}
	}
	return ans, nil
}

// slackError is the Web API's refusal of a call: its error code.
type slackError struct{ method, code string }

func (e slackError) Error() string { return "slack " + e.method + ": " + e.code }

// slackCode returns the Web API's error code e carries, "" for another
// failure.
func (e *SendError) slackCode() string {
	var se slackError
	if errors.As(e.Err, &se) {
		return se.code
	}
	return ""
}

// slackPermanent lists the Web API's error codes that sending the same
// call again does not change: a refused token, a channel the bot cannot
// post to, a message the API rejects. Every other code (ratelimited,
// internal_error, fatal_error, service_unavailable, request_timeout and
// codes Slack adds later) is retried until the dispatcher's maximum age.
var slackPermanent = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true, "token_expired": true,
	"no_permission": true, "missing_scope": true, "not_allowed_token_type": true, "access_denied": true,
	"ekm_access_denied": true, "team_access_not_granted": true, "org_login_required": true, "two_factor_setup_required": true,
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "restricted_action": true,
	"restricted_action_read_only_channel": true, "restricted_action_thread_only_channel": true,
	"restricted_action_non_threadable_channel": true, "invalid_blocks": true, "invalid_blocks_format": true,
	"invalid_attachments": true, "msg_too_long": true, "msg_blocks_too_long": true, "no_text": true,
	"too_many_attachments": true, "invalid_arguments": true, "invalid_arg_name": true, "invalid_array_arg": true,
	"invalid_charset": true, "invalid_form_data": true, "invalid_post_type": true, "missing_post_type": true,
	"method_deprecated": true, "deprecated_endpoint": true, "cant_update_message": true, "message_not_found": true,
	"edit_window_closed": true, "as_user_not_supported": true, "unknown_method": true,
}

// slackGone lists chat.update's codes that mean the message cannot be
// edited any more: the notification is then posted as a new message.
var slackGone = map[string]bool{"message_not_found": true, "cant_update_message": true, "edit_window_closed": true}

// slackMessage is chat.postMessage's and chat.update's JSON body, and an
// incoming webhook's.
type slackMessage struct {
	Channel string       `json:"channel,omitempty"`
	TS      string       `json:"ts,omitempty"`
	Text    string       `json:"text"`
	Blocks  []slackBlock `json:"blocks"`
}

// slackBlock is a Block Kit layout block: header, section, context or
// actions.
type slackBlock struct {
	Type     string         `json:"type"`
	BlockID  string         `json:"block_id,omitempty"`
	Text     *slackText     `json:"text,omitempty"`
	Fields   []slackText    `json:"fields,omitempty"`
	Elements []slackElement `json:"elements,omitempty"`
	// Accessory is a section's element beside its text: a button.
	Accessory *slackElement `json:"accessory,omitempty"`
}

// slackText is a Block Kit text object.
type slackText struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

// slackElement is a context block's text or an actions block's button.
type slackElement struct {
	Type     string `json:"type"`
	Text     any    `json:"text,omitempty"`
	ActionID string `json:"action_id,omitempty"`
	URL      string `json:"url,omitempty"`
	Value    string `json:"value,omitempty"`
	Style    string `json:"style,omitempty"`
}

// Block Kit's limits (https://docs.slack.dev/reference/block-kit/blocks).
const (
	slackHeaderMax  = 150
	slackSectionMax = 3000
	slackFieldMax   = 2000
	slackButtonMax  = 75
	slackValueMax   = 2000
	slackURLMax     = 3000
)

// slackFallback is the message's text: shown in notifications, and where
// blocks cannot be.
func (v view) slackFallback() string {
	t := "[openrecall] " + v.Verb + ": " + v.Title
	if v.Severity != "" {
		t += " (" + string(v.Severity) + ")"
	}
	return mrkdwn(clip(t, slackSectionMax))
}

// blocks lays v out: a header with the title; a section with the headline
// and the facts; the reason, the note and the analysis; memories and cost
// as context; the review link; and, for a trigger left to a person when
// the receiver is interactive, the decision buttons (slackDecisionBlocks).
// r is the notification's result. An update or a resolve never awaits a
// person: the message edited after a decision has no decision buttons.
func (s *Slack) blocks(v view, r openrecall.Result) []slackBlock {
	md := func(t string, max int) slackText { return slackText{Type: "mrkdwn", Text: clip(t, max)} }
	out := []slackBlock{{Type: "header", Text: slackPlain(clip(v.Title, slackHeaderMax))}}
	var fields []slackText
	for _, f := range v.facts() {
		fields = append(fields, md("*"+f[0]+"*\n"+mrkdwn(f[1]), slackFieldMax))
	}
	head := md("*"+mrkdwn(v.Headline)+"*", slackSectionMax)
	out = append(out, slackBlock{Type: "section", Text: &head, Fields: fields})
	for _, p := range v.paragraphs() {
		t := md("*"+p[0]+"*\n"+mrkdwn(p[1]), slackSectionMax)
		out = append(out, slackBlock{Type: "section", Text: &t})
	}
	if len(v.DeadEnds) > 0 {
		t := md("*Dead ends (already ruled out)*\n• "+mrkdwn(strings.Join(v.DeadEnds, "\n• ")), slackSectionMax)
		out = append(out, slackBlock{Type: "section", Text: &t})
	}
	var ctx []string
	if len(v.Memories) > 0 {
		ctx = append(ctx, "Memories that voted: "+mrkdwn(strings.Join(v.memoryIDs(), ", ")))
	}
	if c := v.costText(); c != "" {
		ctx = append(ctx, "Cost: "+c)
	}
	if len(ctx) > 0 {
		t := md(strings.Join(ctx, " · "), slackSectionMax)
		out = append(out, slackBlock{Type: "context", Elements: []slackElement{{Type: "mrkdwn", Text: t.Text}}})
	}
	var link []slackElement
	if v.ReviewURL != "" && len(v.ReviewURL) <= slackURLMax {
		link = append(link, slackElement{Type: "button", Text: slackPlain("Review in openrecall"), ActionID: SlackActionReview, URL: v.ReviewURL})
	}
	if s.interactive && v.AwaitsPerson && r.AnalysisID != "" && len(r.AnalysisID) <= slackValueMax {
		return append(out, slackDecisionBlocks(v, r, link)...)
	}
	if len(link) > 0 {
		// No block_id: Slack makes one, new for each version of the
		// message, as the actions block's reference asks of a block_id.
		out = append(out, slackBlock{Type: "actions", Elements: link})
	}
	return out
}

// slackDecisionBlocks returns the end of a message left to a person, from
// an interactive receiver: for a firing of an alert group, that the
// buttons decide the whole group; for a detection with a proposed
// exception, what approving it makes; then one actions block
// (SlackBlockActions) of the review link, approve as proposed (when the
// analysis proposes a decision a person may retain), real, benign, false
// positive, add a note, and approve exception. Each decision button's
// value is the analysis id, approve exception's the proposal's id.
//
// Written to https://docs.slack.dev/reference/block-kit/blocks/actions-block
// (at most 25 elements; a block_id unique in the message) and
// https://docs.slack.dev/reference/block-kit/block-elements/button-element
// (text at most 75 characters, value at most 2,000, style primary or
// danger). Seven buttons at most.
func slackDecisionBlocks(v view, r openrecall.Result, link []slackElement) []slackBlock {
	button := func(label, action, value, style string) slackElement {
		return slackElement{Type: "button", Text: slackPlain(clip(label, slackButtonMax)), ActionID: action, Value: value, Style: style}
	}
	id := r.AnalysisID
	buttons := slices.Clone(link)
	if v.Proposed != "" {
		buttons = append(buttons, button("Approve as proposed: "+string(v.Proposed), SlackActionApprove, id, "primary"))
	}
	buttons = append(buttons,
		button("Real", SlackActionDecide+string(openrecall.DecisionReal), id, "danger"),
		button("Benign", SlackActionDecide+string(openrecall.DecisionKnownBenign), id, ""),
		button("False positive", SlackActionDecide+string(openrecall.DecisionFalsePositive), id, ""),
		button("Add a note…", SlackActionNote, id, ""))
	var out []slackBlock
	section := func(t string) {
		out = append(out, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: clip(t, slackSectionMax)}})
	}
	if g := r.Group; g != nil && g.ID != "" {
		section(slackGroupText(g))
	}
	if p := r.Proposal; p != nil && p.ApprovedAs == "" && p.ID != "" && len(p.ID) <= slackValueMax {
		section(slackProposalText(p))
		buttons = append(buttons, button("Approve exception", SlackActionApproveException, p.ID, "primary"))
	}
	return append(out, slackBlock{Type: "actions", BlockID: SlackBlockActions, Elements: buttons})
}

// slackGroupText says that a firing's buttons decide its whole alert group
// (DESIGN §6a): the group's decision is every firing's. A notification
// does not know how many firings the group holds.
func slackGroupText(g *openrecall.GroupRef) string {
	t := "*Alert group " + mrkdwn(g.ID) + "*\n"
	if g.Role == openrecall.GroupRoleHead {
		t += "This firing heads the group."
	} else {
		t += "This firing joined the group of alert " + mrkdwn(g.HeadAlertID) + "."
	}
	return t + " A decision here decides the whole group: every firing of it."
}

// slackProposalText says what approving a proposed exception makes
// (DESIGN §6b): an exception that closes the identity's alerts of this
// Alert DNA as the memories decided, up to a severity, until it expires
// (its expiry counts from the approval).
func slackProposalText(p *openrecall.Proposal) string {
	t := "*Proposed exception* " + mrkdwn(p.ID) + "\nMemory vouches unanimously for this detection. Approving makes an exception " +
		"that closes alerts of " + mrkdwn(p.Identity.String()) + " with this Alert DNA as " + string(p.Decision)
	if p.MaxSeverity != "" {
		t += ", up to severity " + string(p.MaxSeverity)
	}
	if m := openrecall.MatchString(p.Match); m != "" {
		t += ", matching " + mrkdwn(m)
	}
	if e := expiryText(p.Expiry); e != "" {
		t += "; it expires " + e + " after approval"
	}
	return t + "."
}

// expiryText says a duration as an expiry reads: "30 days", "1 day",
// "12h0m0s"; "" for none.
func expiryText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return ""
	case d == day:
		return "1 day"
	case d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}

// slackPlain is a plain_text object with emoji shortcodes rendered.
func slackPlain(t string) *slackText { return &slackText{Type: "plain_text", Text: t, Emoji: true} }

// mrkdwn escapes the three characters Slack's mrkdwn gives meaning to, so
// an alert's text cannot mention @channel, link, or mark up a message
// (https://docs.slack.dev/messaging/formatting-message-text#escaping).
func mrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
