package intake

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake/sender"
)

// ownKeys are the members of the product's own alert object: an object
// holding only these is read as one without asking the senders.
var ownKeys = map[string]bool{"id": true, "title": true, "text": true, "raw_alert": true, "labels": true, "annotations": true,
	"severity": true, "service": true, "environment": true, "env": true, "source": true, "timestamp": true, "status": true,
	"summary": true, "description": true, "message": true}

// ownObject reports whether every member of o is one of the product's own
// alert object.
func ownObject(o object) bool {
	for k := range o {
		if !ownKeys[k] {
			return false
		}
	}
	return true
}

// ownContent reports whether o holds a member the product's own alert
// object reads as content (a title, a text, labels).
func ownContent(o object) bool {
	for _, k := range [...]string{"title", "text", "raw_alert", "summary", "description", "message"} {
		if s, err := o.str(k); err == nil && strings.TrimSpace(s) != "" {
			return true
		}
	}
	labels, _ := o.strMap("labels")
	return len(cleanMap(labels)) > 0
}

// ownLike reports whether an object that holds the product's own content
// (ownContent) and members of other names is the product's own alert
// object all the same: it has a title or summary of its own, and each of
// those members is an object or an array (the structured context a SIEM's
// own JSON alert adds: a tags array, a rule object, a logsource) or a
// documented rule key holding a string (the check it names is its rule).
// An object without a title of its own, or with a member of another name
// holding a scalar — a check's or monitor's name, a state, an output, a
// URL, a host — is another sender's payload, which the generic reading
// reads whole (DESIGN §3): an object that merely holds a description or
// message key is not the product's own.
func ownLike(o object) bool {
	if o.lenient("title") == "" && o.lenient("summary") == "" {
		return false
	}
	for k, raw := range o {
		if ownKeys[k] || len(raw) == 0 || string(raw) == "null" {
			continue
		}
		switch raw[0] {
		case '{', '[':
			continue
		case '"':
			if slices.Contains(sender.GenericRuleKeys, k) {
				continue
			}
		}
		return false
	}
	return true
}

// senderObject reads an object that no built-in shape claims: by the
// sender adapter that recognises it (or the one forced), else as the
// product's own alert object when it holds that object's content and
// looks like one (ownLike), else by the generic reading of any JSON
// (DESIGN §3), which rejects only an object with no non-blank value at
// all.
func (p *parser) senderObject(out []Record, o object, raw []byte, pos openrecall.Position) []Record {
	v, err := sender.Parse(raw)
	if err != nil {
		return reject(out, pos, "%s", jsonReason(err))
	}
	if p.shape == "" && ownObject(o) {
		return p.own(out, v, pos)
	}
	var (
		s       sender.Sender
		events  []sender.Event
		generic bool
	)
	if forced, ok := p.forcedSender(); ok {
		s, events, err = sender.ReadAs(p.senders, forced, v)
	} else {
		s, events, err = sender.Read(p.senders, v)
	}
	switch {
	case errors.Is(err, sender.ErrNoSender) && ownContent(o) && ownLike(o):
		return p.ownWithRule(out, o, v, pos)
	case errors.Is(err, sender.ErrNoSender):
		s = sender.Sender{Name: openrecall.SenderGeneric}
		events = []sender.Event{sender.Generic(v, NormalizeSeverity)}
		generic = true
	case err != nil:
		return reject(out, pos, "%s: %v", s.Display, err)
	}
	if len(events) == 0 {
		return reject(out, pos, "%s: the payload carries no alert", s.Display)
	}
	for i, e := range events {
		epos := pos
		if len(events) > 1 {
			epos.Index, epos.HasIndex = i, true
		}
		a, err := eventAlert(s, e, string(p.container))
		if err == nil && generic {
			a.Fields = fieldsOf(v, nil)
			if !a.Security {
				a.Security = securityNamed(a.Fields)
			}
			if a.Security && a.Origin[sender.PartStatus] == sender.StatusFromTitle {
				// A detection's title is the detection's words ("Credentials
				// recovered from LSASS"): only a status field makes one a
				// notice.
				a.Status = openrecall.StatusFiring
				delete(a.Origin, sender.PartStatus)
			}
		}
		if err != nil {
			if len(events) > 1 {
				out = reject(out, epos, "%s alert %d: %v", s.Display, i, err)
			} else {
				out = reject(out, epos, "%s: %v", s.Display, err)
			}
			continue
		}
		a.Position = epos
		out = append(out, Record{Alert: a})
		p.sent(&out[len(out)-1], e.Severity)
	}
	return out
}

