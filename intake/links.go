package intake

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// Links (DESIGN §12a): the sender's own page for an alert, its runbook,
// its dashboard, its silence form, kept by kind (openrecall.LinkKinds) for
// the person who reviews it. Only what openrecall.LinkOK accepts is kept
// (an absolute http or https URL of at most 2 KiB), whoever read the
// payload; anything else — javascript:, data:, a relative URL — is
// dropped here, never shown. Links are no part of the alert's id, its
// identity or its Alert DNA: two deliveries that differ only in a link are
// one alert.

// annotationLinks are the annotations in which a rule names links, by
// kind, in the order they are read: a Prometheus or Grafana rule's runbook
// and dashboard.
var annotationLinks = [...]struct{ kind, key string }{
	{openrecall.LinkRunbook, "runbook_url"}, {openrecall.LinkRunbook, "runbook"},
	{openrecall.LinkDashboard, "dashboard_url"}, {openrecall.LinkDashboard, "dashboardUrl"},
	{openrecall.LinkDashboard, "grafana_url"},
}

// itemLinks are the members of an Alertmanager or Grafana alerts[] item (a
// Prometheus postable alert's too) that are links, by kind, in the order
// they are read: the rule's page (Prometheus's graph of its expression,
// Grafana's rule), Grafana's dashboard, panel and silence form.
var itemLinks = [...]struct{ kind, key string }{
	{openrecall.LinkSource, "generatorURL"}, {openrecall.LinkDashboard, "dashboardURL"},
	{openrecall.LinkPanel, "panelURL"}, {openrecall.LinkSilence, "silenceURL"},
}

// withLink returns links with kind set to url, trimmed, when it is a link
// (openrecall.LinkOK) and kind has none yet; a new map when links is nil.
func withLink(links map[string]string, kind, url string) map[string]string {
	url = strings.TrimSpace(url)
	if _, taken := links[kind]; taken || !openrecall.LinkOK(url) {
		return links
	}
	if links == nil {
		links = map[string]string{}
	}
	links[kind] = url
	return links
}

// webhookLinks returns the links of an Alertmanager, Grafana or Prometheus
// alert, o: its own members (itemLinks), then those its annotations name.
// nil when it has none.
func webhookLinks(o object, annotations map[string]string) map[string]string {
	var links map[string]string
	for _, l := range itemLinks {
		links = withLink(links, l.kind, o.lenient(l.key))
	}
	return withAnnotationLinks(links, annotations)
}

// withAnnotationLinks adds to links those the annotations name
// (annotationLinks).
func withAnnotationLinks(links, annotations map[string]string) map[string]string {
	for _, l := range annotationLinks {
		links = withLink(links, l.kind, annotations[l.key])
	}
	return links
}

// withAlertmanagerLink gives the alerts an Alertmanager webhook carried
// (Sender alertmanager: not a Grafana item, not an alert of another shape
// in a batch) the link of the Alertmanager that sent them, its
// externalURL, when it is a link.
func withAlertmanagerLink(recs []Record, externalURL string) {
	if !openrecall.LinkOK(strings.TrimSpace(externalURL)) {
		return
	}
	for i := range recs {
		if a := &recs[i].Alert; recs[i].Err == nil && a.Sender == "alertmanager" && a.Format == string(FormatAlertmanager) {
			a.Links = withLink(a.Links, openrecall.LinkAlertmanager, externalURL)
		}
	}
}
