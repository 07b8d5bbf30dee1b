package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

type scored struct {
	Note  string
	Score float64
}

func scoresOf(ms []openrecall.Match) []scored {
	out := []scored{}
	for _, m := range ms {
		out = append(out, scored{m.Incident.Note, m.Score})
	}
	return out
}

func TestRetainRecall(t *testing.T) {
	base := fpOf("crashloopbackoff", "api_edge", "configmap", "spike", "", "prod")
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }
	with := func(field, value string) openrecall.Fingerprint {
		f, _ := base.With(field, value)
		return f
	}
	both := with(openrecall.FieldDependencyPattern, "dns")
	both.SignalShape = "sustained"
	seed := []openrecall.Incident{
		{Note: "exact-old", Fingerprint: base, Decision: openrecall.DecisionFalsePositive, CreatedAt: at(1)},
		{Note: "exact-new", Fingerprint: base, Decision: openrecall.DecisionFalsePositive, CreatedAt: at(5)},
		{Note: "dep-differs", Fingerprint: with(openrecall.FieldDependencyPattern, "dns"), Decision: openrecall.DecisionKnownBenign, CreatedAt: at(9)},
		{Note: "shape-differs", Fingerprint: with(openrecall.FieldSignalShape, "flapping"), Decision: openrecall.DecisionDuplicate, CreatedAt: at(7)},
		{Note: "both-differ", Fingerprint: both, Decision: openrecall.DecisionReal, CreatedAt: at(20)},
		{Note: "other-env", Fingerprint: with(openrecall.FieldEnvironment, "dev"), Decision: openrecall.DecisionFalsePositive, CreatedAt: at(30)},
		{Note: "attack", Fingerprint: with(openrecall.FieldAttackPattern, "brute_force"), Decision: openrecall.DecisionFalsePositive, CreatedAt: at(30)},
		{Note: "other-class", Fingerprint: with(openrecall.FieldErrorClass, "oomkilled"), Decision: openrecall.DecisionFalsePositive, CreatedAt: at(30)},
		{Note: "other-role", Fingerprint: with(openrecall.FieldServiceRole, "cache"), Decision: openrecall.DecisionFalsePositive, CreatedAt: at(30)},
	}
	s := openTemp(t)
	for _, inc := range seed {
		inc.Identity = rid
		mustRetain(t, s, inc)
	}
	const exact, one, two = 1.0, 89.0 / 98, 80.0 / 98
	tests := []struct {
		name  string
		fp    openrecall.Fingerprint
		limit int
		want  []scored
	}{
		{"score then recency", base, 10, []scored{{"exact-new", exact}, {"exact-old", exact}, {"dep-differs", one}, {"shape-differs", one}, {"both-differ", two}}},
		{"limit cuts inside a tier", base, 3, []scored{{"exact-new", exact}, {"exact-old", exact}, {"dep-differs", one}}},
		{"limit one", base, 1, []scored{{"exact-new", exact}}},
		{"limit zero", base, 0, []scored{}},
		{"negative limit", base, -3, []scored{}},
		{"from the dependency side", with(openrecall.FieldDependencyPattern, "dns"), 10,
			[]scored{{"dep-differs", exact}, {"both-differ", one}, {"exact-new", one}, {"exact-old", one}, {"shape-differs", two}}},
		{"critical field isolates: environment", with(openrecall.FieldEnvironment, "dev"), 10, []scored{{"other-env", exact}}},
		{"critical field isolates: attack", with(openrecall.FieldAttackPattern, "brute_force"), 10, []scored{{"attack", exact}}},
		{"critical field isolates: staging has nothing", with(openrecall.FieldEnvironment, "staging"), 10, []scored{}},
		{"unknown descriptive fields", fpOf("crashloopbackoff", "api_edge", "", "", "", "prod"), 2, []scored{{"both-differ", two}, {"dep-differs", two}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Recall(context.Background(), rid, tt.fp, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, scoresOf(got)); diff != "" {
				t.Errorf("Recall(%s, %d) (-want +got):\n%s", tt.fp, tt.limit, diff)
			}
			// Another rule sees the same memories as related matches only,
			// scored at most MinStrongThreshold, in the same order.
			other, err := s.Recall(context.Background(), openrecall.Identity{Rule: "OtherRule", Service: rid.Service}, tt.fp, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			want := []scored{}
			for _, w := range tt.want {
				want = append(want, scored{w.Note, openrecall.MinStrongThreshold * w.Score})
			}
			if diff := cmp.Diff(want, scoresOf(other)); diff != "" {
				t.Errorf("Recall for another rule (-want +got):\n%s", diff)
			}
			for _, m := range other {
				if !m.Related || m.Score > openrecall.MinStrongThreshold {
					t.Errorf("memory of another rule recalled as %+v, want a related match scored ≤ %v", m, openrecall.MinStrongThreshold)
				}
			}
		})
	}
}

// rid is the identity of the memories most tests retain.
var rid = openrecall.Identity{Rule: "KubePodCrashLooping", Service: "checkout"}