// own reads the product's own alert object. One without a status of its
// own whose title is in a recovery or acknowledgement form ("RESOLVED:
// disk full", "web-3 DOWN -> UP") is that notice (DESIGN §3), unless it is
// a security detection, whose title is the detection's words.
func (p *parser) own(out []Record, v sender.Value, pos openrecall.Position) []Record {
	a, sent, err := ownAlert(v, string(p.container))
	if err != nil {
		return reject(out, pos, "%v", err)
	}
	if v.Get("status").String() == "" && !a.Security {
		if st := sender.GenericTitleStatus(a.Title); st != "" {
			a.Status = st
		}
	}
	a.Position = pos
	out = append(out, Record{Alert: a})
	p.sent(&out[len(out)-1], sent)
	return out
}

// ownAlert reads the product's own alert object by its embedded mapping
// (sender/mappings/openrecall.yaml) and finishes the alert as the
// product's own: of the openrecall sender, its id (when it has none) the
// hash of its content, no origins; it returns the severity as sent too.
// An object with no title, text or label is no alert.
func ownAlert(v sender.Value, format string) (openrecall.Alert, string, error) {
	s, _ := sender.Lookup(openrecall.SenderOwn)
	_, events, err := sender.ReadAs(nil, s, v)
	if err != nil {
		return openrecall.Alert{}, "", err
	}
	if len(events) != 1 {
		return openrecall.Alert{}, "", fmt.Errorf("the object carries %d alerts, not one", len(events))
	}
	e := events[0]
	if e.Title == "" && e.Text == "" && len(cleanMap(e.Labels)) == 0 {
		return openrecall.Alert{}, "", errors.New("empty alert: no title, text or labels")
	}
	a := readAlert(e, format, openrecall.SenderOwn)
	if err := finish(&a, e.Severity, e.Environment, e.Service); err != nil {
		return openrecall.Alert{}, "", err
	}
	return a, e.Severity, nil
}

// sent keeps the severity a record's payload gave, when the parser
// explains (Options.Explain); when it gave none, Reader.Next keeps the
// label intake normalized (sentLabel).
func (p *parser) sent(rec *Record, raw string) {
	if p.explain {
		rec.SentSeverity = strings.TrimSpace(raw)
	}
}

// sentLabel is the severity label finish normalizes when the payload gave
// no severity of its own.
func sentLabel(a openrecall.Alert) string { return first(a.Labels, "severity", "priority", "level") }

// maxFields caps the strings of an alert's Fields, and maxFieldBytes each.
const (
	maxFields     = 256
	maxFieldBytes = 1024
)

