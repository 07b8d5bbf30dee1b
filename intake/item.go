package intake

import (
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// The fast path for alerts[] items. Nearly every item of a real webhook has
// the same shape: an object whose values are strings (status, startsAt,
// endsAt, generatorURL, fingerprint...) or objects of strings (labels,
// annotations). fastItem reads such an item in one pass, straight into the
// few fields the alert needs, instead of decoding it into a map of raw
// values and then decoding each of those again. It gives up (ok false) on
// anything else — another kind of value, a repeated field, title or text,
// anything that is not valid JSON — and the item then takes the general
// path (alertmanagerItem, webhookAlert, parser.value), which stays the one
// definition of what an item means. Every item the fast path takes is one
// the general path reads to the same alert or the same rejection: the
// property P46 and TestFastItemEqualsGeneral hold it to that.

// item field bits: which fields of an item were present and not null.
const (
	itemLabels = 1 << iota
	itemAnnotations
	itemStatus
	itemFingerprint
	itemStartsAt
	itemEndsAt
	itemGeneratorURL
)

// amItem is an alerts[] item of the common shape, decoded.
type amItem struct {
	labels, annotations map[string]string
	status, fingerprint string
	startsAt, endsAt    string
	generatorURL        string
	seen                int // item field bits of the fields present, null or not
	has                 int // item field bits of the fields present and not null
}

// alertmanager reports what alertmanagerItem reports of the same item:
// labels or annotations, and its own status or fingerprint (fastItem gives
// up on title and text).
func (it *amItem) alertmanager() bool {
	return it.has&(itemLabels|itemAnnotations) != 0 && it.has&(itemStatus|itemFingerprint) != 0
}

// alert is webhookAlert of the same item, with its checks in the same
// order.
func (it *amItem) alert(groupStatus, source string) (openrecall.Alert, error) {
	status := it.status
	if status == "" {
		status = groupStatus
	}
	status, err := alertStatus(status)
	if err != nil {
		return openrecall.Alert{}, err
	}
	startsAt, err := timeText("startsAt", it.startsAt)
	if err != nil {
		return openrecall.Alert{}, err
	}
	// The fast path gives up on Grafana's items: of webhookLinks's members,
	// only generatorURL is an Alertmanager item's.
	links := withAnnotationLinks(withLink(nil, openrecall.LinkSource, it.generatorURL), it.annotations)
	return newWebhookAlert(it.labels, it.annotations, status, it.fingerprint, startsAt, source, links)
}

// fastItem decodes raw, one alerts[] item, into it when it has the common
// shape; ok is false when it does not, and it is then meaningless.
func fastItem(raw []byte, it *amItem) (ok bool) {
	*it = amItem{}
	d := itemDecoder{jsonfast.Scanner[[]byte]{S: raw}}
	d.Space()
	if empty, ok := d.Open('{'); !ok || empty {
		return ok && d.End()
	}
	for {
		key, ok := d.key()
		if !ok || !d.Colon() {
			return false
		}
		bit := 0
		switch key {
		case "labels":
			bit = itemLabels
		case "annotations":
			bit = itemAnnotations
		case "status":
			bit = itemStatus
		case "fingerprint":
			bit = itemFingerprint
		case "startsAt":
			bit = itemStartsAt
		case "endsAt":
			bit = itemEndsAt
		case "generatorURL":
			bit = itemGeneratorURL
		case "title", "text", "silenceURL", "dashboardURL", "panelURL", "imageURL", "values", "valueString":
			// Grafana's own item fields: the general path tells its sender.
			return false
		}
		if bit != 0 && it.seen&bit != 0 {
			return false // a repeated field: the last one wins, left to the general path
		}
		it.seen |= bit
		switch bit {
		case 0:
			if !d.SkipScalar() {
				return false
			}
		case itemLabels, itemAnnotations:
			m, null, ok := d.stringMap()
			if !ok {
				return false
			}
			if !null {
				it.has |= bit
			}
			if bit == itemLabels {
				it.labels = m
			} else {
				it.annotations = m
			}
		default:
			s, null, ok := d.stringOrNull()
			if !ok {
				return false
			}
			if !null {
				it.has |= bit
			}
			switch bit {
			case itemStatus:
				it.status = s
			case itemFingerprint:
				it.fingerprint = s
			case itemStartsAt:
				it.startsAt = s
			case itemGeneratorURL:
				it.generatorURL = s
			default:
				it.endsAt = s
			}
		}
		if more, ok := d.Next('}'); !ok || !more {
			return ok && d.End()
		}
	}
}

// itemDecoder reads the strict subset of JSON that fastItem takes.
type itemDecoder struct {
	jsonfast.Scanner[[]byte]
}

// stringOrNull consumes a string or null.
func (d *itemDecoder) stringOrNull() (s string, null, ok bool) {
	if d.Literal("null") {
		return "", true, true
	}
	s, ok = d.str()
	return s, false, ok
}

// stringMap consumes null or an object whose values are strings or null,
// as object.strMap reads it: a null value is no entry, and of repeated
// keys the last one wins.
func (d *itemDecoder) stringMap() (m map[string]string, null, ok bool) {
	if d.Literal("null") {
		return nil, true, true
	}
	empty, ok := d.Open('{')
	if !ok {
		return nil, false, false
	}
	m = make(map[string]string, 8)
	if empty {
		return m, false, true
	}
	for {
		k, ok := d.key()
		if !ok || !d.Colon() {
			return nil, false, false
		}
		v, null, ok := d.stringOrNull()
		if !ok {
			return nil, false, false
		}
		if null {
			delete(m, k)
		} else {
			m[k] = v
		}
		more, ok := d.Next('}')
		if !ok {
			return nil, false, false
		}
		if !more {
			return m, false, true
		}
	}
}

// key consumes a string, interning the names alerts use most.
func (d *itemDecoder) key() (string, bool) {
	start, plain, ok := d.Token()
	if !ok {
		return "", false
	}
	if plain {
		if s, ok := commonName(d.S[start+1 : d.I-1]); ok {
			return s, true
		}
		return string(d.S[start+1 : d.I-1]), true
	}
	return jsonfast.Unquote(d.S[start:d.I]), true
}

// str consumes a string, interning the values alerts use most.
func (d *itemDecoder) str() (string, bool) {
	start, plain, ok := d.Token()
	if !ok {
		return "", false
	}
	if plain {
		if s, ok := commonValue(d.S[start+1 : d.I-1]); ok {
			return s, true
		}
		return string(d.S[start+1 : d.I-1]), true
	}
	return jsonfast.Unquote(d.S[start:d.I]), true
}

// commonName returns the names of fields and labels that nearly every alert
// has as constants, so that reading them allocates nothing.
func commonName(b []byte) (string, bool) {
	switch string(b) {
	case "alertname":
		return "alertname", true
	case "severity":
		return "severity", true
	case "instance":
		return "instance", true
	case "job":
		return "job", true
	case "service":
		return "service", true
	case "namespace":
		return "namespace", true
	case "env":
		return "env", true
	case "environment":
		return "environment", true
	case "cluster":
		return "cluster", true
	case "pod":
		return "pod", true
	case "summary":
		return "summary", true
	case "description":
		return "description", true
	case "runbook_url":
		return "runbook_url", true
	case "alerts":
		return "alerts", true
	case "status":
		return "status", true
	case "version":
		return "version", true
	case "receiver":
		return "receiver", true
	case "groupKey":
		return "groupKey", true
	case "groupLabels":
		return "groupLabels", true
	case "commonLabels":
		return "commonLabels", true
	case "commonAnnotations":
		return "commonAnnotations", true
	case "externalURL":
		return "externalURL", true
	case "truncatedAlerts":
		return "truncatedAlerts", true
	case "orgId":
		return "orgId", true
	case "labels":
		return "labels", true
	case "annotations":
		return "annotations", true
	case "startsAt":
		return "startsAt", true
	case "endsAt":
		return "endsAt", true
	case "generatorURL":
		return "generatorURL", true
	case "fingerprint":
		return "fingerprint", true
	}
	return "", false
}

// commonValue returns values that nearly every alert has as constants.
func commonValue(b []byte) (string, bool) {
	switch string(b) {
	case "":
		return "", true
	case openrecall.StatusFiring:
		return openrecall.StatusFiring, true
	case openrecall.StatusResolved:
		return openrecall.StatusResolved, true
	case "0001-01-01T00:00:00Z":
		return "0001-01-01T00:00:00Z", true
	case "critical":
		return "critical", true
	case "warning":
		return "warning", true
	case "info":
		return "info", true
	case "prod":
		return "prod", true
	}
	return "", false
}

// decodeString decodes raw, a JSON value, into a string exactly as
// json.Unmarshal does (null gives ""); ok is false when json.Unmarshal
// fails. The values alerts use most are not allocated.
func decodeString(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		if s, ok := commonValue(raw[1 : n-1]); ok {
			return s, true
		}
	}
	return jsonfast.DecodeString(raw)
}