func TestRecallTiesByID(t *testing.T) {
	s := openTemp(t)
	fp := fpOf("timeout", "batch_worker", "queue", "sawtooth", "", "staging")
	when := time.Date(2026, 2, 2, 2, 2, 2, 2, time.UTC)
	var ids []string
	for i := 0; i < 6; i++ {
		inc := mustRetain(t, s, openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionDuplicate,
			Note: fmt.Sprintf("same moment %d", i), CreatedAt: when})
		ids = append(ids, inc.ID)
	}
	sort.Strings(ids)
	got, err := s.Recall(context.Background(), openrecall.Identity{}, fp, 4)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, m := range got {
		gotIDs = append(gotIDs, m.Incident.ID)
	}
	if diff := cmp.Diff(ids[:4], gotIDs); diff != "" {
		t.Errorf("equal times must order by id ascending (-want +got):\n%s", diff)
	}
}

// model is the in-memory reference for Recall's documented semantics
// (without expiry): memories that agree on the four critical fields, of the
// alert's identity, or of any other when the DNA names an error class or a
// service role, scored by openrecall.ScoreMatch.
func model(all []openrecall.Incident, id openrecall.Identity, fp openrecall.Fingerprint, limit int, now time.Time) []openrecall.Match {
	out := []openrecall.Match{}
	for _, inc := range all {
		same := !id.IsZero() && inc.Identity == id
		if inc.ForgottenAt.IsZero() && openrecall.SameCritical(fp, inc.Fingerprint) && (same || fp.ErrorClass != "" || fp.ServiceRole != "") {
			out = append(out, openrecall.ScoreMatch(id, fp, inc, now))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if !a.Incident.CreatedAt.Equal(b.Incident.CreatedAt) {
			return a.Incident.CreatedAt.After(b.Incident.CreatedAt)
		}
		return a.Incident.ID < b.Incident.ID
	})
	if limit < 0 {
		limit = 0
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func TestRecallAgreesWithModel(t *testing.T) {
	s := openTemp(t)
	rng := rand.New(rand.NewSource(7))
	pick := func(vals ...string) string { return vals[rng.Intn(len(vals))] }
	randomFP := func() openrecall.Fingerprint {
		return fpOf(pick("timeout", "http_5xx", ""), pick("api_edge", "cache", ""), pick("", "dns", "queue", "database"),
			pick("", "spike", "sustained", "flapping"), pick("", "port_scan"), pick("prod", "dev"))
	}
	ids := []openrecall.Identity{{}, {Rule: "A", Service: "x"}, {Rule: "B", Service: "x"}, {Rule: "A", Service: "y"}, {Rule: "A"}}
	randomID := func() openrecall.Identity { return ids[rng.Intn(len(ids))] }
	var all []openrecall.Incident
	for i := 0; i < 600; i++ {
		inc := openrecall.Incident{Fingerprint: randomFP(), Decision: openrecall.MemoryDecisions[rng.Intn(4)],
			Note: fmt.Sprintf("note %d", i), CreatedAt: time.Date(2026, 1, 1, 0, 0, rng.Intn(40), 0, time.UTC),
			Identity: randomID()}
		all = append(all, mustRetain(t, s, inc))
	}
	for i := 0; i < 300; i++ {
		id, fp, limit := randomID(), randomFP(), rng.Intn(30)-2
		got, err := s.Recall(context.Background(), id, fp, limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(model(all, id, fp, limit, time.Time{}), got); diff != "" {
			t.Fatalf("Recall(%s, %s, %d) disagrees with the model (-model +store):\n%s", id, fp, limit, diff)
		}
	}
}

func TestRecallInvalidFingerprint(t *testing.T) {
	s := openTemp(t)
	_, err := s.Recall(context.Background(), rid, openrecall.Fingerprint{ErrorClass: "Not Canonical"}, 5)
	if !errors.Is(err, openrecall.ErrInvalid) {
		t.Fatalf("Recall with a non-canonical fingerprint: err = %v, want ErrInvalid", err)
	}
}

func TestRecallUsesIndexes(t *testing.T) {
	sqliteOnly(t) // EXPLAIN QUERY PLAN is SQLite's
	s := openTemp(t)
	fp := fpOf("timeout", "api_edge", "dns", "spike", "", "prod")
	r := sqliteStatements.recall
	queries := map[string]recallStatement{"both families": r.strongRelated, "strong only": r.strongOnly, "related only": r.relatedOnly}
	for name, st := range queries {
		t.Run(name, func(t *testing.T) {
			q := st.text
			rows, err := s.db.Query("EXPLAIN QUERY PLAN "+q, recallArgs(sqliteDialect, st.pick, rid, fp, 10)...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			searches := 0
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
				if strings.HasPrefix(detail, "SEARCH incidents USING INDEX") {
					searches++
				}
			}
			joined := strings.Join(plan, " | ")
			// Each tier searches its index in index order: no scan of the
			// table or of an index, no sort (scanning a tier's subquery,
			// which yields the rows the search found, is fine).
			wantSearches := strings.Count(q, "INDEXED BY")
			if searches != wantSearches || strings.Contains(joined, "SCAN incidents") ||
				strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("plan is not %d index searches in index order: %s", wantSearches, joined)
			}
		})
	}
}

// TestRecallParametersAreNotBare pins the fix for recall statements that
// SQLite re-prepared on every run (a bare parameter in a LIMIT or in an
// equality a row is filtered by asks for a new plan whenever the driver
// binds it anew, and the driver clears the bindings before each run): every
// parameter of the recall queries is written +?N.
func TestRecallParametersAreNotBare(t *testing.T) {
	for _, st := range sqliteStatements.recall.all() {
		q := st.text
		for i := range len(q) {
			if q[i] == '?' && (i == 0 || q[i-1] != '+') {
				t.Fatalf("bare parameter at %q in the recall query", q[max(0, i-30):min(len(q), i+4)])
			}
		}
	}
}

func TestRetainIdempotent(t *testing.T) {
	s := openTemp(t)
	fp := fpOf("oomkilled", "batch_worker", "", "sawtooth", "", "prod")
	first, created, err := s.Retain(context.Background(), openrecall.Incident{Fingerprint: fp,
		Decision: openrecall.DecisionKnownBenign, Note: "Nightly  batch\u00a0job — expected", SourceAlertID: "AM-1",
		DeadEnds: []string{"restarted pod"}, Analyst: "ana"})
	if err != nil || !created {
		t.Fatalf("first Retain: created=%v err=%v", created, err)
	}
	tests := []struct {
		name        string
		note, alert string
		wantCreated bool
	}{
		{"identical", "Nightly  batch\u00a0job — expected", "AM-1", false},
		{"case and unicode spaces", "  NIGHTLY\u2003batch\u200b job —\texpected ", "am-1", false},
		{"another alert of the family", "Nightly batch job — expected", "AM-2", true},
		{"another note", "nightly batch job, expected", "AM-1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, created, err := s.Retain(context.Background(), openrecall.Incident{Fingerprint: fp,
				Decision: openrecall.DecisionKnownBenign, Note: tt.note, SourceAlertID: tt.alert, Analyst: "bob"})
			if err != nil {
				t.Fatal(err)
			}
			if created != tt.wantCreated {
				t.Fatalf("created = %v, want %v", created, tt.wantCreated)
			}
			if !created {
				if diff := cmp.Diff(first, got); diff != "" {
					t.Errorf("already known: want the stored record untouched (-first +got):\n%s", diff)
				}
			}
		})
	}
	if n := countIncidents(t, s); n != 3 {
		t.Errorf("stored %d incidents, want 3", n)
	}
	stored, err := s.Get(context.Background(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, stored); diff != "" {
		t.Errorf("Get differs from what Retain returned (-retain +get):\n%s", diff)
	}
}

