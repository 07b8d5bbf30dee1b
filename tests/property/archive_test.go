package property

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/usecase"
)

// archiveProperties are the rules of `audit archive` (issue [miss-path],
// item 4).
func archiveProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P102_archiving_keeps_verdicts_and_recall",
			"Archiving the audit trail before any cut moves exactly the prefix of entries and cost points strictly older than the cut to a file that checks against its signed archive record, and changes neither the keyed `audit verify` verdict on what remains nor any recall; archiving again at a later or earlier cut does the same from where the last archive ended; and a prefix deleted after that without an archive record is reported as tampered.",
			"ArchiveCaseGen", archiveCaseGen(), checkArchive, pbt.Expensive(3)),
	}
}

// archiveCase is a trail of analyses an hour apart (Alerts[i] names which
// of three alerts analysis i is about, escalated with a cost point),
// decisions retained about some alerts, archives at cuts given in hours
// from the first analysis, then Drop more entries deleted by hand without
// an archive record (0: none).
type archiveCase struct {
	Alerts []int
	Retain []bool
	Cuts   []int
	Drop   int
}

func archiveCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(archiveCase{}), map[string]gopter.Gen{
		"Alerts": gg.SliceOf(gg.IntRange(0, 2)),
		"Retain": gg.SliceOfN(3, gg.Bool()),
		"Cuts":   gg.SliceOf(gg.IntRange(0, 9)),
		"Drop":   gg.IntRange(0, 3),
	})
}

// archiveView is what archiving must leave alone.
type archiveView struct {
	verdict usecase.Verified
	recalls map[string][]openrecall.Match
}

