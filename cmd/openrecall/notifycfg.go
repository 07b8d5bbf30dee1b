package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/chat/slack"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/server"
)

// legacyWebhook names the receiver server.webhook_url becomes.
const legacyWebhook = "webhook"

// notifySettings reads the notify: section (its secrets are read now),
// and turns the deprecated server.webhook_url into what it meant: one
// webhook receiver hearing of every alert left to a person (decision
// escalated or real). Both at once is refused: the one to keep is the
// section.
func notifySettings(cfg config.Config) (notify.Settings, error) {
	s, err := notify.ReadSettings(&cfg.Notify)
	if err != nil {
		return notify.Settings{}, fmt.Errorf("config: notify: %w", err)
	}
	hookURL := cfg.Server.WebhookURL
	if hookURL == "" {
		return s, nil
	}
	if len(s.Receivers) > 0 {
		return notify.Settings{}, fmt.Errorf("config: server.webhook_url and notify.receivers are both set: move the webhook into notify.receivers as a receiver of type webhook (docs/reference.md, Migrating from server.webhook_url): %w", openrecall.ErrInvalid)
	}
	secret, err := notify.ParseSecret(hookURL)
	if err != nil {
		return notify.Settings{}, fmt.Errorf("config: server.webhook_url: %w", err)
	}
	hook, err := notify.NewWebhook(notify.WebhookConfig{Name: legacyWebhook, URL: secret})
	if err != nil {
		return notify.Settings{}, fmt.Errorf("config: server.webhook_url: %w", err)
	}
	m, err := notify.ParseMatcher(`decision=~"escalated|real"`)
	if err != nil {
		return notify.Settings{}, errors.Join(errors.New("config: server.webhook_url"), err)
	}
	s.Receivers = []notify.Receiver{hook}
	s.Route = &notify.Route{Routes: []*notify.Route{{Receiver: legacyWebhook, Matchers: []notify.Matcher{m}}}}
	return s, nil
}

// chatSettings reads the chat: section (its secrets are read now): off
// when absent.
func chatSettings(cfg config.Config) (slack.Config, error) {
	c, err := slack.ReadConfig(&cfg.Chat)
	if err != nil {
		return slack.Config{}, fmt.Errorf("config: chat: %w", err)
	}
	return c, nil
}

// slackServer is server.Config.Slack of c: nil when chat.slack is off.
func slackServer(c slack.Config) *server.SlackConfig {
	if !c.Enabled() {
		return nil
	}
	return &server.SlackConfig{SigningSecret: c.SigningSecret.Reveal(), Users: c.Users,
		API: slack.NewClient(c.APIURL, c.BotToken.Reveal(), nil)}
}

// warnChatAnalysts warns, at the start of serve, of each analyst of
// chat.slack.users who cannot decide: no token of that name, or one
// without the retain scope (their clicks will be refused).
func warnChatAnalysts(log *zap.Logger, c slack.Config, tokens []server.Token) {
	for _, name := range c.Analysts() {
		i := slices.IndexFunc(tokens, func(t server.Token) bool { return t.Analyst == name && slices.Contains(t.Scopes, server.ScopeRetain) })
		if i < 0 {
			log.Warn("chat.slack.users maps to an analyst who cannot decide: name a token of server.tokens after them, with the retain scope", zap.String("analyst", name))
		}
	}
}

// reviewURL links an analysis to its cockpit page under the external URL;
// nil when there is none (notifications carry no link).
func reviewURL(external string) func(string) string {
	if external == "" {
		return nil
	}
	return func(analysisID string) string { return external + "/ui/analysis/" + url.PathEscape(analysisID) }
}

// decisionReader is the dispatcher's Reader over the store: a decision is
// the waiting row's, or, for a member of an alert group a person decided
// (memory.Decisions.DecideGroup writes updates for its members), the
// group's.
type decisionReader struct{ st *memory.Store }

func (r decisionReader) Served(ctx context.Context, analysisID string) (openrecall.Served, error) {
	return r.st.Served(ctx, analysisID)
}

func (r decisionReader) WaitingFor(ctx context.Context, analysisID string) (openrecall.Waiting, error) {
	w, err := r.st.WaitingFor(ctx, analysisID)
	if err == nil && w.Decided || !errors.Is(err, openrecall.ErrNotFound) && err != nil {
		return w, err
	}
	m, gerr := r.st.GroupOf(ctx, analysisID)
	if gerr != nil {
		return w, err
	}
	g, gerr := r.st.Group(ctx, m.GroupID)
	if gerr != nil || !g.Decided {
		return w, err
	}
	return openrecall.Waiting{AnalysisID: analysisID, AlertID: m.AlertID, Decided: true, Decision: g.Decision, DecidedBy: g.Analyst,
		DecidedAt: g.DecidedAt, MemoryID: g.MemoryID}, nil
}

// Get reads a memory: the note of the one a decision retained.
func (r decisionReader) Get(ctx context.Context, id string) (openrecall.Incident, error) {
	return r.st.Get(ctx, id)
}
