package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// TeamsConfig configures a Microsoft Teams receiver: a Workflows webhook
// ("When a Teams webhook request is received", posting to a channel or a
// chat).
type TeamsConfig struct {
	// Name is the receiver's name, which routes name (required).
	Name string
	// WebhookURL is the workflow's HTTP POST URL (required). It carries its
	// own signature (sig=…): it is the credential, and never prints.
	WebhookURL Secret
	// Timeout bounds one Send (default 10s).
	Timeout time.Duration
	// Client sends the requests (default: a client of its own).
	Client *http.Client
}

// Teams posts each notification to a Teams channel as an Adaptive Card
// (version 1.4) through a Workflows webhook. Such a webhook cannot edit a
// card it posted: a resolve or an update is a new card that says the alert
// resolved or how a person decided it (and what openrecall had decided,
// from the trigger's delivery). The webhook answers 202 Accepted (200 from
// older connectors); any 2xx is a delivery. Safe for concurrent use.
//
// Written to
// https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook,
// https://support.microsoft.com/en-us/office/create-incoming-webhooks-with-workflows-for-microsoft-teams-8ae491c7-0394-4861-ba59-055e33f75498,
// https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook
// and the Adaptive Card schema, https://adaptivecards.io/explorer/.
type Teams struct {
	name    string
	url     string
	timeout time.Duration
	client  *http.Client
}

// NewTeams validates cfg and returns its receiver. Its errors name the
// configuration field at fault, never the URL.
func NewTeams(cfg TeamsConfig) (*Teams, error) {
	if cfg.Name == "" {
		return nil, errors.New("teams receiver: name is required")
	}
	if err := checkURL(cfg.WebhookURL.Reveal(), false); err != nil {
		return nil, fmt.Errorf("teams receiver %s: webhook_url %w", cfg.Name, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("teams receiver %s: timeout %s is negative", cfg.Name, cfg.Timeout)
	}
	return &Teams{name: cfg.Name, url: cfg.WebhookURL.Reveal(), timeout: orDefault(cfg.Timeout), client: cfg.Client}, nil
}

// Name returns the receiver's configured name.
func (t *Teams) Name() string { return t.name }

// Type returns "teams".
func (t *Teams) Type() string { return "teams" }

// Send posts n's card. Its delivery keeps what the episode's later cards
// repeat of the trigger's decision (keptFor).
func (t *Teams) Send(ctx context.Context, n Notification) (Delivery, error) {
	if n.Kind == KindDigest {
		return t.sendDigest(ctx, n)
	}
	if err := checkKind(n); err != nil {
		return Delivery{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	if _, err := send(ctx, t.client, request{What: "teams", URL: t.url, SecretURL: true, Body: teamsMessageOf(viewOf(n))}); err != nil {
		return Delivery{}, err
	}
	return Delivery{State: keptFor(n)}, nil
}

// teamsMessage is the message a Workflows webhook takes: one attachment
// holding an Adaptive Card.
type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string    `json:"contentType"`
	ContentURL  *string   `json:"contentUrl"`
	Content     teamsCard `json:"content"`
}

// teamsCard is an Adaptive Card.
type teamsCard struct {
	Schema  string            `json:"$schema"`
	Type    string            `json:"type"`
	Version string            `json:"version"`
	Body    []teamsElement    `json:"body"`
	Actions []teamsAction     `json:"actions,omitempty"`
	MSTeams map[string]string `json:"msteams,omitempty"`
}

// teamsElement is a card's TextBlock, RichTextBlock or FactSet.
type teamsElement struct {
	Type    string      `json:"type"`
	Text    string      `json:"text,omitempty"`
	Inlines []teamsRun  `json:"inlines,omitempty"`
	Facts   []teamsFact `json:"facts,omitempty"`
	Size    string      `json:"size,omitempty"`
	Weight  string      `json:"weight,omitempty"`
	Color   string      `json:"color,omitempty"`
	Wrap    bool        `json:"wrap,omitempty"`
	Spacing string      `json:"spacing,omitempty"`
}

// teamsRun is a RichTextBlock's TextRun: plain text, never read as
// Markdown, so an alert's text cannot add a link or mark-up.
type teamsRun struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Size   string `json:"size,omitempty"`
	Weight string `json:"weight,omitempty"`
	Color  string `json:"color,omitempty"`
	Italic bool   `json:"italic,omitempty"`
	// SelectAction opens a link when the run is selected (a digest's
	// analyses).
	SelectAction *teamsAction `json:"selectAction,omitempty"`
}

type teamsFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// teamsAction is an Action.OpenUrl.
type teamsAction struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// teamsMessageOf lays v out as a card: the headline and the title, the
// facts (severity, decision, service, environment), why, the note, the
// analysis and its dead ends, and a button to the review page. Text that
// comes from an alert or a person is in TextRuns, never Markdown.
func teamsMessageOf(v view) teamsMessage {
	run := func(text string) []teamsRun { return []teamsRun{{Type: "TextRun", Text: text}} }
	rich := func(runs ...teamsRun) teamsElement {
		return teamsElement{Type: "RichTextBlock", Inlines: runs}
	}
	color := "Default"
	switch {
	case v.Kind == KindResolve:
		color = "Good"
	case v.AwaitsPerson:
		color = "Attention"
	}
	body := []teamsElement{
		{Type: "TextBlock", Text: v.Headline, Weight: "Bolder", Color: color, Wrap: true},
		rich(teamsRun{Type: "TextRun", Text: v.Title, Size: "Large", Weight: "Bolder"}),
	}
	var facts []teamsFact
	for _, f := range v.facts() {
		facts = append(facts, teamsFact{Title: f[0], Value: f[1]})
	}
	if len(facts) > 0 {
		body = append(body, teamsElement{Type: "FactSet", Facts: facts})
	}
	for _, p := range v.paragraphs() {
		body = append(body, rich(teamsRun{Type: "TextRun", Text: p[0] + ": ", Weight: "Bolder"}, teamsRun{Type: "TextRun", Text: p[1]}))
	}
	for _, d := range v.DeadEnds {
		body = append(body, rich(run("Dead end: "+d)...))
	}
	if cost := v.costText(); cost != "" || len(v.Memories) > 0 {
		t := ""
		if len(v.Memories) > 0 {
			t = fmt.Sprintf("%d memories voted", len(v.Memories))
		}
		if cost != "" {
			if t != "" {
				t += " · "
			}
			t += "cost " + cost
		}
		body = append(body, rich(teamsRun{Type: "TextRun", Text: t, Italic: true}))
	}
	card := teamsCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4",
		Body: body, MSTeams: map[string]string{"width": "Full"}}
	if v.ReviewURL != "" {
		card.Actions = []teamsAction{{Type: "Action.OpenUrl", Title: "Review in openrecall", URL: v.ReviewURL}}
	}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{ContentType: "application/vnd.microsoft.card.adaptive", Content: card}}}
}
