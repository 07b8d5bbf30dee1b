package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openrecall/openrecall"
)

// IntentStore is the outbox (DESIGN §12b) the outbox's use cases list and
// retry: `openrecall outbox`, GET /api/v1/outbox, POST
// /api/v1/outbox/{id}/retry and the cockpit's dead letters. memory.Store
// satisfies it.
type IntentStore interface {
	// Intents lists the intents f selects, newest first.
	Intents(ctx context.Context, f openrecall.IntentFilter) ([]openrecall.OutboxIntent, error)
	// RetryIntent puts dead letter id back to pending; an unknown id
	// wraps openrecall.ErrNotFound, one that is not dead or whose episode
	// went on without it wraps openrecall.ErrInvalid.
	RetryIntent(ctx context.Context, id int64) error
}

// IntentStates returns the states an intent is in, as a filter names them.
func IntentStates() []string {
	return []string{openrecall.IntentPending, openrecall.IntentSent, openrecall.IntentDead}
}

// ListIntents returns the intents f selects, newest first. A state other
// than IntentStates' or a negative limit wraps openrecall.ErrInvalid.
func ListIntents(ctx context.Context, st IntentStore, f openrecall.IntentFilter) ([]openrecall.OutboxIntent, error) {
	if f.State != "" && !slices.Contains(IntentStates(), f.State) {
		return nil, fmt.Errorf("state %q: want %s: %w", f.State, strings.Join(IntentStates(), ", "), openrecall.ErrInvalid)
	}
	if f.Limit < 0 {
		return nil, fmt.Errorf("limit %d: want 0 (no cap) or more: %w", f.Limit, openrecall.ErrInvalid)
	}
	return st.Intents(ctx, f)
}

// StepNotifyRetry is the audit step of a dead letter a person retried.
const StepNotifyRetry = "notify-retry"

// RetryIntent puts dead letter id of st back to pending for analyst, its
// tries started again (the dispatcher takes it at once), records in the
// audit trail who retried it, as every action of a person is (DESIGN
// §12a), and returns the intent as stored after. An unknown id wraps
// openrecall.ErrNotFound. A retry the outbox refuses — the intent is not a
// dead letter, or a later notification of its episode was sent or is
// being sent, so this one would arrive after it — wraps
// openrecall.ErrInvalid and changes nothing: a conflict with the intent's
// state, which the HTTP answers give as 409. When the trail fails to
// record a retry, the intent is pending all the same and the error says
// so.
func (a *App) RetryIntent(ctx context.Context, st IntentStore, id int64, analyst string) (openrecall.OutboxIntent, error) {
	if a.Audit == nil {
		return openrecall.OutboxIntent{}, errors.New("usecase: no audit trail to record a retry")
	}
	in, err := retryIntent(ctx, st, id)
	if err != nil {
		return openrecall.OutboxIntent{}, err
	}
	why := fmt.Sprintf("dead letter %d (%s %s to %s about %s) retried", id, in.Kind, in.Key, in.Receiver, in.AnalysisID)
	if analyst != "" {
		why += " by " + analyst
	}
	err = a.Audit(ctx, []openrecall.AuditEntry{{
		AnalysisID: StepNotifyRetry + "-" + strconv.FormatInt(id, 10), Batch: "outbox", Step: StepNotifyRetry, Reason: why, Outcome: "retried",
	}})
	if err != nil {
		return in, fmt.Errorf("dead letter %d is pending again but the audit trail did not record its retry: %w", id, err)
	}
	return in, nil
}

// retryIntent puts dead letter id back to pending and reads it back.
func retryIntent(ctx context.Context, st IntentStore, id int64) (openrecall.OutboxIntent, error) {
	// The outbox lists intents by state or analysis, not by id: the dead
	// letters give the analysis, whose few intents then give the intent
	// as the retry left it.
	dead, err := st.Intents(ctx, openrecall.IntentFilter{State: openrecall.IntentDead})
	if err != nil {
		return openrecall.OutboxIntent{}, err
	}
	i := slices.IndexFunc(dead, func(in openrecall.OutboxIntent) bool { return in.ID == id })
	switch err := st.RetryIntent(ctx, id); {
	case errors.Is(err, openrecall.ErrNotFound):
		return openrecall.OutboxIntent{}, fmt.Errorf("retry intent %d: the outbox has no such notification: %w", id, openrecall.ErrNotFound)
	case err != nil:
		return openrecall.OutboxIntent{}, err
	}
	if i < 0 {
		// It became a dead letter after the read: the retry made it
		// pending, which is all that is known of it without another read
		// of the whole outbox.
		return openrecall.OutboxIntent{ID: id, State: openrecall.IntentPending}, nil
	}
	after, err := st.Intents(ctx, openrecall.IntentFilter{AnalysisID: dead[i].AnalysisID})
	if err != nil {
		return openrecall.OutboxIntent{}, err
	}
	if j := slices.IndexFunc(after, func(in openrecall.OutboxIntent) bool { return in.ID == id }); j >= 0 {
		return after[j], nil
	}
	in := dead[i]
	in.State, in.DeadAt = openrecall.IntentPending, time.Time{}
	return in, nil
}
