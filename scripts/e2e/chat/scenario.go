package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openrecall/openrecall/internal/fakereceivers"
	"github.com/openrecall/openrecall/notify"
)

// What alice writes in the note modal.
const (
	note     = "payments-api 5xx: tonight's deploy dropped the DB pool size; rolled back"
	deadEnd1 = "Stripe status page: no incident (checked 02:14)"
	deadEnd2 = "ingress 502s: the load balancer is healthy"
)

// escalation is an alert memory knows nothing of, critical: left to a
// person.
var escalation = map[string]any{"id": "e2e-chat-1", "title": "payments-api returning 5xx for 22% of requests",
	"text":   "payments-api HTTP 5xx above 20% for 10m since the 02:05 deploy; checkout failing.",
	"labels": map[string]string{"alertname": "PaymentsAPIErrors", "team": "payments"}, "severity": "critical",
	"service": "payments-api", "environment": "prod", "source": "prometheus"}

// scenario runs the steps in order; each depends on the one before.
func (r *run) scenario() error {
	body, _ := json.Marshal(escalation) // plain maps and strings always encode
	alertFile := filepath.Join(r.dir, "alert.json")
	if err := os.WriteFile(alertFile, body, 0o600); err != nil {
		return err
	}
	fmt.Println("1. an escalation reaches #oncall with its buttons")
	id, err := r.postAlert(body)
	if err != nil {
		return err
	}
	var msg fakereceivers.SlackMessage
	if err := r.waitUntil("the escalation's Slack message with its buttons", func() (bool, error) {
		for _, m := range r.fakes.State().Slack.Messages {
			for _, b := range m.Buttons() {
				if b.BlockID == notify.SlackBlockActions && b.ActionID == notify.SlackActionNote && b.Value == id {
					msg = m
					return true, nil
				}
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	var actions []string
	for _, b := range msg.Buttons() {
		if b.BlockID == notify.SlackBlockActions {
			actions = append(actions, b.ActionID)
		}
	}
	r.ok("analysis %s: message %s in %s, buttons %s", id, msg.TS, msg.Channel, strings.Join(actions, ", "))

	fmt.Println("2. alice clicks Add a note… (block_actions, signed as Slack signs)")
	trigger := fmt.Sprintf("%d.98765.e2enote", time.Now().Unix())
	status, answer, err := r.interact(r.signing, time.Now(), formBody(click(slackUser, msg.Channel, msg.TS, notify.SlackBlockActions,
		notify.SlackActionNote, id, trigger, msg.Blocks)))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("step 2: POST /api/v1/slack/interactions (block_actions %s) answered %d %q, want 200",
			notify.SlackActionNote, status, clip(answer, 200))
	}
	r.ok("the click is answered 200")
	var view fakereceivers.SlackView
	if err := r.waitUntil("views.open of the note modal at the fake", func() (bool, error) {
		for _, v := range r.fakes.State().Slack.Views {
			if v.TriggerID == trigger {
				view = v
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return err
	}
	r.ok("views.open with the click's trigger: view %s, callback_id %q", view.ID, view.CallbackID)

	fmt.Println("3. alice submits the modal: real, a note, two dead ends (view_submission)")
	status, answer, err = r.interact(r.signing, time.Now(), formBody(noteSubmission(slackUser, view.ID, view.PrivateMetadata, "real", note,
		[2]string{deadEnd1, deadEnd2})))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("step 3: the view_submission answered %d %q, want 200", status, clip(answer, 200))
	}
	r.ok("the submission is answered 200 %s", clip(answer, 80))
	if err := r.waitUntil("the recall of the note and both dead ends", func() (bool, error) {
		out, err := r.cmd("recall", "-o", "json", alertFile).Output()
		s := string(out)
		return err == nil && strings.Contains(s, note) && strings.Contains(s, deadEnd1) && strings.Contains(s, deadEnd2), nil
	}); err != nil {
		return err
	}
	r.ok("openrecall recall finds alice's note and both dead ends")
	if err := r.waitUntil("a chat.update of the message without its buttons", func() (bool, error) {
		m, ok := r.fakes.State().Slack.Message(msg.Channel, msg.TS)
		if !ok || len(m.History) < 2 {
			return false, nil
		}
		for _, b := range m.Buttons() {
			if b.BlockID == notify.SlackBlockActions {
				return false, nil
			}
		}
		msg = m
		return true, nil
	}); err != nil {
		return err
	}
	r.ok("the message was updated in place (%d versions), its decision buttons gone: %q", len(msg.History), clip(msg.Text, 80))
	if out, err := r.cmd("audit", "verify").CombinedOutput(); err != nil {
		return fmt.Errorf("openrecall audit verify: %v: %s", err, clip(string(out), 400))
	}
	r.ok("openrecall audit verify passes")

	fmt.Println("4. forged and expired requests are refused, nothing stored")
	st := r.fakes.State().Slack
	views, versions := len(st.Views), len(msg.History)
	for _, tt := range []struct {
		name   string
		secret string
		at     time.Time
	}{
		{"a forged signature", "not-" + r.signing, time.Now()},
		{"an expired timestamp (10 minutes old)", r.signing, time.Now().Add(-10 * time.Minute)},
	} {
		forged := "forged " + tt.name
		status, answer, err := r.interact(tt.secret, tt.at, formBody(noteSubmission(slackUser, view.ID, view.PrivateMetadata,
			"false_positive", forged, [2]string{forged + " 1", forged + " 2"})))
		if err != nil {
			return err
		}
		if status != http.StatusUnauthorized {
			return fmt.Errorf("%s: answered %d %q, want 401", tt.name, status, clip(answer, 200))
		}
		trig := fmt.Sprintf("%d.98765.forged", tt.at.UnixNano())
		status, answer, err = r.interact(tt.secret, tt.at, formBody(click(slackUser, msg.Channel, msg.TS, notify.SlackBlockActions,
			notify.SlackActionNote, id, trig, msg.Blocks)))
		if err != nil {
			return err
		}
		if status != http.StatusUnauthorized {
			return fmt.Errorf("%s (a click): answered %d %q, want 401", tt.name, status, clip(answer, 200))
		}
		r.ok("%s: the submission and a click are refused 401", tt.name)
	}
	out, err := r.cmd("recall", "-o", "json", alertFile).Output()
	if err != nil {
		return fmt.Errorf("openrecall recall: %w", err)
	}
	st = r.fakes.State().Slack
	m, _ := st.Message(msg.Channel, msg.TS)
	if strings.Contains(string(out), "forged") || len(st.Views) != views || len(m.History) != versions {
		return fmt.Errorf("a refused request left a trace: recall shows forged %v, views %d→%d, message versions %d→%d",
			strings.Contains(string(out), "forged"), views, len(st.Views), versions, len(m.History))
	}
	r.ok("nothing stored: no forged memory, no modal opened, the message unchanged")
	if out, err := r.cmd("audit", "verify").CombinedOutput(); err != nil {
		return fmt.Errorf("openrecall audit verify: %v: %s", err, clip(string(out), 400))
	}
	r.ok("openrecall audit verify still passes")
	return nil
}

// clip returns s cut to n bytes, "…" after when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
