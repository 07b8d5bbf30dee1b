package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// fakeStore is an inbox that never has a delivery: it counts claims and
// renewals, and reports the leases lost it is told.
type fakeStore struct {
	mu       sync.Mutex
	claimErr error
	claims   int
	renewals int
	lost     int64
}

func (s *fakeStore) Claim(context.Context, int) ([]openrecall.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims++
	return nil, s.claimErr
}

func (s *fakeStore) RenewLeases(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renewals++
	return nil
}

func (s *fakeStore) LeasesLost() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

func (s *fakeStore) InboxDepth(context.Context) (int, error) { return 0, nil }

// counts reads the claims and renewals so far.
func (s *fakeStore) counts() (claims, renewals int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims, s.renewals
}

// setLost says how many leases were lost so far.
func (s *fakeStore) setLost(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = n
}

// idle is a pipeline that reads its source to the end and analyses
// nothing.
type idle struct{}

func (idle) AnalyzeQueue(ctx context.Context, src workflow.Source, _ workflow.QueueOptions, _ func(openrecall.Result) error) (workflow.Summary, error) {
	for {
		if _, err := src.Next(ctx); errors.Is(err, io.EOF) {
			return workflow.Summary{}, nil
		} else if err != nil {
			return workflow.Summary{}, err
		}
	}
}

func (idle) AnalysisID(seq int) string { return fmt.Sprintf("serve-%06d", seq) }
func (idle) Mode() openrecall.Mode     { return openrecall.Mode{Memory: "fake", Model: "fake"} }

func newIdle(workflow.Sink) (runner.Pipeline, error) { return idle{}, nil }

// nopSink stores nothing (idle emits nothing).
type nopSink struct{}

func (nopSink) Persist(context.Context, openrecall.Result, *openrecall.CostPoint) ([]openrecall.AuditEntry, error) {
	return nil, nil
}

// fakeUseCases records nothing and archives what it is told.
type fakeUseCases struct {
	mu       sync.Mutex
	archived usecase.Archived
	paths    []string
}

func (*fakeUseCases) RecordExpiries(context.Context) error { return nil }

func (u *fakeUseCases) ArchiveTo(_ context.Context, _ time.Time, path string, _ func(error)) (usecase.Archived, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.paths = append(u.paths, path)
	return u.archived, nil
}

// fakePruner records the cut of each pass and prunes rows rows each.
type fakePruner struct {
	mu      sync.Mutex
	rows    int
	befores []time.Time
}

func (p *fakePruner) PruneInboxAll(_ context.Context, before time.Time, _ int) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.befores = append(p.befores, before)
	return p.rows, nil
}

// passes returns the cuts of the passes so far.
func (p *fakePruner) passes() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.befores...)
}

// fakeForgetter records the cuts it was asked to forget up to.
type fakeForgetter struct {
	mu   sync.Mutex
	cuts []time.Time
}

func (f *fakeForgetter) ForgetArchived(_ context.Context, cut time.Time, _ int) (openrecall.Forgotten, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cuts = append(f.cuts, cut)
	return openrecall.Forgotten{Deliveries: 1}, nil
}

// tally counts what the runner observed.
type tally struct {
	mu                         sync.Mutex
	pruned, lost               int
	archivedEntries, forgotten int
}

func (o *tally) Analysed(openrecall.Result) {}
func (o *tally) Pruned(rows int)            { o.mu.Lock(); o.pruned += rows; o.mu.Unlock() }
func (o *tally) LeasesLost(n int)           { o.mu.Lock(); o.lost += n; o.mu.Unlock() }
func (o *tally) Archived(entries, _ int64) {
	o.mu.Lock()
	o.archivedEntries += int(entries)
	o.mu.Unlock()
}
func (o *tally) Forgotten(f openrecall.Forgotten) {
	o.mu.Lock()
	o.forgotten += f.Total()
	o.mu.Unlock()
}

// read returns the counts so far.
func (o *tally) read() (pruned, lost, archivedEntries, forgotten int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pruned, o.lost, o.archivedEntries, o.forgotten
}
