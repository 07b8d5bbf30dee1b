package main

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPayloadsAsSlackPostsThem: a click and a modal's submission are a
// form with one field, payload, whose JSON carries what the interaction
// endpoint reads (the contract), and the signature is v0= and 64 hex
// digits over exactly that body.
func TestPayloadsAsSlackPostsThem(t *testing.T) {
	body := formBody(click("U1", "C1", "1.000100", "openrecall:actions", "openrecall:note", "serve-000001", "1.2.3", json.RawMessage(`[]`)))
	form, err := url.ParseQuery(body)
	if err != nil || len(form) != 1 {
		t.Fatalf("body %q: %v", body, err)
	}
	var p struct {
		Type      string
		TriggerID string `json:"trigger_id"`
		User      struct{ ID string }
		Channel   struct{ ID string }
		Container struct {
			MessageTS string `json:"message_ts"`
		}
		Message struct{ TS string }
		Actions []struct {
			ActionID string `json:"action_id"`
			BlockID  string `json:"block_id"`
			Value    string
		}
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "block_actions" || p.User.ID != "U1" || p.Channel.ID != "C1" || p.Container.MessageTS != "1.000100" ||
		p.Message.TS != "1.000100" || p.TriggerID != "1.2.3" || len(p.Actions) != 1 || p.Actions[0].ActionID != "openrecall:note" ||
		p.Actions[0].Value != "serve-000001" || p.Actions[0].BlockID != "openrecall:actions" {
		t.Errorf("block_actions payload %+v", p)
	}

	body = formBody(noteSubmission("U1", "V1", `{"analysis_id":"serve-000001"}`, "real", "the note", [2]string{"d1", "d2"}))
	form, _ = url.ParseQuery(body)
	var v struct {
		Type string
		View struct {
			ID              string
			CallbackID      string `json:"callback_id"`
			PrivateMetadata string `json:"private_metadata"`
			State           struct {
				Values map[string]map[string]struct {
					Value          string
					SelectedOption *struct{ Value string } `json:"selected_option"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &v); err != nil {
		t.Fatal(err)
	}
	vals := v.View.State.Values
	if v.Type != "view_submission" || v.View.CallbackID != "openrecall:note" || v.View.PrivateMetadata != `{"analysis_id":"serve-000001"}` ||
		vals["decision"]["decision"].SelectedOption == nil || vals["decision"]["decision"].SelectedOption.Value != "real" ||
		vals["note"]["note"].Value != "the note" || vals["dead_end_1"]["dead_end"].Value != "d1" || vals["dead_end_2"]["dead_end"].Value != "d2" {
		t.Errorf("view_submission payload %+v", v)
	}

	ts, sig := sign("secret", time.Unix(1531420618, 0), body)
	other, _ := sign("secret2", time.Unix(1531420618, 0), body)
	if ts != "1531420618" || !strings.HasPrefix(sig, "v0=") || len(sig) != 67 || sig == other {
		t.Errorf("signature %q at %q", sig, ts)
	}
}
