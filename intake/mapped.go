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
	return mappedWebhook("alertmanager", "an Alertmanager webhook", body, false)
}

// MappedGrafanaWebhook reads a Grafana webhook (unified alerting, an
// alerts array), body, by the webhook version of the grafana sender's
// embedded mapping (sender/mappings/grafana.yaml) instead of the fast
// path: the definition property P171 holds the fast path to. Its alerts
// are built as MappedWebhook builds Alertmanager's, of the grafana sender.
// named says the body was sent to Grafana's endpoint (--format
// alertmanager, POST /api/v1/alerts/grafana): the mapping then reads it
// whether or not it recognises it, as sender.ReadAs does; otherwise a body
// the mapping does not recognise as Grafana's webhook is an error. A body
// without an alerts array (a legacy notification) is an error either way.
func MappedGrafanaWebhook(body []byte, named bool) ([]openrecall.Alert, error) {
	return mappedWebhook("grafana", "a Grafana webhook", body, named)
}

// mappedWebhook reads body, a webhook with an alerts array, by the
// embedded mapping of the sender of a name; what names the webhook in an
// error, and named reads it whether or not the mapping recognises it.
func mappedWebhook(name, what string, body []byte, named bool) ([]openrecall.Alert, error) {
	v, err := sender.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s mapping: %w", name, err)
	}
	s, _ := sender.Lookup(name)
	if s.Match == nil || !v.Get("alerts").IsArray() || !named && !s.Match(v) {
		return nil, fmt.Errorf("%s mapping: not %s: %w", name, what, openrecall.ErrInvalid)
	}
	_, events, err := sender.ReadAs(nil, s, v)
	if err != nil {
		return nil, fmt.Errorf("%s mapping: %w", name, err)
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
