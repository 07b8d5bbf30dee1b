// Package intake is the first stage of the pipeline: it reads alerts from a
// stream in many formats (JSON Lines, JSON arrays and documents, Alertmanager
// and Grafana webhooks, Prometheus postable alerts, PagerDuty Events v2 and
// plain text), normalizes each into an [openrecall.Alert], and reports every
// bad record with its position and a reason a person understands.
//
// A bad record never stops the stream: [Reader.Next] returns it as a
// [Record] whose Err is set and carries on with the next one. Input is
// streamed; memory use is bounded by Options.MaxRecordBytes and
// Options.MaxDocumentBytes, not by the length of the queue.
//
// The package imports only the root package and the standard library.
package intake