func checkArchive(c archiveCase) error {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "archive")
	if err != nil {
		return err
	}
	defer h.close()
	d, dir, base, clock := h.keyedDesk, h.dir, h.base, h.clock
	path := h.loc
	st, ex, app, sink := d.st, d.ex, d.app, d.sink
	// costHour[seq-1] is the hour cost point seq was appended in.
	var costHour []int
	alerts := map[string]openrecall.Alert{}
	last := map[string]string{} // the latest analysis of each alert
	var cum, cumBase openrecall.NanoUSD
	for i, ai := range c.Alerts {
		clock.set(base.Add(time.Duration(i) * time.Hour))
		al := openrecall.Alert{ID: fmt.Sprintf("disk-%d", ai), Title: fmt.Sprintf("disk full on db-%d", ai),
			Labels: map[string]string{"alertname": "DiskFull", "service": "db"}}
		r := openrecall.Result{AnalysisID: fmt.Sprintf("p102-%06d", i), Batch: "p102", Alert: al,
			Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionEscalated, Identity: ex.Identify(al), Fingerprint: ex.Extract(al),
			Steps: []openrecall.RouteStep{{Step: openrecall.StepIntake, Reason: "parsed", Outcome: openrecall.OutcomeOK},
				{Step: openrecall.StepFingerprint, Reason: "rules", Outcome: openrecall.OutcomeOK}}}
		r.Audit = audit.Entries(r, clock.now())
		cum, cumBase = cum+10, cumBase+100
		point := &openrecall.CostPoint{Index: i, Batch: "p102", AlertID: al.ID, Tier: openrecall.TierStrong,
			Cost: 10, Baseline: 100, CumulativeCost: cum, CumulativeBaseline: cumBase}
		if _, err := sink.Persist(ctx, r, point); err != nil {
			return fmt.Errorf("persist %s: %v", r.AnalysisID, err)
		}
		costHour = append(costHour, i)
		alerts[al.ID], last[al.ID] = al, r.AnalysisID
	}
	end := base.Add(time.Duration(len(c.Alerts)) * time.Hour)
	clock.set(end)
	for i := range 3 {
		id := fmt.Sprintf("disk-%d", i)
		if _, ok := alerts[id]; !ok || !c.Retain[i] {
			continue
		}
		if _, err := app.Retain(ctx, usecase.RetainRequest{Subject: usecase.Subject{AnalysisID: last[id]},
			Decision: usecase.Decision{Decision: openrecall.DecisionKnownBenign, Note: "cleared by rotation", Analyst: "alice"}}); err != nil {
			return fmt.Errorf("retain about %s: %v", id, err)
		}
	}
	// hourOf[seq-1] is the hour entry seq was appended in (a retain about
	// an analysis that waits appends an analyst-decision entry at the end).
	var hourOf []int
	if err := st.WalkAudit(ctx, func(e openrecall.AuditEntry) error {
		hourOf = append(hourOf, int(e.Time.Sub(base)/time.Hour))
		return nil
	}); err != nil {
		return fmt.Errorf("walk audit: %v", err)
	}
	view := func() (archiveView, error) {
		var v archiveView
		var err error
		if v.verdict, err = app.VerifyAudit(ctx, ""); err != nil {
			return v, fmt.Errorf("audit verify: %v", err)
		}
		v.recalls = map[string][]openrecall.Match{}
		for id, a := range alerts {
			if v.recalls[id], err = st.Recall(ctx, ex.Identify(a), ex.Extract(a), 20); err != nil {
				return v, fmt.Errorf("recall %s: %v", id, err)
			}
		}
		return v, nil
	}
	before, err := view()
	if err != nil {
		return err
	}
	if !before.verdict.Intact {
		return fmt.Errorf("setup: the trail does not verify before archiving: %+v", before.verdict.Problems)
	}
	// through counts the links of a chain appended before hour cut, at
	// least what is archived already (hours only grow along a chain).
	through := func(hours []int, cut int, was int64) int64 {
		n := int64(0)
		for n < int64(len(hours)) && hours[n] < cut {
			n++
		}
		return max(n, was)
	}
	var was openrecall.TrailArchive
	for k, cut := range c.Cuts {
		out := filepath.Join(dir, fmt.Sprintf("archive-%d.jsonl", k))
		res, err := app.ArchiveAudit(ctx, base.Add(time.Duration(cut)*time.Hour), func() (usecase.ArchiveFile, error) {
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			return f, err
		})
		if err != nil {
			return fmt.Errorf("archive %d before hour %d: %v", k, cut, err)
		}
		wantE, wantC := through(hourOf, cut, was.Through), through(costHour, cut, was.CostThrough)
		got := res.Record
		if got.IsZero() {
			got = was
		}
		if got.Through != wantE || got.CostThrough != wantC {
			return fmt.Errorf("archive %d before hour %d ends at entry %d and cost point %d, want %d and %d (the prefix strictly older than the cut)",
				k, cut, got.Through, got.CostThrough, wantE, wantC)
		}
		if !res.Record.IsZero() {
			f, err := os.Open(out)
			if err != nil {
				return fmt.Errorf("archive %d: %v", k, err)
			}
			chk, err := app.VerifyArchive(ctx, f)
			_ = f.Close()
			if err != nil || !chk.Intact {
				return fmt.Errorf("archive %d does not check against its record: %v %+v", k, err, chk.Problems)
			}
			was = res.Record
		}
		after, err := view()
		if err != nil {
			return fmt.Errorf("after archive %d: %v", k, err)
		}
		if err := sameVerdict(before.verdict, after.verdict); err != nil {
			return fmt.Errorf("archive %d before hour %d: %v", k, cut, err)
		}
		if !reflect.DeepEqual(before.recalls, after.recalls) {
			return fmt.Errorf("archive %d changed a recall: %+v, was %+v", k, after.recalls, before.recalls)
		}
	}
	if c.Drop == 0 || was.Through+int64(c.Drop) > int64(len(hourOf)) {
		return nil
	}
	if err := dropPrefix(path, was.Through+int64(c.Drop)); err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	v, err := app.VerifyAudit(ctx, "")
	if err != nil {
		return fmt.Errorf("audit verify: %v", err)
	}
	if v.Intact {
		return fmt.Errorf("entries %d-%d deleted without an archive record, yet audit verify says intact", was.Through+1, was.Through+int64(c.Drop))
	}
	return nil
}

// sameVerdict compares what `audit verify` says of a trail before and
// after archiving: intact or not, the same problems, head, key and
// boundary (the counts of what remains differ by design).
func sameVerdict(was, now usecase.Verified) error {
	a, b := was, now
	a.Entries, a.CostPoints, b.Entries, b.CostPoints = 0, 0, 0, 0
	a.Rows, b.Rows = 0, 0 // a count, like the entries: forgetting removes rows
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("the audit verdict changed: %+v, was %+v", now, was)
	}
	return nil
}

// dropPrefix deletes the audit entries up to through from the database at
// path as someone holding it would: the delete trigger dropped, no record.
func dropPrefix(path string, through int64) error {
	driver, dsn, dropTrigger := "sqlite3", "file:"+path+"?_busy_timeout=5000", `DROP TRIGGER audit_entries_no_delete`
	if memory.IsPostgres(path) {
		driver, dsn, dropTrigger = "pgx", path, `DROP TRIGGER audit_entries_no_delete ON audit_entries`
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{dropTrigger, fmt.Sprintf(`DELETE FROM audit_entries WHERE sequence <= %d`, through)} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
