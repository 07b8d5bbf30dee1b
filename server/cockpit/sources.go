package cockpit

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/openrecall/openrecall"
)

// Inbox is the durable inbox the review page reads an alert's delivery
// from: when it was received (DESIGN §12a). memory.Store satisfies it.
type Inbox interface {
	Served(ctx context.Context, analysisID string) (openrecall.Served, error)
}

// sources is the review page's Sources block: what the sender linked to,
// what its rule annotated, and when the alert fired, arrived and was
// decided.
type sources struct {
	Links       []sourceLink
	Annotations []kv
	Times       []moment
	// Unread is set when the delivery's record could not be read (the
	// server log says why): the received time is missing for that.
	Unread bool
}

// sourceLink is one of the sender's links: its name (what it opens) and
// its host, shown beside it so a person sees where it leads.
type sourceLink struct {
	Name, URL, Host string
}

// moment is a time as the page shows it: relative to the page's render
// ("12 min ago"), with the absolute UTC time on hover.
type moment struct {
	What string
	At   time.Time
}

// linkNames names each kind of link (openrecall.LinkKinds) for people.
var linkNames = map[string]string{
	openrecall.LinkSource:       "The sender's page",
	openrecall.LinkRunbook:      "Runbook",
	openrecall.LinkDashboard:    "Dashboard",
	openrecall.LinkPanel:        "Panel",
	openrecall.LinkSilence:      "Silence",
	openrecall.LinkAlertmanager: "Alertmanager",
}

// sourcesOf gathers the Sources block of an analysis that waits: the
// alert's links (only those openrecall.LinkOK accepts, checked again here
// whatever stored them) in the order of openrecall.LinkKinds, then any
// other kind by name; its annotations; its firing time, the time its
// delivery was received (when the inbox has it) and the time a person
// decided it.
func (c *Cockpit) sourcesOf(r *http.Request, w openrecall.Waiting, a openrecall.Alert) sources {
	var s sources
	kinds := make([]string, 0, len(a.Links))
	for k := range a.Links {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(x, y string) int {
		ix, iy := slices.Index(openrecall.LinkKinds, x), slices.Index(openrecall.LinkKinds, y)
		switch {
		case ix >= 0 && iy >= 0:
			return ix - iy
		case ix >= 0:
			return -1
		case iy >= 0:
			return 1
		}
		return cmp.Compare(x, y)
	})
	for _, k := range kinds {
		link := a.Links[k]
		if !openrecall.LinkOK(link) {
			continue
		}
		u, err := url.Parse(link)
		if err != nil {
			continue
		}
		name := linkNames[k]
		if name == "" {
			name = k
		}
		s.Links = append(s.Links, sourceLink{Name: name, URL: link, Host: u.Host})
	}
	s.Annotations = sortedPairs(a.Annotations)
	if !a.Timestamp.IsZero() {
		s.Times = append(s.Times, moment{"Fired", a.Timestamp})
	}
	if c.cfg.Inbox != nil {
		sv, err := c.cfg.Inbox.Served(r.Context(), w.AnalysisID)
		switch {
		case err == nil && !sv.ReceivedAt.IsZero():
			s.Times = append(s.Times, moment{"Received", sv.ReceivedAt})
		case err != nil && !errors.Is(err, openrecall.ErrNotFound):
			// An analysis that came through no inbox (analyze's) has no
			// delivery; one that did and cannot be read is the server
			// log's to explain, not a reason to withhold the review.
			c.cfg.ErrorLog(r, err)
			s.Unread = true
		}
	}
	if w.Decided && !w.DecidedAt.IsZero() {
		s.Times = append(s.Times, moment{"Decided", w.DecidedAt})
	}
	return s
}

// renderMoment renders t as every page shows a time ({{when t}}, or the layout's
// "moment" template): its age relative to now, the absolute UTC time on
// hover and, for machines, RFC 3339; the zero time is "-". Only digits,
// units and the zone come out of it, so it is safe as HTML.
func renderMoment(now, t time.Time) template.HTML {
	if t.IsZero() {
		return "-"
	}
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `" title="` + u.Format("2006-01-02 15:04:05Z") + `">` +
		ago(now, t) + `</time>`)
}

// ago says how long before now t was, as a person reads it on a page:
// "just now", "12 min ago", "3 h ago", "5 d ago"; a time after now (a
// sender's clock ahead of ours) reads "in 4 min".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var n int64
	var unit string
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		n, unit = int64(d/time.Minute), "min"
	case d < 48*time.Hour:
		n, unit = int64(d/time.Hour), "h"
	default:
		n, unit = int64(d/(24*time.Hour)), "d"
	}
	s := strconv.FormatInt(n, 10) + " " + unit
	if future {
		return "in " + s
	}
	return s + " ago"
}
