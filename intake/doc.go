// Package intake is the first stage of the pipeline: it reads alerts from a
// stream in many formats, normalizes each into an [openrecall.Alert], and
// reports every bad record with its position and a reason a person
// understands.
//
// # Formats
//
// With [FormatAuto] the container is chosen per stream by its first
// non-space byte: '[' starts a JSON array (streamed element by element); '{'
// starts JSON Lines when the first line is a whole value, else a sequence of
// (pretty-printed) JSON documents; '"' starts JSON Lines; anything else is
// plain text, one alert per non-empty line. Within JSON, each object is
// classified by its shape, so one queue may mix them: an Alertmanager or
// Grafana webhook (an alerts array: one record per item), a PagerDuty
// Events v2 event (event_action and payload), a Prometheus postable alert
// (labels and startsAt, endsAt or generatorURL, no title or text), or the
// product's own alert object. A bare JSON string is a free-text alert.
// Options.Format forces the container (jsonl, json, text) or the shape
// (alertmanager, prometheus, pagerduty: other shapes are rejected).
//
// # Positions
//
// A record from a line has Position.Line (1-based); an element of a
// top-level array has Position.Index (0-based) with HasIndex; an alerts[]
// item of a webhook has the Line its webhook starts on and its Index.
//
// # Identity
//
// Alert.ID is stable across re-sends: a generic object's own id; for
// Alertmanager "am-" + fingerprint + "-" + startsAt in unix seconds (one id
// per firing episode, shared by its resolved notice; a Prometheus postable
// alert gets the id Alertmanager will give it); for PagerDuty "pd-" +
// dedup_key; else "h-" + 16 hex digits of SHA-256 over the normalized
// content.
//
// # Robustness
//
// A bad record never stops the stream: [Reader.Next] returns it as a
// [Record] whose Err is set and carries on with the next one; a broken
// multi-line document is resynchronized at the next line that starts with
// '{' or '['. Input is streamed: a record longer than
// Options.MaxRecordBytes is rejected without being buffered, and memory use
// is bounded by the limits, not by the length of the queue.
//
// The package imports only the root package and the standard library.
package intake
