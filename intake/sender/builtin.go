package sender

// The built-in senders are read by intake's own reader (its fast path for
// webhooks and its readers of the other shapes); they are listed here for
// the registry, the forced formats and the documentation. A built-in may
// be a mapping too: Alertmanager's and Grafana's webhook are what intake's
// fast path is held equal to (P165, P171); Grafana's also reads the legacy
// notification intake hands it; Prometheus's and PagerDuty's read the
// postable alerts and events intake hands them.

// alertmanager is Prometheus Alertmanager: intake's fast path reads its
// webhooks, held equal to its embedded mapping (alertmanager.yaml) by
// property P165. Match and Map are the mapping's.
func alertmanager() Sender {
	s := mapped("alertmanager")
	s.Builtin = true
	return s
}

// grafana is Grafana alerting: intake's fast path reads its current
// webhooks with Alertmanager's, held equal to the webhook version of its
// embedded mapping (grafana.yaml) by property P171, and the mapping's
// legacy version reads the legacy alerting notification intake hands it.
// Match and Map are the mapping's.
func grafana() Sender {
	s := mapped("grafana")
	s.Builtin = true
	return s
}

// prometheus is Prometheus's postable alerts: intake recognises the shape
// and hands it to the embedded mapping (prometheus.yaml), which reads it.
// Match and Map are the mapping's.
func prometheus() Sender {
	s := mapped("prometheus")
	s.Builtin = true
	return s
}

// pagerDuty is the PagerDuty Events API v2: intake recognises an event
// and hands it to the embedded mapping (pagerduty.yaml), which reads it.
// Match, Map and the severity scale are the mapping's.
func pagerDuty() Sender {
	s := mapped("pagerduty")
	s.Builtin = true
	return s
}

// openrecallObject is the product's own alert object: intake recognises
// it (intake/senders.go ownObject, ownLike) and hands it its embedded
// mapping (openrecall.yaml), which reads it. Match and Map are the
// mapping's.
func openrecallObject() Sender {
	s := mapped("openrecall")
	s.Builtin = true
	return s
}