func TestRetainStoresEverything(t *testing.T) {
	s := openTemp(t)
	when := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	in := openrecall.Incident{Fingerprint: fpOf("http_5xx", "api_edge", "downstream_api", "spike", "", "prod"),
		Decision: openrecall.DecisionReal, Note: "upstream outage", DeadEnds: []string{"rolled back", "scaled out"},
		Analyst: "ana", ImpactMinutes: 42, SourceAlertID: "pd-123", CreatedAt: when}
	got := mustRetain(t, s, in)
	want := in.Normalized()
	want.CreatedAt = when.UTC()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Retain (-want +got):\n%s", diff)
	}
	zero := mustRetain(t, s, openrecall.Incident{Fingerprint: in.Fingerprint, Decision: openrecall.DecisionReal, Note: "no time"})
	if zero.CreatedAt.IsZero() || zero.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want the clock's UTC time", zero.CreatedAt)
	}
}

func TestRetainInvalid(t *testing.T) {
	s := openTemp(t)
	good := fpOf("timeout", "", "", "", "", "")
	tests := []struct {
		name string
		inc  openrecall.Incident
	}{
		{"non-canonical fingerprint", openrecall.Incident{Fingerprint: fpOf("Time Out", "", "", "", "", ""), Decision: openrecall.DecisionReal}},
		{"escalated is not retainable", openrecall.Incident{Fingerprint: good, Decision: openrecall.DecisionEscalated}},
		{"unknown decision", openrecall.Incident{Fingerprint: good, Decision: "maybe"}},
		{"negative impact", openrecall.Incident{Fingerprint: good, Decision: openrecall.DecisionReal, ImpactMinutes: -1}},
		{"time out of range", openrecall.Incident{Fingerprint: good, Decision: openrecall.DecisionReal, CreatedAt: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := s.Retain(context.Background(), tt.inc); !errors.Is(err, openrecall.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if n := countIncidents(t, s); n != 0 {
		t.Errorf("stored %d incidents, want none", n)
	}
}

func TestGetNotFound(t *testing.T) {
	s := openTemp(t)
	if _, err := s.Get(context.Background(), "inc_missing"); !errors.Is(err, openrecall.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}
