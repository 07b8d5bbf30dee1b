package runner_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/runner"
	"github.com/openrecall/openrecall/usecase"
)

// TestPruneInterval: a retention of minutes is kept to within a quarter of
// it (an hourly pass kept a 5-minute retention's rows for up to 65
// minutes), never pruning more than once a minute nor less than once an
// hour.
func TestPruneInterval(t *testing.T) {
	tests := []struct {
		retention, want time.Duration
	}{
		{2 * time.Minute, time.Minute},
		{5 * time.Minute, time.Minute + 15*time.Second},
		{time.Hour, 15 * time.Minute},
		{4 * time.Hour, time.Hour},
		{720 * time.Hour, time.Hour},
	}
	for _, tt := range tests {
		if got := runner.PruneInterval(tt.retention); got != tt.want {
			t.Errorf("PruneInterval(%s) = %s, want %s", tt.retention, got, tt.want)
		}
	}
}

// TestPruneLoop: with a retention, a pass prunes at start and every
// PruneEvery, each cut a retention before its time; with an archive
// directory each pass archives up to the same cut into a file of its own
// there, then forgets up to it, unless the trail does not verify: then
// nothing is forgotten. No pass starts after stop.
func TestPruneLoop(t *testing.T) {
	tests := []struct {
		name     string
		archived usecase.Archived
		forgets  bool
	}{
		{"archived", usecase.Archived{Record: openrecall.TrailArchive{FileSHA256: "ab12"}, Entries: 5, CostPoints: 1}, true},
		{"trail does not verify", usecase.Archived{Report: audit.Report{Problems: []audit.Problem{{Sequence: 3}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr := &fakePruner{rows: 3}
				fg := &fakeForgetter{}
				uc := &fakeUseCases{archived: tt.archived}
				obs := &tally{}
				core, logs := observer.New(zapcore.InfoLevel)
				const dir = "/var/lib/openrecall/archive"
				r, err := runner.New(runner.Config{Store: &fakeStore{}, Sink: nopSink{}, NewPipeline: newIdle, UseCases: uc,
					Retention: time.Hour, PruneEvery: 15 * time.Minute, Pruner: pr, ArchiveDir: dir, Forgetter: fg,
					Observer: obs, Logger: zap.New(core)})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				stop := make(chan struct{})
				done := make(chan error, 1)
				go func() { done <- r.Run(context.Background(), stop) }()
				synctest.Wait()
				time.Sleep(15*time.Minute + time.Millisecond)
				synctest.Wait()
				close(stop)
				if err := <-done; err != nil {
					t.Fatalf("Run: %v", err)
				}
				time.Sleep(time.Hour)
				want := []time.Time{start.Add(-time.Hour), start.Add(15*time.Minute - time.Hour)}
				if got := pr.passes(); !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Fatalf("passes cut at %v, want %v", got, want)
				}
				for i, path := range uc.paths {
					if wantPath := filepath.Join(dir, "openrecall-trail-"+want[i].UTC().Format("20060102T150405.000000000Z")+".jsonl"); path != wantPath {
						t.Errorf("archive %d to %s, want %s", i, path, wantPath)
					}
				}
				pruned, _, entries, forgotten := obs.read()
				if pruned != 6 {
					t.Errorf("pruned %d rows observed, want 6", pruned)
				}
				if logs.FilterMessage("inbox pruned").Len() != 2 {
					t.Errorf("want an inbox pruned line a pass: %v", logs.All())
				}
				if !tt.forgets {
					if len(fg.cuts) != 0 || entries != 0 || forgotten != 0 {
						t.Errorf("a trail that does not verify: forgot up to %v, observed %d entries archived and %d rows forgotten", fg.cuts, entries, forgotten)
					}
					if logs.FilterMessageSnippet("the audit trail does not verify").Len() != 2 {
						t.Errorf("no error line for the trail that does not verify: %v", logs.All())
					}
					return
				}
				if !slices.EqualFunc(fg.cuts, want, time.Time.Equal) || entries != 10 || forgotten != 2 {
					t.Errorf("forgot up to %v, observed %d entries archived and %d rows forgotten; want each pass's cut, 10 and 2", fg.cuts, entries, forgotten)
				}
			})
		})
	}
}
