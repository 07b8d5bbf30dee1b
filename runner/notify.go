package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
)

// Escalation is the JSON body the outbound webhook receives for an alert
// that needs a person.
type Escalation struct {
	AnalysisID string              `json:"analysis_id"`
	AlertID    string              `json:"alert_id"`
	Title      string              `json:"title"`
	Severity   openrecall.Severity `json:"severity,omitempty"`
	Service    string              `json:"service,omitempty"`
	Decision   openrecall.Decision `json:"decision"`
	Reason     string              `json:"reason,omitempty"`
	// ResultPath is where the full result is served.
	ResultPath string `json:"result_path"`
}

// escalated reports whether a result leaves the alert to a person: it was
// escalated, or judged a real incident.
func escalated(r openrecall.Result) bool {
	return r.Outcome == openrecall.ResultTriaged && (r.Decision == openrecall.DecisionEscalated || r.Decision == openrecall.DecisionReal)
}

func escalation(r openrecall.Result) Escalation {
	reason := r.Triage.EscalationReason
	for _, st := range r.Steps {
		if st.Step == openrecall.StepAnalysis && st.Reason != "" {
			reason = st.Reason
		}
	}
	return Escalation{AnalysisID: r.AnalysisID, AlertID: r.Alert.ID, Title: r.Alert.Title, Severity: r.Alert.Severity,
		Service: r.Alert.Service, Decision: r.Decision, Reason: reason, ResultPath: "/api/v1/results/" + r.AnalysisID}
}

// notifier posts escalations to the outbound webhook in the background, a
// few at a time, with three attempts each; a failure is logged and never
// holds up the inbox.
type notifier struct {
	url    string
	client *http.Client
	log    *zap.Logger
	sem    chan struct{}
	wg     sync.WaitGroup
}

func newNotifier(url string, log *zap.Logger) *notifier {
	return &notifier{url: url, client: &http.Client{Timeout: 10 * time.Second}, log: log.Named("webhook"), sem: make(chan struct{}, 8)}
}

func (n *notifier) send(e Escalation) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.sem <- struct{}{}
		defer func() { <-n.sem }()
		body, _ := json.Marshal(e)
		var err error
		for attempt, delay := 1, 500*time.Millisecond; attempt <= 3; attempt, delay = attempt+1, 2*delay {
			if err = n.post(body); err == nil {
				return
			}
			time.Sleep(delay)
		}
		n.log.Warn("escalation webhook failed", zap.String("analysis_id", e.AnalysisID), zap.Error(err))
	}()
}

func (n *notifier) post(body []byte) error {
	resp, err := n.client.Post(n.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_ = resp.Body.Close() // the answer's status is all the webhook says
	if resp.StatusCode >= 300 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// wait waits for posts in flight until ctx is done.
func (n *notifier) wait(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		n.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
