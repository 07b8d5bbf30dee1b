package cockpit

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// Outbox is the notification outbox (DESIGN §12b) whose dead letters the
// cockpit lists and retries, and whose counts every page's header shows.
// memory.Store satisfies it.
type Outbox interface {
	usecase.IntentStore
	OutboxCounts(ctx context.Context) (openrecall.OutboxCounts, error)
}

// DeadLettersShown caps the rows of the dead letters page: the newest are
// shown, and the page says there are more.
const DeadLettersShown = 500

// outboxBadge is what the header says of the outbox when something in it
// is not delivered.
type outboxBadge struct {
	Pending, Dead int
}

// headerCounts reads the header's counts: nil when there is no outbox,
// nothing waits in it, or it cannot be read (the page does not fail for
// its header).
func (c *Cockpit) headerCounts(r *http.Request) *outboxBadge {
	if c.cfg.Outbox == nil {
		return nil
	}
	oc, err := c.cfg.Outbox.OutboxCounts(r.Context())
	if err != nil {
		c.cfg.ErrorLog(r, err)
		return nil
	}
	if oc.Pending == 0 && oc.Dead == 0 {
		return nil
	}
	return &outboxBadge{Pending: oc.Pending, Dead: oc.Dead}
}

type receiverCount struct {
	Receiver      string
	Pending, Dead int
}

// deadLetter is a row of the dead letters page: the intent, and the start
// of its last error.
type deadLetter struct {
	openrecall.OutboxIntent
	// Error is LastError cut to errorShown runes; the whole is the
	// row's tooltip.
	Error string
}

// errorShown caps the last error a dead letter's row shows.
const errorShown = 160

type outboxData struct {
	// Configured is false when the server has no outbox to show.
	Configured bool
	Dead       []deadLetter
	// More is true when more than DeadLettersShown are dead.
	More  bool
	Limit int
	// Receivers counts each receiver's intents not delivered, by name.
	Receivers []receiverCount
	Pending   int
	// OldestPending is when the oldest pending intent was written (zero
	// when none is pending).
	OldestPending time.Time
}

// outboxPage lists the dead letters, newest first, each with a Retry
// form, under each receiver's counts.
func (c *Cockpit) outboxPage(w http.ResponseWriter, r *http.Request, s session) {
	d := outboxData{Configured: c.cfg.Outbox != nil, Limit: DeadLettersShown}
	if !d.Configured {
		c.render(w, r, http.StatusOK, "outbox", s, "Dead letters", d)
		return
	}
	oc, err := c.cfg.Outbox.OutboxCounts(r.Context())
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	d.Pending, d.OldestPending = oc.Pending, oc.OldestPending
	for name, rc := range oc.ByReceiver {
		d.Receivers = append(d.Receivers, receiverCount{Receiver: name, Pending: rc.Pending, Dead: rc.Dead})
	}
	sort.Slice(d.Receivers, func(i, j int) bool { return d.Receivers[i].Receiver < d.Receivers[j].Receiver })
	dead, err := usecase.ListIntents(r.Context(), c.cfg.Outbox, openrecall.IntentFilter{State: openrecall.IntentDead, Limit: DeadLettersShown + 1})
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	if len(dead) > DeadLettersShown {
		dead, d.More = dead[:DeadLettersShown], true
	}
	for _, in := range dead {
		d.Dead = append(d.Dead, deadLetter{OutboxIntent: in, Error: clipRunes(in.LastError, errorShown)})
	}
	c.render(w, r, http.StatusOK, "outbox", s, "Dead letters", d)
}

// retryIntent puts a dead letter back to pending for the session's
// analyst, audited (usecase.App.RetryIntent, as `openrecall outbox retry`
// and POST /api/v1/outbox/{id}/retry do): 409 when it is no dead letter or
// its episode went on without it.
func (c *Cockpit) retryIntent(w http.ResponseWriter, r *http.Request, s session) {
	if c.cfg.Outbox == nil {
		c.fail(w, r, http.StatusNotFound, "this server has no outbox")
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		c.fail(w, r, http.StatusNotFound, "no such notification")
		return
	}
	_, err = c.cfg.UseCases.RetryIntent(r.Context(), c.cfg.Outbox, id, s.analyst)
	switch {
	case errors.Is(err, openrecall.ErrInvalid):
		c.fail(w, r, http.StatusConflict, err.Error())
	case err != nil:
		c.failErr(w, r, err)
	default:
		http.Redirect(w, r, Prefix+"outbox?done=retried", http.StatusSeeOther)
	}
}

// clipRunes cuts s to n runes, marking a cut with an ellipsis.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
