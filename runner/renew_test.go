package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/runner"
)

// TestRenewEveryThirdOfTheLease: while it runs, the runner renews its
// leases every third of the lease, and reports the leases another process
// took once each (metric and warning); after stop it renews no more.
func TestRenewEveryThirdOfTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fakeStore{}
		obs := &tally{}
		core, logs := observer.New(zapcore.WarnLevel)
		r, err := runner.New(runner.Config{Store: st, Sink: nopSink{}, NewPipeline: newIdle, UseCases: &fakeUseCases{},
			Lease: 30 * time.Second, Observer: obs, Logger: zap.New(core)})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background(), stop) }()
		time.Sleep(time.Millisecond)
		step := func(lost int64, wantRenewals, wantLost int) {
			t.Helper()
			st.setLost(lost)
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if _, renewals := st.counts(); renewals != wantRenewals {
				t.Errorf("renewals %d, want %d", renewals, wantRenewals)
			}
			if _, got, _, _ := obs.read(); got != wantLost {
				t.Errorf("leases lost reported %d, want %d", got, wantLost)
			}
		}
		step(0, 1, 0)
		step(2, 2, 2)
		step(2, 3, 2) // the same two are not reported again
		step(3, 4, 3)
		warned := logs.FilterMessageSnippet("reclaimed by another server").All()
		if len(warned) != 2 || warned[0].ContextMap()["lost"] != int64(2) || warned[1].ContextMap()["lost"] != int64(1) {
			t.Errorf("warnings %+v, want one for 2 leases lost, one for 1", warned)
		}
		close(stop)
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		time.Sleep(time.Minute)
		if _, renewals := st.counts(); renewals != 4 {
			t.Errorf("renewals %d after stop, want 4", renewals)
		}
	})
}

// TestSchemaMismatchStops: a claim that meets a database another
// openrecall migrated stops the runner from within: Failed is closed, Run
// returns the error without being stopped, and nothing more is claimed.
func TestSchemaMismatchStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fakeStore{claimErr: fmt.Errorf("claim: %w", openrecall.ErrSchemaMismatch)}
		core, logs := observer.New(zapcore.ErrorLevel)
		r, err := runner.New(runner.Config{Store: st, Sink: nopSink{}, NewPipeline: newIdle, UseCases: &fakeUseCases{},
			Logger: zap.New(core)})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background(), make(chan struct{})) }()
		synctest.Wait()
		select {
		case <-r.Failed():
		default:
			t.Fatal("Failed is not closed")
		}
		if err := <-done; !errors.Is(err, openrecall.ErrSchemaMismatch) {
			t.Fatalf("Run returned %v, want the schema mismatch", err)
		}
		time.Sleep(time.Minute)
		if claims, _ := st.counts(); claims != 1 {
			t.Errorf("%d claims, want 1: none after the mismatch", claims)
		}
		if n := logs.FilterMessage("stopping").Len(); n != 1 {
			t.Errorf("%d stopping lines, want 1", n)
		}
	})
}
