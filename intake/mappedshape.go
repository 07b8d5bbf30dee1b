package intake

import (
	"sync"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// A Prometheus postable alert and a PagerDuty Events v2 event are read by
// their senders' embedded mappings (sender/mappings/prometheus.yaml and
// pagerduty.yaml): intake recognises the shape (classify) and hands the
// object to the mapping, which reads it or rejects it with its reason;
// intake then builds the alert as it builds those of its own schema (a
// postable alert's id is the one Alertmanager's webhook later gets for
// it).

// shapeSenders are the built-in senders whose mappings read a shape,
// looked up once (sender.Lookup builds the whole list of senders each
// call); immutable once built.
var shapeSenders = sync.OnceValue(func() map[Format]sender.Sender {
	out := map[Format]sender.Sender{}
	for _, f := range []Format{FormatPrometheus, FormatPagerDuty} {
		out[f], _ = sender.Lookup(string(f))
	}
	return out
})

// shapeObject reads an object of a shape a built-in sender's mapping
// reads (FormatPrometheus, FormatPagerDuty) into its record.
func (p *parser) shapeObject(out []Record, shape Format, raw []byte, pos openrecall.Position) []Record {
	v, err := sender.Parse(raw)
	if err != nil {
		return reject(out, pos, "%s", jsonReason(err))
	}
	s := shapeSenders()[shape]
	// Map, not ReadAs: neither shape is an envelope, and the payload's
	// hash, costly, is wanted only for an event without dedup_key.
	events, err := s.Map(v)
	if err != nil {
		return reject(out, pos, "%v", err)
	}
	if len(events) != 1 {
		return reject(out, pos, "%s: the payload carries %d alerts, not one", s.Display, len(events))
	}
	e := events[0]
	var a openrecall.Alert
	if shape == FormatPrometheus {
		a, err = prometheusEventAlert(e)
	} else {
		a, err = pagerDutyEventAlert(e, v)
	}
	if err != nil {
		return reject(out, pos, "%v", err)
	}
	a.Position = pos
	out = append(out, Record{Alert: a})
	p.sent(&out[len(out)-1], e.Severity)
	return out
}

// prometheusEventAlert builds the alert of a Prometheus postable alert as
// its mapping read it: as an Alertmanager webhook's item is built, its id
// openrecall's hash of the labels + startsAt, always firing.
func prometheusEventAlert(e sender.Event) (openrecall.Alert, error) {
	a := openrecall.Alert{
		ID:          episodeID(labelSetID(e.Labels, e.Annotations), e.Timestamp),
		Format:      string(FormatPrometheus),
		Title:       e.Annotations["summary"],
		Text:        e.Annotations["description"],
		Labels:      e.Labels,
		Annotations: e.Annotations,
		Source:      "prometheus",
		Status:      openrecall.StatusFiring,
		Timestamp:   e.Timestamp,
		Sender:      "prometheus",
		Episode:     true,
		Links:       e.Links,
	}
	if err := finish(&a, "", "", ""); err != nil {
		return openrecall.Alert{}, err
	}
	forwarded(&a) // falcosidekick's Alertmanager output posts this shape to /api/v2/alerts
	return a, nil
}

// pagerDutyEventAlert builds the alert of a PagerDuty Events v2 event as
// its mapping read it: its severity read as intake reads any (payload
// severities are intake's words), its id pd- + the dedup_key, else the
// hash of the whole event, v.
func pagerDutyEventAlert(e sender.Event, v sender.Value) (openrecall.Alert, error) {
	a := readAlert(e, string(FormatPagerDuty), "pagerduty")
	if a.ID == "" {
		// No dedup_key (PagerDuty would make a new one): the hash of the
		// whole event, not only of the fields read (client, links, images
		// tell two events apart too).
		a.ID = sender.PayloadID("pagerduty", v, 0)
	}
	if err := finish(&a, e.Severity, "", e.Service); err != nil {
		return openrecall.Alert{}, err
	}
	return a, nil
}

// readAlert is the alert of an event a mapping read, as it read it (not
// normalized as eventAlert's): its id, title, text, labels, annotations,
// host as source, status, time and links, of the format and sender
// given; the caller finishes it.
func readAlert(e sender.Event, format, name string) openrecall.Alert {
	return openrecall.Alert{
		ID:          e.ID,
		Format:      format,
		Title:       e.Title,
		Text:        e.Text,
		Labels:      e.Labels,
		Annotations: e.Annotations,
		Source:      e.Host,
		Status:      e.Status,
		Timestamp:   e.Timestamp,
		Sender:      name,
		Links:       e.Links,
	}
}
