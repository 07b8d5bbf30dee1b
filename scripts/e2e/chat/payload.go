package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// The Slack workspace the run plays: its team, app and the user mapped
// to the analyst alice (chat.slack.users).
const (
	teamID    = "T0E2ETEAM1"
	appID     = "A0E2EAPP01"
	slackUser = "U0E2EALICE"
)

// sign returns the headers Slack signs an interaction request with
// (https://docs.slack.dev/authentication/verifying-requests-from-slack):
// X-Slack-Request-Timestamp, and X-Slack-Signature "v0=" and the hex
// HMAC-SHA256, keyed with the signing secret, of "v0:" + timestamp + ":"
// + the raw body.
func sign(secret string, at time.Time, body string) (timestamp, signature string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":" + body))
	return timestamp, "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// formBody is an interaction request's body as Slack posts it:
// application/x-www-form-urlencoded, one field payload holding the JSON.
func formBody(payload any) string {
	b, err := json.Marshal(payload)
	if err != nil { // the run's own maps always encode
		panic(err)
	}
	return url.Values{"payload": {string(b)}}.Encode()
}

// click is what Slack posts when user clicks the button actionID (valued
// value) of the block blockID in the message ts of channel: a
// block_actions payload, shaped as
// https://docs.slack.dev/reference/interaction-payloads/block_actions-payload
// documents it, with a trigger_id good for one views.open.
func click(user, channel, ts, blockID, actionID, value, trigger string, blocks json.RawMessage) map[string]any {
	return map[string]any{
		"type":         "block_actions",
		"team":         map[string]any{"id": teamID, "domain": "openrecall-e2e"},
		"user":         map[string]any{"id": user, "username": "alice", "name": "alice", "team_id": teamID},
		"api_app_id":   appID,
		"token":        "deprecated-verification-token",
		"container":    map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"trigger_id":   trigger,
		"channel":      map[string]any{"id": channel, "name": "oncall"},
		"message":      map[string]any{"type": "message", "user": "U0FAKEBOT01", "ts": ts, "text": "openrecall", "blocks": blocks},
		"response_url": "https://hooks.slack.com/actions/" + teamID + "/1/e2e",
		"actions": []map[string]any{{
			"type": "button", "action_id": actionID, "block_id": blockID, "value": value,
			"text":      map[string]any{"type": "plain_text", "text": actionID, "emoji": true},
			"action_ts": fmt.Sprintf("%d.000100", time.Now().Unix()),
		}},
	}
}

// noteSubmission is what Slack posts when user submits the note modal
// viewID (its callback_id openrecall:note, its private_metadata as opened)
// with decision real, a note and two dead ends: a view_submission payload
// as https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload
// documents it, the inputs under view.state.values by block_id then
// action_id.
func noteSubmission(user, viewID, privateMetadata, decision, note string, deadEnds [2]string) map[string]any {
	input := func(v string) map[string]any { return map[string]any{"type": "plain_text_input", "value": v} }
	return map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": teamID, "domain": "openrecall-e2e"},
		"user":       map[string]any{"id": user, "username": "alice", "name": "alice", "team_id": teamID},
		"api_app_id": appID,
		"token":      "deprecated-verification-token",
		"trigger_id": fmt.Sprintf("%d.98765.e2esubmit", time.Now().Unix()),
		"view": map[string]any{
			"id": viewID, "team_id": teamID, "type": "modal", "callback_id": "openrecall:note",
			"private_metadata": privateMetadata, "app_id": appID, "hash": "1773454623.e2ehash",
			"state": map[string]any{"values": map[string]any{
				"decision": map[string]any{"decision": map[string]any{"type": "static_select",
					"selected_option": map[string]any{"text": map[string]any{"type": "plain_text", "text": decision}, "value": decision}}},
				"note":       map[string]any{"note": input(note)},
				"dead_end_1": map[string]any{"dead_end": input(deadEnds[0])},
				"dead_end_2": map[string]any{"dead_end": input(deadEnds[1])},
			}},
		},
	}
}
