package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
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
