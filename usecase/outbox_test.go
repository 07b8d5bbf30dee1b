package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// fakeOutbox is the outbox (usecase.IntentStore): intents by id, listed
// newest first; a retry obeys the outbox's rules that matter here (unknown,
// not dead, refused), and dies, when set, makes an intent dead between a
// use case's reads.
type fakeOutbox struct {
	intents []openrecall.OutboxIntent
	refuse  map[int64]bool
	dies    int64
}

func (f *fakeOutbox) Intents(_ context.Context, flt openrecall.IntentFilter) ([]openrecall.OutboxIntent, error) {
	var out []openrecall.OutboxIntent
	for i := len(f.intents) - 1; i >= 0; i-- {
		in := f.intents[i]
		if (flt.State == "" || in.State == flt.State) && (flt.AnalysisID == "" || in.AnalysisID == flt.AnalysisID) &&
			(flt.Receiver == "" || in.Receiver == flt.Receiver) {
			out = append(out, in)
		}
	}
	if flt.Limit > 0 && len(out) > flt.Limit {
		out = out[:flt.Limit]
	}
	return out, nil
}

func (f *fakeOutbox) RetryIntent(_ context.Context, id int64) error {
	i := slices.IndexFunc(f.intents, func(in openrecall.OutboxIntent) bool { return in.ID == id })
	if i >= 0 && id == f.dies {
		f.intents[i].State = openrecall.IntentDead
	}
	switch {
	case i < 0:
		return fmt.Errorf("retry intent %d: %w", id, openrecall.ErrNotFound)
	case f.intents[i].State != openrecall.IntentDead:
		return fmt.Errorf("retry intent %d: it is %s, not a dead letter: %w", id, f.intents[i].State, openrecall.ErrInvalid)
	case f.refuse[id]:
		return fmt.Errorf("retry intent %d: a later notification went out: %w", id, openrecall.ErrInvalid)
	}
	f.intents[i].State = openrecall.IntentPending
	return nil
}

func outbox() *fakeOutbox {
	return &fakeOutbox{intents: []openrecall.OutboxIntent{
		{ID: 1, AnalysisID: "a", Intent: openrecall.Intent{Receiver: "pager", Kind: openrecall.IntentTrigger, Key: "k"}, State: openrecall.IntentDead, LastError: "400"},
		{ID: 2, AnalysisID: "a", Intent: openrecall.Intent{Receiver: "chat", Kind: openrecall.IntentTrigger, Key: "k"}, State: openrecall.IntentSent},
		{ID: 3, AnalysisID: "b", Intent: openrecall.Intent{Receiver: "pager", Kind: openrecall.IntentTrigger, Key: "j"}, State: openrecall.IntentDead},
		{ID: 4, AnalysisID: "c", Intent: openrecall.Intent{Receiver: "pager", Kind: openrecall.IntentTrigger, Key: "i"}, State: openrecall.IntentPending},
	}, refuse: map[int64]bool{3: true}}
}

func TestListIntents(t *testing.T) {
	tests := []struct {
		f       openrecall.IntentFilter
		want    []int64
		invalid bool
	}{
		{openrecall.IntentFilter{}, []int64{4, 3, 2, 1}, false},
		{openrecall.IntentFilter{State: openrecall.IntentDead}, []int64{3, 1}, false},
		{openrecall.IntentFilter{Receiver: "pager", Limit: 2}, []int64{4, 3}, false},
		{openrecall.IntentFilter{State: "lost"}, nil, true},
		{openrecall.IntentFilter{Limit: -1}, nil, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.f), func(t *testing.T) {
			got, err := usecase.ListIntents(context.Background(), outbox(), tt.f)
			if tt.invalid != errors.Is(err, openrecall.ErrInvalid) || (!tt.invalid && err != nil) {
				t.Fatalf("error %v, want invalid %v", err, tt.invalid)
			}
			var ids []int64
			for _, in := range got {
				ids = append(ids, in.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("ids %v, want %v", ids, tt.want)
			}
		})
	}
}

func TestRetryIntent(t *testing.T) {
	ctx := context.Background()
	var trail []openrecall.AuditEntry
	app := &usecase.App{Audit: func(_ context.Context, es []openrecall.AuditEntry) error {
		trail = append(trail, es...)
		return nil
	}}
	f := outbox()
	in, err := app.RetryIntent(ctx, f, 1, "alice")
	if err != nil || in.ID != 1 || in.State != openrecall.IntentPending || in.Receiver != "pager" || in.LastError != "400" {
		t.Fatalf("retry of a dead letter: %+v, %v", in, err)
	}
	if len(trail) != 1 || trail[0].Step != usecase.StepNotifyRetry || trail[0].AnalysisID != "notify-retry-1" ||
		trail[0].Reason != "dead letter 1 (trigger k to pager about a) retried by alice" {
		t.Errorf("audit trail: %+v", trail)
	}
	for id, want := range map[int64]error{1: openrecall.ErrInvalid, 2: openrecall.ErrInvalid, 3: openrecall.ErrInvalid, 9: openrecall.ErrNotFound} {
		if _, err := app.RetryIntent(ctx, f, id, "alice"); !errors.Is(err, want) {
			t.Errorf("retry %d: %v, want %v", id, err, want)
		}
	}
	if len(trail) != 1 {
		t.Errorf("a refused retry is audited: %+v", trail[1:])
	}
	// Made dead between the reads: pending now, all that is known of it.
	f = outbox()
	f.dies = 4
	if in, err := app.RetryIntent(ctx, f, 4, ""); err != nil || in.ID != 4 || in.State != openrecall.IntentPending {
		t.Errorf("retry of one that died meanwhile: %+v, %v", in, err)
	}
	// The trail failing is said, the intent pending all the same.
	failing := &usecase.App{Audit: func(context.Context, []openrecall.AuditEntry) error { return errors.New("disk full") }}
	f = outbox()
	if _, err := failing.RetryIntent(ctx, f, 1, "alice"); err == nil || f.intents[0].State != openrecall.IntentPending {
		t.Errorf("retry with a failing trail: %v, state %s", err, f.intents[0].State)
	}
}
