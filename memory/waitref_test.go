package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/internal/jsonfast"
)

// TestAuditNulledIsTheResultWithoutEntries: the inbox document with its
// "audit" member's value replaced by null is byte for byte the encoding of
// the same result without entries, for results with entries, with none and
// with strings that look like members; what is not an object is refused.
func TestAuditNulledIsTheResultWithoutEntries(t *testing.T) {
	r := sinkResult("a-1", 3)
	r.Alert.Title = `<p>"audit":[1] & \u2028 {x]` + "\u2028"
	r.Alert.Labels = map[string]string{"audit": `[{"]`, "z": "é"}
	r.Analysis = &openrecall.Analysis{Summary: `}"audit":`, Hypotheses: []string{"[", "{"}}
	for name, r := range map[string]openrecall.Result{"entries": r, "none": sinkResult("a-2", 0), "empty": func() openrecall.Result {
		r := sinkResult("a-3", 1)
		r.Audit = []openrecall.AuditEntry{}
		return r
	}()} {
		with, err := jsonfast.AppendResult(nil, r, true)
		if err != nil {
			t.Fatal(err)
		}
		r.Audit = nil
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := auditNulled(nil, with)
		if !ok || string(got) != string(want) {
			t.Errorf("%s: derived (%v)\n%s\nwant\n%s", name, ok, got, want)
		}
	}
	for _, doc := range []string{``, `[]`, `{"audit":}`, `{"a":1,}`, `{"audit":[1]`, `{"a":"x}`, `{} x`} {
		if got, ok := auditNulled(nil, []byte(doc)); ok {
			t.Errorf("%q read as %q", doc, got)
		}
	}
	if got, ok := auditNulled(nil, []byte(` { "a" : 1 , "audit" : [ {"b":"]"} ] } `)); !ok || string(got) != ` { "a" : 1 , "audit" : null } ` {
		t.Errorf("spaced document: %q, %v", got, ok)
	}
}

// waitsAll makes every triaged result wait.
func waitsAll(r openrecall.Result) (openrecall.Waiting, bool) {
	if r.Outcome != openrecall.ResultTriaged {
		return openrecall.Waiting{}, false
	}
	res := r
	res.Audit = nil
	return openrecall.Waiting{AnalysisID: r.AnalysisID, Batch: r.Batch, Reason: "escalated", AlertID: r.Alert.ID, Title: r.Alert.Title, Result: &res}, true
}

