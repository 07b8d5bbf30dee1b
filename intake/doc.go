// Package intake is the first stage of the pipeline: it reads alerts from a
// stream in many formats, normalizes each into an [openrecall.Alert], and
// reports every bad record with its position and a reason a person
// understands.
//
// # Formats
//
// With [FormatAuto] each line is classified by its own first non-space
// byte, whatever came before it, so one queue may mix formats: '{' starts
// JSON (an object on one line, or a pretty-printed document; rejected as
// JSON if broken); '[' starts a JSON array if the line parses (or goes on
// like JSON), else it is text ("[FIRING:2] disk full"); '"' is a JSON
// string if it parses, else text; '#' starts a comment, skipped; anything
// else is a plain-text alert, one per line, when it looks like text (valid
// UTF-8, no control characters) and a rejected record otherwise. Input
// whose start is binary data (a NUL byte, or mostly bytes that are not
// text) or a YAML, XML or CSV document is rejected whole, as one record:
// nothing of it is triaged. Within JSON, each object is classified by its
// shape: an Alertmanager or Grafana webhook (an alerts array: one record
// per item), a PagerDuty Events v2 event (event_action and payload; read
// by its mapping pagerduty.yaml), a Prometheus postable alert (labels and
// startsAt, endsAt or generatorURL, no title or text; read by its mapping
// prometheus.yaml), Grafana's legacy alerting notification (ruleName or
// ruleId, state; read as Grafana's, by its mapping grafana.yaml), a sender
// adapter's payload, the product's own alert
// object (every member one of its keys, or a title of its own beside
// objects, arrays and rule keys: see ownLike), or else the generic reading
// of any JSON (sender.Generic: the check's name as title, severity and
// status from keys at any depth, a recovery a notice, nothing readable
// dropped). A bare JSON string is a free-text alert.
// intake recognises these shapes itself (classify); a mapping reads the
// PagerDuty event or the postable alert, or rejects it with its reason
// (reject:), and intake builds the alert as it builds those of its own
// schema (mappedshape.go). Alertmanager's and Grafana's webhooks are
// read by intake's own webhook reader, held equal to Alertmanager's
// mapping (P165).
// Options.Format forces the container (jsonl, json, text) or the shape
// (alertmanager, prometheus, pagerduty: other shapes are rejected;
// alertmanager, Grafana's endpoint too, also reads Grafana's legacy
// notification).
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
// Alertmanager, Grafana and Prometheus "am-" + openrecall's own hash of the
// label set + "-" + startsAt in unix seconds (one id per firing episode,
// shared by its resolved notice; a Prometheus postable alert gets the id
// Alertmanager's webhook gets; the fingerprint as sent is kept as
// Alert.SentFingerprint, never taken as the id, since whoever may post an
// alert can send another's); for PagerDuty "pd-" + dedup_key; for a
// sender, its own id when every part of it is present; else "h-" + 16 hex
// digits of SHA-256 — over everything the payload carries when a sender
// adapter or the generic reading read it (sender.PayloadID), over the
// normalized content for text and the product's own object.
//
// # Robustness
//
// A bad record never stops the stream: [Reader.Next] returns it as a
// [Record] whose Err is set and carries on with the next one. A top-level
// array and a webhook's alerts array are streamed element by element, so
// their size is unbounded and one broken element loses only itself; a
// webhook's own fields that come before its alerts array (status, version,
// receiver, orgId...) decide how its items are read. An Alertmanager
// webhook writes its externalURL (the link to the Alertmanager, one of each
// alert's Links) after its alerts: their records wait for it while they
// take at most Options.MaxRecordBytes of input, and past that go without
// it. A broken object is
// cut short after at most Options.MaxRecordBytes and resynchronized at a
// later line of it that starts with '{' or '[', else at the next line that
// does not continue a JSON document, so a broken first line of a JSON
// Lines queue costs one record. A record longer than Options.MaxRecordBytes
// is rejected without being buffered, and memory use is bounded by that
// limit, not by the length of the queue or of a document.
//
// # Speed
//
// An alerts[] item of the shape nearly every sender writes (strings, null,
// and labels and annotations objects of strings) is read in one pass
// straight into its alert; any other item takes the general path, which
// decodes it into a map of raw values and reads each field from there. The
// two give the same records: [ParseBytesGeneral] reads with the general
// path only and is the reference of property P46.
//
// The package imports only the root package and the standard library.
package intake
