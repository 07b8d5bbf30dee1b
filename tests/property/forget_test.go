package property

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// forgetProperties are the rules of serve's archive directory (issue #25,
// item 4: a database that stays flat under a retention).
func forgetProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P103_forgetting_archived_rows_keeps_verdicts_and_recall",
			"With server.archive_dir, a pass prunes the inbox, archives the trail before the cut and then deletes, in bounded batches, exactly the pruned inbox rows that finished before the cut and what waited for a person since before it — nothing before any archive, nothing after the archive's cut — and changes nothing else: the keyed `audit verify` verdict on what remains, every recall, the pending deliveries, every kept row and every kept waiting item are as before.",
			"ForgetCaseGen", forgetCaseGen(), checkForget, pbt.Expensive(3)),
	}
}

// forgetCase is P101's inbox history, pruned with a retention of
// Retention hours (at least one), archived ArchiveLag hours before the
// retention's cut, then forgotten at the retention's cut in batches of
// Batch rows.
type forgetCase struct {
	Prune      pruneCase
	ArchiveLag int // the archive's cut is this many hours before the retention's
}

func forgetCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(forgetCase{}), map[string]gopter.Gen{
		"Prune":      pruneCaseGen(1),
		"ArchiveLag": gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(0)}, {Weight: 1, Gen: gg.IntRange(1, 3)}}),
	})
}

func checkForget(fc forgetCase) error {
	c := fc.Prune
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "forget")
	if err != nil {
		return err
	}
	defer h.close()
	st, app := h.st, h.app
	w, err := seedInbox(ctx, c, h)
	if err != nil {
		return err
	}
	cut := w.end.Add(-time.Duration(c.Retention) * time.Hour)
	if _, err := st.PruneInboxAll(ctx, cut, c.Batch); err != nil {
		return fmt.Errorf("prune before %s: %v", cut, err)
	}
	pruned, err := w.snap()
	if err != nil {
		return fmt.Errorf("after pruning: %v", err)
	}
	if f, err := st.ForgetArchived(ctx, cut, c.Batch); err != nil || f.Total() != 0 {
		return fmt.Errorf("forgetting before any archive deleted %+v (%v), want nothing", f, err)
	}
	archiveCut := cut.Add(-time.Duration(fc.ArchiveLag) * time.Hour)
	out := filepath.Join(h.dir, "archive.jsonl")
	res, err := app.ArchiveAudit(ctx, archiveCut, func() (usecase.ArchiveFile, error) {
		return os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	})
	if err != nil {
		return fmt.Errorf("archive before %s: %v", archiveCut, err)
	}
	if res.Record.IsZero() {
		// Nothing was older than the archive's cut: no record, so
		// nothing may be forgotten.
		if f, err := st.ForgetArchived(ctx, cut, c.Batch); err != nil || f.Total() != 0 {
			return fmt.Errorf("forgetting without an archive record deleted %+v (%v), want nothing", f, err)
		}
		return nil
	}
	forgotten, err := st.ForgetArchived(ctx, cut, c.Batch)
	if err != nil {
		return fmt.Errorf("forget before %s: %v", cut, err)
	}
	after, err := w.snap()
	if err != nil {
		return fmt.Errorf("after forgetting: %v", err)
	}
	if err := sameVerdict(pruned.verdict, after.verdict); err != nil {
		return fmt.Errorf("forgetting: %v", err)
	}
	if !reflect.DeepEqual(pruned.recalls, after.recalls) {
		return fmt.Errorf("forgetting changed a recall: %+v, was %+v", after.recalls, pruned.recalls)
	}
	if !reflect.DeepEqual(pruned.pending, after.pending) {
		return fmt.Errorf("forgetting changed the pending deliveries: %+v, were %+v", after.pending, pruned.pending)
	}
	// The effective cut is the archive's when it is older.
	gone := func(t time.Time) bool { return t.Before(archiveCut) }
	rows := 0
	for i, was := range pruned.rows {
		now := after.rows[i]
		want := was.Done && was.Pruned && gone(was.DoneAt)
		switch {
		case want && now.ID != 0:
			return fmt.Errorf("%s finished at %s, before the cut %s, and was pruned, yet it is still stored: %+v", was.AnalysisID, was.DoneAt, archiveCut, now)
		case !want && !reflect.DeepEqual(was, now):
			return fmt.Errorf("%s (done %v at %s, cut %s) was to be kept but changed: %+v, was %+v", was.AnalysisID, was.Done, was.DoneAt, archiveCut, now, was)
		case want:
			rows++
		}
	}
	if forgotten.Deliveries != rows {
		return fmt.Errorf("ForgetArchived counted %d inbox rows, %d went", forgotten.Deliveries, rows)
	}
	// Awaiting lists what is still undecided; decided items are forgotten
	// by the same rule, unseen here.
	kept := slices.DeleteFunc(slices.Clone(pruned.waiting), func(x openrecall.Waiting) bool { return gone(x.Since) })
	if !reflect.DeepEqual(kept, after.waiting) && (len(kept) > 0 || len(after.waiting) > 0) {
		return fmt.Errorf("what waits after forgetting: %+v, want %+v (what waited since the cut %s)", after.waiting, kept, archiveCut)
	}
	if forgotten.Expired != len(pruned.waiting)-len(kept) {
		return fmt.Errorf("ForgetArchived counted %d expired waiting items, %d undecided ones went", forgotten.Expired, len(pruned.waiting)-len(kept))
	}
	return nil
}