// TestWaitingRowNamesItsInboxRow: under serve (a delivery claimed and
// finished by the sink's transaction) the waiting row stores no copy and
// names its inbox row; it reads back the triaged result, verifies, takes
// its copy back when retention prunes the inbox row (and still reads and
// verifies), and an edit of the inbox document outside its entries is
// refused and named, an edit of the entries alone is the inbox row's.
func TestWaitingRowNamesItsInboxRow(t *testing.T) {
	ctx := context.Background()
	s := sealedTemp(t)
	if _, err := s.Enqueue(ctx, []openrecall.Delivery{firing("x", "high"), firing("y", "low"), firing("z", "low")}, 0, inboxName); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Claim(ctx, 3)
	if err != nil || len(ds) != 3 {
		t.Fatalf("claim: %+v, %v", ds, err)
	}
	results := make([]openrecall.Result, len(ds))
	for i, d := range ds {
		results[i] = sinkResult(d.AnalysisID, 2)
		results[i].Alert, results[i].Batch = d.Alert, "serve"
		results[i].Alert.Labels = map[string]string{"note": "a&b</script>"}
		results[i].Audit = audit.Entries(results[i], s.now())
	}
	sealer := audit.NewSealer(testKey)
	sink := Sink{Store: s, Seal: sealer.Seal, SealCosts: sealer.SealCosts, Waits: waitsAll}
	if _, err := sink.PersistBatch(ctx, results, make([]*openrecall.CostPoint, len(results))); err != nil {
		t.Fatal(err)
	}
	readBack := func(when string) {
		t.Helper()
		for _, r := range results {
			w, err := s.WaitingFor(ctx, r.AnalysisID)
			if err != nil {
				t.Fatalf("%s: waiting %s: %v", when, r.AnalysisID, err)
			}
			want := r
			want.Audit = nil
			got, _ := json.Marshal(*w.Result)
			if b, _ := json.Marshal(want); string(got) != string(b) {
				t.Errorf("%s: waiting %s reads\n%s\nwant\n%s", when, r.AnalysisID, got, b)
			}
		}
		items, err := s.Awaiting(ctx, openrecall.WaitingFilter{})
		if err != nil || len(items) != len(results) {
			t.Fatalf("%s: awaiting: %d items, %v", when, len(items), err)
		}
		for _, w := range items {
			if w.Labels["note"] != "a&b</script>" {
				t.Errorf("%s: %s listed with labels %v", when, w.AnalysisID, w.Labels)
			}
		}
		if ps := rowProblems(t, s); len(ps) != 0 {
			t.Errorf("%s: verify: %v", when, ps)
		}
	}
	named := func(id string) bool {
		t.Helper()
		var own string
		var inbox sql.NullInt64
		if err := s.db.QueryRowContext(ctx, `SELECT result, result_inbox FROM waiting WHERE analysis_id = $1`, id).Scan(&own, &inbox); err != nil {
			t.Fatal(err)
		}
		if inbox.Valid != (own == "") {
			t.Fatalf("waiting %s holds %d bytes and names inbox row %v", id, len(own), inbox)
		}
		return inbox.Valid
	}
	for _, r := range results {
		if !named(r.AnalysisID) {
			t.Errorf("waiting %s holds a copy of its result under serve", r.AnalysisID)
		}
	}
	readBack("named")

	// The entries alone edited: the inbox row's problem, not the waiting row's.
	if _, err := s.db.ExecContext(ctx, `UPDATE inbox SET result = replace(result, '"step_index":0', '"step_index":7') WHERE analysis_id = $1`, results[0].AnalysisID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitingFor(ctx, results[0].AnalysisID); err != nil {
		t.Errorf("entries of the inbox document edited: the waiting item reads %v", err)
	}
	// The result edited: the waiting row is refused and named.
	if _, err := s.db.ExecContext(ctx, `UPDATE inbox SET result = replace(result, '"outcome":"triaged"', '"outcome":"triagedx"') WHERE analysis_id = $1`, results[1].AnalysisID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitingFor(ctx, results[1].AnalysisID); !errors.Is(err, openrecall.ErrIntegrity) {
		t.Errorf("inbox document edited: the waiting item reads %v, want ErrIntegrity", err)
	}
	if ps := rowProblems(t, s); !hasRowProblem(ps, openrecall.RowWaiting, results[1].AnalysisID) {
		t.Errorf("inbox document edited: verify reports %v, want waiting %s named", ps, results[1].AnalysisID)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE inbox SET result = replace(result, '"outcome":"triagedx"', '"outcome":"triaged"') WHERE analysis_id = $1`, results[1].AnalysisID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE inbox SET result = replace(result, '"step_index":7', '"step_index":0') WHERE analysis_id = $1`, results[0].AnalysisID); err != nil {
		t.Fatal(err)
	}

	// Retention prunes the inbox rows: the waiting rows take their copy back.
	if n, err := s.PruneInboxAll(ctx, s.now().Add(time.Hour), 2); err != nil || n != len(results) {
		t.Fatalf("prune: %d, %v", n, err)
	}
	for _, r := range results {
		if named(r.AnalysisID) {
			t.Errorf("waiting %s still names its pruned inbox row", r.AnalysisID)
		}
	}
	readBack("pruned")
}

// hasRowProblem reports whether ps names the row of kind about id.
func hasRowProblem(ps []audit.Problem, kind, id string) bool {
	for _, p := range ps {
		if p.Step == kind && p.AnalysisID == id {
			return true
		}
	}
	return false
}