// fieldsOf flattens the scalars of a JSON object by path as the generic
// reading does (rule.level, tags.0), leaving out the members skip names:
// an alert's Fields, read for security evidence only (DESIGN §4), capped.
func fieldsOf(v sender.Value, skip map[string]bool) map[string]string {
	var out map[string]string
	for _, l := range v.Scalars(maxFields + len(skip)*8) {
		top, _, _ := strings.Cut(l[0], ".")
		if skip[top] {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		if len(out) == maxFields {
			break
		}
		val := l[1]
		if len(val) > maxFieldBytes {
			val = val[:maxFieldBytes]
		}
		out[l[0]] = val
	}
	return out
}

// ruleSeverityKeys are the members of a rule object that state its
// severity, in the order they are read.
var ruleSeverityKeys = []string{"level", "severity"}

// ownWithRule reads an object that holds the product's own alert content
// and other members as the product's own alert object, taking its rule
// from the first of the documented rule keys (DESIGN §3) present as a
// string: a check the object names is its rule, exactly as sent.
func (p *parser) ownWithRule(out []Record, o object, v sender.Value, pos openrecall.Position) []Record {
	n := len(out)
	out = p.own(out, v, pos)
	if len(out) == n+1 && out[n].Err == nil {
		a := &out[n].Alert
		// The members the product's own object does not read are kept as
		// Fields: a SIEM's tags array, rule object, logsource (DESIGN §4).
		if f := fieldsOf(v, ownKeys); f != nil {
			a.Fields = f
			if !a.Security {
				a.Security = securityNamed(f)
			}
		}
		for _, k := range sender.GenericRuleKeys {
			if r := collapseSpace(sender.Rendered(v.Get(k).String())); r != "" && v.Get(k).IsString() {
				a.Rule, a.Origin = r, map[string]string{sender.PartRule: k}
				break
			}
		}
		if a.Severity == openrecall.SeverityUnknown {
			// A SIEM's own JSON alert states its severity in its rule
			// object (a Sigma rule's level: informational … critical).
			for _, k := range ruleSeverityKeys {
				if sev := NormalizeSeverity(v.Get("rule").Get(k).String()); sev != openrecall.SeverityUnknown {
					a.Severity = sev
					if a.Origin == nil {
						a.Origin = map[string]string{}
					}
					a.Origin[sender.PartSeverity] = "rule." + k
					break
				}
			}
		}
		if !ownObject(o) {
			// Nothing a person reads is dropped (DESIGN §3): what the
			// product's own members leave unread, and the members of its
			// own, follow its text as "path: value" lines.
			a.Text = cleanText(sender.JoinText(a.Text, unreadEvidence(v, a.Title, a.Text)))
			if o.lenient("status") == "" {
				// No status of its own: a status-like member at any depth
				// (a check's state), a recovery form of the title, a
				// severity that is a recovery (DESIGN §3).
				if st, from := sender.GenericStatus(v, a.Title); from != sender.StatusFromTitle || !a.Security {
					a.Status = st
				}
			}
		}
		if o.lenient("id") == "" && !ownObject(o) {
			// Members beyond the product's own tell it apart too (the
			// content hash reads only the product's): the id reads the
			// whole object.
			a.ID = sender.PayloadID(a.Sender, v, 0)
		}
	}
	return out
}

// ownRead are the members of the product's own object that its reading
// takes into a part of the alert other than its title and text.
var ownRead = map[string]bool{"id": true, "labels": true, "annotations": true, "severity": true, "service": true,
	"environment": true, "env": true, "source": true, "timestamp": true, "status": true}

// unreadEvidence renders the scalars of an object of the product's own
// content that its reading leaves out of the title and the text — its
// members of other names, and a summary, description or message another
// one took the place of — as "path: value" lines in path order, capped.
func unreadEvidence(v sender.Value, title, text string) string {
	var pairs [][2]string
	for _, l := range v.Scalars(0) {
		top, _, _ := strings.Cut(l[0], ".")
		if ownRead[top] {
			continue
		}
		if ownKeys[top] && (strings.Contains(title, cleanLine(l[1])) || strings.Contains(text, cleanText(l[1]))) {
			continue
		}
		pairs = append(pairs, [2]string{l[0], l[1]})
	}
	return sender.Evidence(pairs...)
}

// forcedSender returns the sender the format names, whose Map reads every
// object.
func (p *parser) forcedSender() (sender.Sender, bool) {
	if p.forced == nil {
		return sender.Sender{}, false
	}
	return *p.forced, true
}

// eventAlert turns a sender's event into a normalized alert.
func eventAlert(s sender.Sender, e sender.Event, container string) (openrecall.Alert, error) {
	a := openrecall.Alert{
		ID:        e.ID,
		Format:    container,
		Title:     e.Title,
		Text:      e.Text,
		Labels:    e.Labels,
		Source:    e.Host,
		Status:    e.Status,
		Timestamp: e.Timestamp,
		Sender:    s.Name,
		Rule:      collapseSpace(e.Rule),
		Security:  s.Security,
		Episode:   s.Episode && e.ID != "",
		Entities:  cleanMap(e.Entities),
		Links:     openrecall.CleanLinks(e.Links),
		Origin:    e.Origin,
	}
	// Annotations and a fingerprint as sent are the sender's own (a
	// mapping's parts.annotations and parts.fingerprint).
	a.Annotations, a.SentFingerprint = e.Annotations, cleanLine(e.Fingerprint)
	if a.Status == "" {
		a.Status = openrecall.StatusFiring
	}
	if a.ID == "" && e.PayloadID != "" {
		// The sender gave no id: the payload's hash, over everything it
		// carries (a mapping's fields leave some out).
		a.ID = e.PayloadID
	}
	if a.Title == "" && a.Text == "" && len(cleanMap(a.Labels)) == 0 {
		return openrecall.Alert{}, fmt.Errorf("empty alert: no title, text or labels")
	}
	severity := ""
	if raw := strings.TrimSpace(e.Severity); raw != "" {
		sev := NormalizeSeverity(raw)
		if s.Severity != nil {
			sev = s.Severity(raw)
		}
		if sev == openrecall.SeverityUnknown {
			a.Labels = withLabel(a.Labels, "sender_severity", raw)
		}
		severity = string(sev)
		if severity == string(openrecall.SeverityUnknown) {
			severity = "unknown-" + raw // keeps finish from falling back to labels
		}
	}
	if err := finish(&a, severity, e.Environment, e.Service); err != nil {
		return openrecall.Alert{}, err
	}
	return a, nil
}

// withLabel returns labels with key set to value (a new map when nil).
func withLabel(labels map[string]string, key, value string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	return labels
}

// collapseSpace trims s and collapses its runs of white space to one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
