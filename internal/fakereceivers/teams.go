package fakereceivers

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
)

// A Microsoft Teams Workflows webhook ("When a Teams webhook request is
// received"), as Microsoft documents it (learn.microsoft.com, "Create
// incoming webhooks with Workflows for Microsoft Teams", "Send Adaptive
// Cards using an incoming webhook"): POST to the workflow's URL, which
// carries its own signature (sig), a JSON message {type: message,
// attachments: [{contentType: application/vnd.microsoft.card.adaptive,
// content: card}]}; 202 Accepted with no body, the card posted by the
// flow afterwards. A URL whose sig is wrong is refused (401); a body that
// is not JSON is refused (400).

// teamsWorkflow is the workflow id of the fake's URL.
const teamsWorkflow = "0123456789abcdef0123456789abcdef"

const adaptiveCardType = "application/vnd.microsoft.card.adaptive"

func (f *Fakes) teamsAPI() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /workflows/{workflow}/triggers/manual/paths/invoke", f.route(Teams, true, f.teamsInvoke))
	mux.Handle("/", f.route(Teams, false, func(*http.Request, []byte) answer {
		return teamsError(http.StatusNotFound, "NotFound", "The requested resource was not found.")
	}))
	return mux
}

// teamsError is the workflow service's error answer.
func teamsError(status int, code, message string) answer {
	return reply(status, map[string]any{"error": map[string]string{"code": code, "message": message}})
}

func (f *Fakes) teamsInvoke(r *http.Request, body []byte) answer {
	sig := r.URL.Query().Get("sig")
	if subtle.ConstantTimeCompare([]byte(sig), []byte(f.cfg.TeamsSig)) != 1 {
		return teamsError(http.StatusUnauthorized, "DirectApiAuthorizationRequired",
			"The request must be authenticated: the sig of the URL is missing or wrong.")
	}
	var msg struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string          `json:"contentType"`
			Content     json.RawMessage `json:"content"`
		} `json:"attachments"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return teamsError(http.StatusBadRequest, "InvalidRequestContent", "The request content is not valid JSON.")
	}
	at := f.now()
	workflow := r.PathValue("workflow")
	posted := 0
	for _, a := range msg.Attachments {
		if a.ContentType != adaptiveCardType {
			continue
		}
		var card map[string]any
		if json.Unmarshal(a.Content, &card) != nil || card["type"] != "AdaptiveCard" {
			continue
		}
		c := TeamsCard{At: at, Workflow: workflow, Card: a.Content, Texts: nonNil(cardTexts(card["body"])),
			Actions: cardActions(card["actions"])}
		f.st.Teams.Cards = append(f.st.Teams.Cards, c)
		posted++
	}
	if posted == 0 {
		f.st.Teams.Cards = append(f.st.Teams.Cards, TeamsCard{At: at, Workflow: workflow, Texts: []string{},
			Problem: "the message holds no Adaptive Card attachment: the flow cannot post it"})
	}
	return answer{status: http.StatusAccepted}
}

// cardTexts returns the texts of a card's elements in order: TextBlocks,
// RichTextBlocks (their runs joined), facts, and those of containers.
func cardTexts(v any) []string {
	var out []string
	switch e := v.(type) {
	case []any:
		for _, it := range e {
			out = append(out, cardTexts(it)...)
		}
	case map[string]any:
		switch e["type"] {
		case "TextBlock":
			if s, ok := e["text"].(string); ok && s != "" {
				out = append(out, s)
			}
		case "RichTextBlock":
			var b strings.Builder
			inlines, _ := e["inlines"].([]any)
			for _, in := range inlines {
				switch run := in.(type) {
				case string:
					b.WriteString(run)
				case map[string]any:
					s, _ := run["text"].(string)
					b.WriteString(s)
				}
			}
			if b.Len() > 0 {
				out = append(out, b.String())
			}
		case "FactSet":
			facts, _ := e["facts"].([]any)
			for _, fact := range facts {
				if m, ok := fact.(map[string]any); ok {
					t, _ := m["title"].(string)
					val, _ := m["value"].(string)
					out = append(out, t+": "+val)
				}
			}
		}
		for _, k := range []string{"items", "columns", "body"} {
			out = append(out, cardTexts(e[k])...)
		}
	}
	return out
}

// cardActions returns a card's Action.OpenUrl buttons.
func cardActions(v any) []TeamsAction {
	var out []TeamsAction
	list, _ := v.([]any)
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok || m["type"] != "Action.OpenUrl" {
			continue
		}
		title, _ := m["title"].(string)
		u, _ := m["url"].(string)
		out = append(out, TeamsAction{Title: title, URL: u})
	}
	return out
}
