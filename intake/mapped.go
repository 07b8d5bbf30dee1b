package intake

import (
	"fmt"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// MappedWebhook reads an Alertmanager webhook, body, by the alertmanager
// sender's embedded mapping (sender/mappings/alertmanager.yaml) instead of
// the fast path: the definition property P165 holds the fast path to. Each
// event the mapping reads becomes its alert as the webhook reader builds
// one (the id openrecall's hash of the labels + startsAt, the fingerprint
// kept as sent), of the alertmanager sender; an event intake refuses (no
// label, summary or description left) is left out. Alerts carry no
// position. A body the mapping does not recognise as an Alertmanager
// webhook is an error.
func MappedWebhook(body []byte) ([]openrecall.Alert, error) {
	v, err := sender.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("alertmanager mapping: %w", err)
	}
	s, _ := sender.Lookup("alertmanager")
	if s.Match == nil || !s.Match(v) {
		return nil, fmt.Errorf("alertmanager mapping: not an Alertmanager webhook: %w", openrecall.ErrInvalid)
	}
	_, events, err := sender.ReadAs(nil, s, v)
	if err != nil {
		return nil, fmt.Errorf("alertmanager mapping: %w", err)
	}
	var out []openrecall.Alert
	for _, e := range events {
		a, err := newWebhookAlert(e.Labels, e.Annotations, e.Status, e.Fingerprint, e.Timestamp, s.Name, e.Links)
		if err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
