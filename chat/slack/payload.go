package slack

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Payload types the endpoint takes.
const (
	TypeBlockActions   = "block_actions"
	TypeViewSubmission = "view_submission"
)

// Action ids of openrecall's buttons (the message side sets them; DESIGN
// §12c). For every one but ActionApproveException the button's value is
// an analysis id; that one's is a proposal id.
const (
	ActionApprove          = "openrecall:approve"
	ActionDecidePrefix     = "openrecall:decide:"
	ActionNote             = "openrecall:note"
	ActionApproveException = "openrecall:approve_exception"
	ActionWrong            = "openrecall:wrong"
)

// CallbackNote is the callback_id of the note modal.
const CallbackNote = "openrecall:note"

// Interaction is the part of an interaction payload openrecall reads
// (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload,
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload).
type Interaction struct {
	Type string `json:"type"`
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	TriggerID string `json:"trigger_id"`
	Channel   struct {
		ID string `json:"id"`
	} `json:"channel"`
	Container struct {
		Type      string `json:"type"`
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
	} `json:"container"`
	Message struct {
		TS string `json:"ts"`
	} `json:"message"`
	Actions []Action `json:"actions"`
	View    View     `json:"view"`
}

// Action is one of a block_actions payload's actions.
type Action struct {
	Type     string `json:"type"`
	ActionID string `json:"action_id"`
	BlockID  string `json:"block_id"`
	Value    string `json:"value"`
}

// View is the submitted modal of a view_submission payload.
type View struct {
	ID              string `json:"id"`
	CallbackID      string `json:"callback_id"`
	PrivateMetadata string `json:"private_metadata"`
	State           struct {
		// Values is keyed by block_id, then action_id.
		Values map[string]map[string]StateValue `json:"values"`
	} `json:"state"`
}

// StateValue is one input's state: a plain_text_input's value or a
// static_select's selected option.
type StateValue struct {
	Type           string `json:"type"`
	Value          string `json:"value"`
	SelectedOption *struct {
		Value string `json:"value"`
	} `json:"selected_option"`
}

// Text returns what the input holds: the text typed or the option's
// value, trimmed.
func (v StateValue) Text() string {
	if v.SelectedOption != nil {
		return strings.TrimSpace(v.SelectedOption.Value)
	}
	return strings.TrimSpace(v.Value)
}

// Input returns the state of input blockID/actionID ("" when absent).
func (v View) Input(blockID, actionID string) string {
	return v.State.Values[blockID][actionID].Text()
}

// MessageRef returns the channel and ts of the message the interaction
// came from (the container's, else the channel's and message's).
func (i Interaction) MessageRef() (channel, ts string) {
	channel, ts = i.Container.ChannelID, i.Container.MessageTS
	if channel == "" {
		channel = i.Channel.ID
	}
	if ts == "" {
		ts = i.Message.TS
	}
	return channel, ts
}

// ParseForm reads a verified request body: the form field payload, JSON.
// Call it only after Verify.
func ParseForm(body []byte) (Interaction, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return Interaction{}, fmt.Errorf("interaction body: %w", err)
	}
	raw := form.Get("payload")
	if raw == "" {
		return Interaction{}, fmt.Errorf("interaction body: no payload field")
	}
	var in Interaction
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return Interaction{}, fmt.Errorf("interaction payload: %w", err)
	}
	return in, nil
}

// Metadata is what the note modal carries in private_metadata: the
// analysis and the message to update once the modal is submitted (a
// view_submission carries no message).
type Metadata struct {
	AnalysisID, Channel, TS string
}

// String is the private_metadata text: "analysisID|channel|ts".
func (m Metadata) String() string { return m.AnalysisID + "|" + m.Channel + "|" + m.TS }

// ParseMetadata reads private_metadata; an analysis id alone (no "|") is
// taken with no message to update.
func ParseMetadata(s string) Metadata {
	parts := strings.SplitN(s, "|", 3)
	m := Metadata{AnalysisID: strings.TrimSpace(parts[0])}
	if len(parts) == 3 {
		m.Channel, m.TS = parts[1], parts[2]
	}
	return m
}
