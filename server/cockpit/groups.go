package cockpit

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// GroupPageSize is how many firings a page of the group page lists; the
// next page follows a cursor, with no cap on the group's size.
const GroupPageSize = 50

type groupData struct {
	Review    usecase.GroupReview
	Decisions []openrecall.Decision
	DeadEnds  []int
	Firings   usecase.Firings
	Rows      []firingRow
	// After is the cursor the page began after ("" on the first page);
	// From and To number the firings shown (1-based).
	After    string
	From, To int
}

// firingRow is one firing of the group page with a cell per field that
// differs between the firings shown.
type firingRow struct {
	usecase.Firing
	Cells []cell
}

type cell struct {
	Value   string
	Missing bool
}

// groupPage shows an alert group as a person reviews it: its storm, a
// page of its firings with what differs between them, and the form that
// decides it once.
func (c *Cockpit) groupPage(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	gr, err := c.cfg.UseCases.ReviewGroup(r.Context(), id, c.cfg.RecallLimit)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	q := r.URL.Query()
	d := groupData{Review: gr, Decisions: openrecall.MemoryDecisions, DeadEnds: []int{1, 2, 3, 4}, After: q.Get("after")}
	if d.Firings, err = c.cfg.UseCases.GroupFirings(r.Context(), id, d.After, GroupPageSize); err != nil {
		c.failErr(w, r, err)
		return
	}
	// n is how many firings the pages before this one listed: it only
	// numbers the rows.
	if n, err := strconv.Atoi(q.Get("n")); err == nil && n >= 0 && d.After != "" {
		d.From = n
	}
	d.From++
	d.To = d.From + len(d.Firings.Firings) - 1
	for _, f := range d.Firings.Firings {
		row := firingRow{Firing: f}
		for _, fd := range d.Firings.Varying {
			v, ok := f.Value(fd)
			row.Cells = append(row.Cells, cell{Value: v, Missing: !ok || !f.Known})
		}
		d.Rows = append(d.Rows, row)
	}
	c.render(w, r, http.StatusOK, "group", s, "Group "+gr.Group.ID, d)
}

// decideGroup decides an alert group once, by the session's analyst,
// through the group decision use case (`retain --group`, POST
// /api/v1/groups/{id}/decision): one memory, every firing settled. A note
// is required; a group decided before changes nothing.
func (c *Cockpit) decideGroup(w http.ResponseWriter, r *http.Request, s session) {
	dec, ok := c.chosenDecision(w, r)
	if !ok {
		return
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	if note == "" {
		c.fail(w, r, http.StatusBadRequest, "deciding a group needs a note")
		return
	}
	_, err := c.cfg.UseCases.DecideGroup(r.Context(), r.PathValue("id"), usecase.Decision{Decision: dec, Note: note,
		DeadEnds: deadEnds(r.PostForm["dead_end"]), Analyst: s.analyst})
	switch {
	case errors.Is(err, openrecall.ErrGroupDecided):
		http.Redirect(w, r, Prefix+"queue?done=groupdone", http.StatusSeeOther)
	case err != nil:
		c.failErr(w, r, err)
	default:
		http.Redirect(w, r, Prefix+"queue?done=group", http.StatusSeeOther)
	}
}

// chosenDecision reads the form's decision: a person must choose one (the
// form preselects none); an empty or unknown one answers 400 and false.
func (c *Cockpit) chosenDecision(w http.ResponseWriter, r *http.Request) (openrecall.Decision, bool) {
	v := strings.TrimSpace(r.PostFormValue("decision"))
	if v == "" {
		c.fail(w, r, http.StatusBadRequest, "choose a decision: none was chosen, so nothing was decided")
		return "", false
	}
	dec, err := usecase.ParseDecision(v)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err.Error())
		return "", false
	}
	return dec, true
}
