package cockpit

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/openrecall/openrecall"
)

// HistoryShown is the rows of a page of the History page; the next page is
// a link (a cursor), so nothing is out of reach.
const HistoryShown = 50

type historyData struct {
	Kinds  []string
	Filter openrecall.ClosureFilter
	Page   openrecall.ClosurePage
	// NextURL is the link to the next page, empty on the last.
	NextURL string
	// Paged is true past the first page.
	Paged bool
	// Done is the outcome of the action the page was redirected after:
	// "wrong" or "already".
	Done string
	// Invalid says why the filter was refused.
	Invalid string
}

// historyPage lists what was closed without a person (DESIGN §12a,
// History), newest first, as ?kind= and ?search= select, HistoryShown a
// page from ?after=, each with the memories that voted or the exception
// that matched, and the "this was wrong" form.
func (c *Cockpit) historyPage(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	d := historyData{Kinds: openrecall.ClosedKinds, Paged: q.Get("after") != ""}
	d.Filter = openrecall.ClosureFilter{Kind: q.Get("kind"), Search: strings.TrimSpace(q.Get("search")), After: q.Get("after"), Limit: HistoryShown}
	switch q.Get("done") {
	case "wrong", "already":
		d.Done = q.Get("done")
	}
	page, err := c.cfg.UseCases.History(r.Context(), d.Filter)
	switch {
	case errors.Is(err, openrecall.ErrInvalid):
		d.Invalid = err.Error()
		c.render(w, r, http.StatusBadRequest, "history", s, "History", d)
		return
	case err != nil:
		c.failErr(w, r, err)
		return
	}
	d.Page = page
	if page.Next != "" {
		v := url.Values{"after": {page.Next}}
		if d.Filter.Kind != "" {
			v.Set("kind", d.Filter.Kind)
		}
		if d.Filter.Search != "" {
			v.Set("search", d.Filter.Search)
		}
		d.NextURL = Prefix + "history?" + v.Encode()
	}
	c.render(w, r, http.StatusOK, "history", s, "History", d)
}

// wrong is a person's "this was wrong" about an analysis closed without a
// person, for the session's analyst with a required reason
// (usecase.App.Wrong, as `openrecall history wrong` and POST
// /api/v1/history/{analysis_id}/wrong do).
func (c *Cockpit) wrong(w http.ResponseWriter, r *http.Request, s session) {
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		c.fail(w, r, http.StatusBadRequest, "saying a closure was wrong needs a reason: the memories that vouched are forgotten with it")
		return
	}
	out, err := c.cfg.UseCases.Wrong(r.Context(), r.PathValue("id"), reason, s.analyst)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	done := "wrong"
	if !out.Changed {
		done = "already"
	}
	http.Redirect(w, r, Prefix+"history?done="+done, http.StatusSeeOther)
}

// closureOf reads analysis id as openrecall closed it without a person,
// for its analysis page: nil when it did not.
func (c *Cockpit) closureOf(r *http.Request, id string) (*openrecall.Closure, error) {
	cl, err := c.cfg.UseCases.ClosureOf(r.Context(), id)
	switch {
	case errors.Is(err, openrecall.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &cl, nil
}
