package cockpit

import (
	"net/http"
	"strings"

	"github.com/openrecall/openrecall/server/httperr"
	"github.com/openrecall/openrecall/usecase"
)

type bulkData struct {
	// Settle is set for settling what resolved while it waited as
	// "resolved by itself"; else the action approves the proposals.
	Settle bool
	// Action is where the confirmation posts.
	Action string
	// Report is set once the action ran: Items carry their outcomes.
	// Before, the page asks to confirm Items.
	Report bool
	Items  []bulkRow
	Note   string
	// Waiting counts the items a confirmation would decide; Decided,
	// Already, NotFound and Failed count the outcomes of a report.
	Waiting, Decided, Already, NotFound, Failed int
}

// bulkRow is one analysis of a bulk approval with why, for a person.
type bulkRow struct {
	usecase.BulkItem
	Why string
}

// bulkApprove approves the proposed decision of every selected analysis,
// in two steps that work without JavaScript: the first POST decides
// nothing and answers a page listing how many and which (title, identity,
// proposed decision, the group a firing decides) with a Confirm button; the
// second (confirm=1, the same ids) approves them one by one and reports
// each: decided, decided already, not found, or failed and why.
func (c *Cockpit) bulkApprove(w http.ResponseWriter, r *http.Request, s session) {
	c.bulk(w, r, s, false)
}

// bulkSettle settles every selected analysis whose alert resolved while it
// waited as "resolved by itself" (usecase.SettleResolved), in the same two
// steps as bulkApprove: confirm, then a report of each.
func (c *Cockpit) bulkSettle(w http.ResponseWriter, r *http.Request, s session) {
	c.bulk(w, r, s, true)
}

func (c *Cockpit) bulk(w http.ResponseWriter, r *http.Request, s session, settle bool) {
	ids := r.PostForm["id"]
	if len(ids) == 0 {
		http.Redirect(w, r, Prefix+"queue?done=none", http.StatusSeeOther)
		return
	}
	d := bulkData{Settle: settle, Action: Prefix + "queue/approve", Note: strings.TrimSpace(r.PostFormValue("note"))}
	plan, run := c.cfg.UseCases.PlanApproval, c.cfg.UseCases.ApproveAll
	if settle {
		d.Action, plan, run = Prefix+"queue/settle", c.cfg.UseCases.PlanSettle, c.cfg.UseCases.SettleResolved
	}
	var items []usecase.BulkItem
	if r.PostFormValue("confirm") == "1" {
		d.Report = true
		items = run(r.Context(), ids, usecase.Decision{Analyst: s.analyst, Note: d.Note})
	} else {
		var err error
		if items, err = plan(r.Context(), ids); err != nil {
			c.failErr(w, r, err)
			return
		}
	}
	for _, it := range items {
		row := bulkRow{BulkItem: it}
		switch it.Outcome {
		case usecase.BulkDecided:
			d.Decided++
		case usecase.BulkAlready:
			d.Already++
		case usecase.BulkNotFound:
			d.NotFound++
		case usecase.BulkFailed:
			d.Failed++
			row.Why = c.why(r, it.Err)
		default:
			d.Waiting++
		}
		d.Items = append(d.Items, row)
	}
	title := "Confirm the approval"
	switch {
	case d.Report && settle:
		title = "Settling report"
	case d.Report:
		title = "Approval report"
	case settle:
		title = "Confirm the settling"
	}
	c.render(w, r, http.StatusOK, "bulk", s, title, d)
}

// why says why an action failed, as failErr would: the error's text for a
// client's error, "internal error" for a server's (logged, not shown).
func (c *Cockpit) why(r *http.Request, err error) string {
	if httperr.Shown(httperr.Status(err)) {
		return err.Error()
	}
	c.cfg.ErrorLog(r, err)
	return "internal error; see the server log"
}
