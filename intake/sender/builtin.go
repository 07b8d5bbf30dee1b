package sender

import "github.com/openrecall/openrecall"

// The built-in senders are read by intake's own reader (its fast path for
// webhooks and its readers of the other shapes); they are listed here for
// the registry, the forced formats and the documentation. A built-in may
// be a mapping too: Alertmanager's and Grafana's webhook are what intake's
// fast path is held equal to (P165, P171); Grafana's also reads the legacy
// notification intake hands it.

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

func prometheus() Sender {
	return Sender{Name: "prometheus", Display: "Prometheus (postable alerts)", Builtin: true, Episode: true,
		Doc: Doc{
			Point: "prometheus.yml alerting: alertmanagers: static_configs: targets: [HOST:9555] (Prometheus posts to /api/v2/alerts, which openrecall serves; or /api/v1/alerts/prometheus)", Auth: "alertmanagers: authorization: credentials: TOKEN",
			Title: "annotations.summary", Severity: "labels.severity", Service: "labels service, app, …, job",
			Rule: "labels.alertname", ID: "openrecall's hash of the labels + startsAt (the id Alertmanager's webhook gets)", Source: "the array Prometheus posts to /api/v2/alerts (captured)",
		}}
}

func pagerDuty() Sender {
	scale := Scale{"critical": openrecall.SeverityCritical, "error": openrecall.SeverityHigh, "warning": openrecall.SeverityMedium, "info": openrecall.SeverityInfo}
	return Sender{Name: "pagerduty", Display: "PagerDuty Events API v2", Builtin: true,
		Severity: scale.Map, Levels: []string{"critical", "error", "warning", "info"},
		Doc: Doc{
			Point: "any Events v2 emitter: events URL http://HOST:9555/v2/enqueue (or /api/v1/alerts/pagerduty)", Auth: "routing_key in the event (the token), or Authorization header",
			Title: "payload.summary", Severity: "payload.severity (critical, error, warning, info)", Service: "payload.component",
			Rule: "custom_details.alertname, else payload.class, else the summary template", ID: "dedup_key", Source: "PagerDuty's documented Events v2 samples",
		}}
}

func openrecallObject() Sender {
	return Sender{Name: "openrecall", Display: "openrecall alert object (any JSON)", Builtin: true,
		Doc: Doc{
			Point: "POST a JSON object, array or JSON Lines to http://HOST:9555/api/v1/alerts", Auth: "Authorization header (Bearer TOKEN) or ?token=",
			Title: "title, else summary, else the first line of text", Severity: "severity", Service: "service, else labels service, app, …",
			Rule: "labels.alertname, else the title template", ID: "id, else a hash of the content (with members of its own, of the whole object)", Source: "the product's own schema (README)",
		}}
}
