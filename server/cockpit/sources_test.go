package cockpit_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
)

// TestReviewShowsSources: the review page's Sources block lists the
// sender's links, each opening in a new tab without the opener or a
// referrer, its source first; a link that is no http or https URL, stored
// by whatever means, is not shown; hostile annotations are escaped; the
// firing, received and decided times read relative, the absolute UTC time
// on hover.
func TestReviewShowsSources(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now().UTC()
	fired := now.Add(-3*time.Minute - 30*time.Second).Truncate(time.Second)
	received := now.Add(-2*time.Hour - time.Minute).Truncate(time.Second)
	alert := openrecall.Alert{
		ID: "alert-sources", Format: "alertmanager", Title: "5xx above 5% on checkout-api", Severity: openrecall.SeverityHigh,
		Service: "checkout", Status: "firing", Timestamp: fired,
		Labels: map[string]string{"alertname": "HighErrorRate"},
		Annotations: map[string]string{
			"summary":     "5xx above 5% on checkout-api",
			"runbook_url": "https://runbooks.example/HighErrorRate",
			"description": `<script>alert("annotation")</script><img src=x onerror=alert(1)>`,
		},
		Links: map[string]string{
			openrecall.LinkRunbook:      "https://runbooks.example/HighErrorRate",
			openrecall.LinkSource:       "http://prometheus.local:9090/graph?g0.expr=rate(x[5m])&g0.tab=1",
			openrecall.LinkAlertmanager: "http://127.0.0.1:9093",
			openrecall.LinkDashboard:    "javascript:alert(document.cookie)",
			openrecall.LinkSilence:      "data:text/html,<script>alert(1)</script>",
			"vendor":                    "//evil.example.com/x",
		},
	}
	id := e.waitingAlert(t, 1, alert, openrecall.DecisionFalsePositive, fired)
	if _, err := e.store.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alertmanager", ReceivedAt: received, Alert: alert}}, 0,
		func(int64) string { return id }); err != nil {
		t.Fatal(err)
	}
	alice := e.session(t, "alice-secret")
	resp, body := get(t, alice, e.srv.URL, "/ui/review/"+id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("review: %d", resp.StatusCode)
	}
	sources := section(t, body, "sources")

	links := regexp.MustCompile(`<a [^>]*>[^<]*</a>`).FindAllString(sources, -1)
	want := []string{
		`<a href="http://prometheus.local:9090/graph?g0.expr=rate%28x[5m]%29&amp;g0.tab=1" rel="noopener noreferrer" target="_blank">The sender&#39;s page</a>`,
		`<a href="https://runbooks.example/HighErrorRate" rel="noopener noreferrer" target="_blank">Runbook</a>`,
		`<a href="http://127.0.0.1:9093" rel="noopener noreferrer" target="_blank">Alertmanager</a>`,
	}
	if strings.Join(links, "\n") != strings.Join(want, "\n") {
		t.Errorf("links:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"javascript:", "data:text", "evil.example.com", "ZgotmplZ", "<script>", "<img"} {
		if strings.Contains(body, bad) {
			t.Errorf("the review page carries %q", bad)
		}
	}
	if !strings.Contains(sources, `&lt;script&gt;alert(&#34;annotation&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;`) {
		t.Errorf("the hostile annotation is not shown escaped:\n%s", sources)
	}
	if !strings.Contains(sources, "<td>runbook_url</td>") {
		t.Errorf("annotations are not listed:\n%s", sources)
	}
	moment := func(what string, at time.Time, rel string) {
		t.Helper()
		tag := `<dt>` + what + `</dt><dd><time datetime="` + at.Format(time.RFC3339) + `" title="` + at.Format("2006-01-02 15:04:05Z") + `">` + rel + `</time></dd>`
		if !strings.Contains(sources, tag) {
			t.Errorf("%s: want %s in\n%s", what, tag, sources)
		}
	}
	moment("Fired", fired, "3 min ago")
	moment("Received", received, "2 h ago")
	if strings.Contains(sources, "<dt>Decided</dt>") {
		t.Errorf("an undecided analysis shows a decided time")
	}

	resp, _ = post(t, alice, e.srv.URL, "/ui/review/"+id, url.Values{"action": {"decide"}, "decision": {"real"}, "note": {"checked"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("decide: %d", resp.StatusCode)
	}
	_, body = get(t, alice, e.srv.URL, "/ui/review/"+id)
	if !regexp.MustCompile(`<dt>Decided</dt><dd><time datetime="[^"]+" title="[^"]+Z">just now</time></dd>`).MatchString(section(t, body, "sources")) {
		t.Errorf("no decided time, just now, in\n%s", section(t, body, "sources"))
	}
}

// TestReviewWithoutSources: an alert with no link, no annotation and no
// delivery in the inbox (analyze's) says so and shows no time it lacks.
func TestReviewWithoutSources(t *testing.T) {
	e := newEnv(t)
	id := e.waitingAlert(t, 1, openrecall.Alert{ID: "alert-bare", Title: "bare", Severity: openrecall.SeverityHigh, Status: "firing"}, "", time.Now())
	_, body := get(t, e.session(t, "rita-secret"), e.srv.URL, "/ui/review/"+id)
	s := section(t, body, "sources")
	if !strings.Contains(s, "The sender gave no link.") || strings.Contains(s, "<time") || strings.Contains(s, "<table") {
		t.Errorf("sources of a bare alert:\n%s", s)
	}
}

// section returns the <section id="id"> of a page.
func section(t *testing.T, body, id string) string {
	t.Helper()
	start := strings.Index(body, `<section id="`+id+`">`)
	if start < 0 {
		t.Fatalf("no section %s in\n%s", id, body)
	}
	end := strings.Index(body[start:], "</section>")
	if end < 0 {
		t.Fatalf("section %s does not end", id)
	}
	return body[start : start+end]
}
