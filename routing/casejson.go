package routing

import "github.com/openrecall/openrecall/internal/jsonfast"

// AppendCaseFileJSON appends the JSON encoding of c to b, byte for byte what
// encoding/json's Encoder with HTML escaping writes for it, newline
// included (property P43 checks it against the encoder): keys in
// declaration order, map keys sorted, empty fields omitted, '<', '>', '&',
// U+2028 and U+2029 escaped, invalid UTF-8 replaced. It is hand-written
// because the case file is encoded for every analysed alert and the
// reflective encoder cost about 8 µs of the ~200 an alert took.
func AppendCaseFileJSON(b []byte, c CaseFile) []byte {
	o := jsonfast.NewObject(b, true)
	o.Object("alert", func(o *jsonfast.Object) { caseAlertMembers(o, &c.Alert) })
	o.StringMapOmit("fingerprint", c.Fingerprint)
	if len(c.Memories) > 0 {
		o.Array("memories", len(c.Memories), false, func(i int, o *jsonfast.Object) {
			m := &c.Memories[i]
			o.StringsOmit("dead_ends", m.DeadEnds)
			o.Str("decision", m.Decision)
			o.Str("id", m.ID)
			o.StrOmit("note", m.Note)
			o.Float("score", m.Score) // round3 left it finite
		})
	}
	if t := c.Triage; t != nil {
		o.Object("triage", func(o *jsonfast.Object) {
			o.Float("confidence", t.Confidence)
			o.Float("consistency", t.Consistency)
			o.Int("consistent_count", int64(t.ConsistentCount))
			o.Str("decision", t.Decision)
			o.Int("strong_count", int64(t.StrongCount))
			o.StringsOmit("supporting", t.Supporting)
		})
	}
	b, _ = o.End() // every number is finite
	return append(b, '\n')
}

func caseAlertMembers(o *jsonfast.Object, a *CaseAlert) {
	o.StringMapOmit("annotations", a.Annotations)
	o.StrOmit("environment", a.Environment)
	o.StrOmit("id", a.ID)
	o.StringMapOmit("labels", a.Labels)
	o.StrOmit("service", a.Service)
	o.StrOmit("severity", a.Severity)
	o.StrOmit("source", a.Source)
	o.StrOmit("text", a.Text)
	o.StrOmit("title", a.Title)
}
