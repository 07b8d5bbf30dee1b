package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultAPIURL is the Web API's base.
const DefaultAPIURL = "https://slack.com/api"

// Client calls the Web API methods the interaction endpoint uses with a
// bot token. It is safe for concurrent use.
type Client struct {
	api   string
	token string
	http  *http.Client
}

// NewClient returns a client of the Web API at api (DefaultAPIURL when
// empty) with the bot token; hc nil uses a client with a 10 s timeout.
func NewClient(api, token string, hc *http.Client) *Client {
	if api == "" {
		api = DefaultAPIURL
	}
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{api: strings.TrimRight(api, "/") + "/", token: token, http: hc}
}

// OpenView opens view for the person whose interaction gave triggerID
// (views.open; the trigger expires three seconds after the interaction).
func (c *Client) OpenView(ctx context.Context, triggerID string, view any) error {
	return c.call(ctx, "views.open", map[string]any{"trigger_id": triggerID, "view": view})
}

// Update replaces the message channel/ts with text alone: its buttons go
// (chat.update).
func (c *Client) Update(ctx context.Context, channel, ts, msg string) error {
	blocks := []block{{Type: "section", Text: &text{Type: "mrkdwn", Text: msg}}}
	return c.call(ctx, "chat.update", map[string]any{"channel": channel, "ts": ts, "text": msg, "blocks": blocks})
}

// PostEphemeral shows text to user alone in channel (chat.postEphemeral).
func (c *Client) PostEphemeral(ctx context.Context, channel, user, msg string) error {
	return c.call(ctx, "chat.postEphemeral", map[string]any{"channel": channel, "user": user, "text": msg})
}

// call POSTs body as JSON to method. The Web API answers 200 with
// {"ok": false, "error": code} for what it refuses.
func (c *Client) call(ctx context.Context, method string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.api+method, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	ab, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	var ans struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(ab, &ans) != nil {
		return fmt.Errorf("slack %s: HTTP %d", method, resp.StatusCode)
	}
	if !ans.OK {
		return fmt.Errorf("slack %s: %s", method, ans.Error)
	}
	return nil
}
