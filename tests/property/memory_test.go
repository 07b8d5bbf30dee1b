package property

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	gg "github.com/leanovate/gopter/gen"
	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
)

// memoryProperties are the rules of the SQLite memory.
func memoryProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P7_retain_idempotent",
			"Retain is idempotent on (fingerprint, decision, note, source alert id): retaining an incident again, or an equivalent one with other metadata (identity included: the dedupe key is the source alert's id, not its identity), leaves one record and reports \"already known\" with the stored record.",
			"IncidentGen", gen.IncidentGen(), checkRetainIdempotent,
			pbt.Expensive(3),
			pbt.Classify(func(inc openrecall.Incident) []string {
				var l []string
				if inc.Note == "" {
					l = append(l, "empty note")
				}
				if inc.SourceAlertID != "" {
					l = append(l, "about one alert")
				}
				if hasEmptyField(inc.Fingerprint) {
					l = append(l, "empty fingerprint field")
				}
				return l
			}),
			pbt.Cover("empty note", 5), pbt.Cover("about one alert", 20), pbt.Cover("empty fingerprint field", 20),
		),
		pbt.ForAllProp("P17_memory_matches_model",
			"The SQLite memory behaves as a simple in-memory model under any sequence of retains and recalls (identity, fingerprint, limit): candidates share the four critical fields; a memory of the alert's identity scores Similarity, any other is related, scored 0.80·Similarity and recalled only when the DNA names an error class or a service role; order score desc then newer then id, first limit; an equivalent retain with an identity fills in a stored memory's missing one.",
			"MemoryCommandsGen (FamilyIncidentGen, FamilyFingerprintGen)", memoryCommandsProp,
			pbt.Expensive(3),
			pbt.PinFunc("recall ties broken by id after equal times", func() error {
				a := openrecall.Incident{Fingerprint: gen.Families()[0], Decision: openrecall.DecisionKnownBenign, Note: "a", CreatedAt: gen.Epoch()}
				b := a
				b.Note = "b"
				return replayMemory(retainCmd{a}, retainCmd{b}, recallCmd{FP: gen.Families()[0], Limit: 5})
			}),
			pbt.PinFunc("a memory without identity gets one from an equivalent retain", func() error {
				id := gen.Identities()[1]
				a := openrecall.Incident{Fingerprint: gen.Families()[0], Decision: openrecall.DecisionKnownBenign, Note: "a", CreatedAt: gen.Epoch()}
				b := a
				b.Identity = id
				return replayMemory(retainCmd{a}, retainCmd{b}, recallCmd{ID: id, FP: gen.Families()[0], Limit: 5})
			}),
			pbt.PinFunc("limit 0 returns nothing", func() error {
				a := openrecall.Incident{Fingerprint: gen.Families()[1], Decision: openrecall.DecisionReal, CreatedAt: gen.Epoch()}
				return replayMemory(retainCmd{a}, recallCmd{FP: gen.Families()[1], Limit: 0})
			}),
			pbt.PinFunc("80-point tier after the exact one, limit cuts it", func() error {
				f := gen.Families()
				mk := func(fp openrecall.Fingerprint, m int) openrecall.Incident {
					return openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionDuplicate, CreatedAt: gen.Epoch().Add(time.Duration(m) * time.Minute)}
				}
				return replayMemory(retainCmd{mk(f[3], 1)}, retainCmd{mk(f[1], 2)}, retainCmd{mk(f[2], 3)}, retainCmd{mk(f[0], 0)},
					recallCmd{FP: f[0], Limit: 3}, recallCmd{FP: f[3], Limit: 12})
			}),
		),
		pbt.ForAll("P20_retain_order_independent",
			"The memory's final state after a set of retains does not depend on their order: the same records (ids, dedupe keys, fingerprints, decisions) and the same recall scores.",
			"RetainPlanGen", gen.RetainPlanGen(), checkRetainOrder,
			pbt.Expensive(3),
			pbt.Classify(func(p gen.RetainPlan) []string {
				keys := map[string]bool{}
				for _, inc := range p.Listed() {
					keys[inc.Normalized().DedupeKey] = true
				}
				if len(keys) < len(p.Listed()) {
					return []string{"equivalent retains in the set"}
				}
				return nil
			}),
			pbt.Cover("equivalent retains in the set", 30),
		),
		pbt.ForAll("P32_identity_separation",
			"Only a memory of the same alert votes: whatever the DNA (also an empty one), no memory of another identity (or without one) is ever a strong match — recall marks it related and scores it at most 0.80 — so memories of other rules never bypass an alert; the alert's own five unanimous benign memories do.",
			"SeparationCaseGen", gen.SeparationCaseGen(), checkIdentitySeparation,
			pbt.Expensive(3),
			pbt.Pin("MySQL restarted benign five times, MongoDB replica unhealthy fires", gen.SeparationCase{
				Identity: openrecall.Identity{Rule: "MongodbReplicaMemberUnhealthy", Service: "checkout"},
				Others: []openrecall.Incident{
					{Identity: openrecall.Identity{Rule: "MysqlRestarted", Service: "checkout"}, Decision: openrecall.DecisionKnownBenign, SourceAlertID: "m1"},
					{Identity: openrecall.Identity{Rule: "MysqlRestarted", Service: "checkout"}, Decision: openrecall.DecisionKnownBenign, SourceAlertID: "m2"},
					{Identity: openrecall.Identity{Rule: "MysqlRestarted", Service: "checkout"}, Decision: openrecall.DecisionKnownBenign, SourceAlertID: "m3"},
					{Identity: openrecall.Identity{Rule: "MysqlRestarted", Service: "checkout"}, Decision: openrecall.DecisionKnownBenign, SourceAlertID: "m4"},
					{Identity: openrecall.Identity{Rule: "MysqlRestarted", Service: "checkout"}, Decision: openrecall.DecisionKnownBenign, SourceAlertID: "m5"},
				}}),
			pbt.Classify(func(c gen.SeparationCase) []string {
				var l []string
				if c.Fingerprint.ErrorClass == "" && c.Fingerprint.ServiceRole == "" {
					l = append(l, "empty DNA with an identity")
				}
				if len(c.Others) >= 5 {
					l = append(l, "five or more colliding memories of other identities")
				}
				if c.Own >= 5 {
					l = append(l, "own memories vouch")
				}
				return l
			}),
			pbt.Cover("empty DNA with an identity", 10), pbt.Cover("five or more colliding memories of other identities", 20), pbt.Cover("own memories vouch", 10),
		),
		pbt.ForAll("P23_concurrent_retain_one_record",
			"Two connections retaining the same incident at the same moment leave exactly one record; one reports created, the other \"already known\" with the same id.",
			"ConcurrentRetainGen", gen.ConcurrentRetainGen(), checkConcurrentRetain,
			pbt.Expensive(5),
		),
	}
}

// checkIdentitySeparation retains the case's memories in a real store,
// recalls for the alert and runs triage and the guard on what it recalls.
func checkIdentitySeparation(c gen.SeparationCase) error {
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		for _, inc := range c.Others {
			if _, _, err := ss[0].Retain(ctx, inc); err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
		}
		for i := 0; i < c.Own; i++ {
			if _, _, err := ss[0].Retain(ctx, openrecall.Incident{Fingerprint: c.Fingerprint, Identity: c.Identity,
				Decision: openrecall.DecisionKnownBenign, Severity: openrecall.SeverityCritical, SourceAlertID: fmt.Sprintf("own-%d", i),
				CreatedAt: gen.Epoch()}); err != nil {
				return fmt.Errorf("setup: retain: %v", err)
			}
		}
		cfg := triage.DefaultConfig()
		ms, err := ss[0].Recall(ctx, c.Identity, c.Fingerprint, cfg.RecallLimit)
		if err != nil {
			return fmt.Errorf("recall error: %v", err)
		}
		for _, m := range ms {
			if m.Incident.Identity != c.Identity && (!m.Related || m.Score > 0.80) {
				return fmt.Errorf("separation: a memory of %s is recalled for %s as related=%v score %v", m.Incident.Identity, c.Identity, m.Related, m.Score)
			}
		}
		tr := triage.Triage(c.Fingerprint, openrecall.SeverityMedium, ms, cfg)
		v := triage.Guard(c.Fingerprint, tr, cfg)
		if want := c.Own >= 5 && !c.Fingerprint.HasAttack(); v.Bypass != want {
			return fmt.Errorf("separation: %d own and %d other memories of %s: bypass %v, want %v (%s)", c.Own, len(c.Others), c.Fingerprint, v.Bypass, want, v.Reason)
		}
		return nil
	})
}

// fixedNow is the stores' clock: incidents without a time get this one.
func fixedNow() time.Time { return gen.Epoch().Add(24 * time.Hour) }

// withStores opens n Stores on one fresh SQLite file, runs f and removes the
// file.
func withStores(n int, f func(ctx context.Context, stores []*memory.Store) error) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-")
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer drop() // after the stores are closed
	var stores []*memory.Store
	defer func() {
		for _, s := range stores {
			_ = s.Close()
		}
	}()
	for i := 0; i < n; i++ {
		s, err := memory.Open(ctx, loc, memory.Options{Now: fixedNow})
		if err != nil {
			return fmt.Errorf("setup: open store: %v", err)
		}
		stores = append(stores, s)
	}
	return f(ctx, stores)
}

func incidentCount(ctx context.Context, s *memory.Store) (int, error) {
	st, err := s.Stats(ctx)
	if err != nil {
		return 0, fmt.Errorf("stats: %v", err)
	}
	return st.Incidents, nil
}

func checkRetainIdempotent(inc openrecall.Incident) error {
	n1 := inc.Normalized()
	if n2 := n1.Normalized(); n2.ID != n1.ID || n2.DedupeKey != n1.DedupeKey {
		return fmt.Errorf("normalize: Normalized is not idempotent: %s then %s", n1.ID, n2.ID)
	}
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		s := ss[0]
		first, created, err := s.Retain(ctx, inc)
		if err != nil {
			return fmt.Errorf("retain error: %v", err)
		}
		if !created {
			return fmt.Errorf("first retain: created=false on an empty store")
		}
		if first.ID != n1.ID || first.DedupeKey != n1.DedupeKey {
			return fmt.Errorf("identity: stored id %s key %s, want %s %s", first.ID, first.DedupeKey, n1.ID, n1.DedupeKey)
		}
		equivalent := inc
		equivalent.Analyst, equivalent.DeadEnds, equivalent.ImpactMinutes = "someone else", []string{"another dead end"}, 7
		equivalent.CreatedAt = inc.CreatedAt.Add(time.Hour)
		equivalent.ID = "inc_other"
		equivalent.Note = "  " + strings.ToUpper(inc.Note) + "\u00a0"
		if strings.ToUpper(inc.Note) != inc.Note && openrecall.CanonicalText(strings.ToUpper(inc.Note)) != openrecall.CanonicalText(inc.Note) {
			equivalent.Note = inc.Note
		}
		for i, again := range []openrecall.Incident{inc, equivalent} {
			got, created, err := s.Retain(ctx, again)
			if err != nil {
				return fmt.Errorf("retain error: %v", err)
			}
			if created {
				return fmt.Errorf("idempotence: retain #%d of an equivalent incident created a second record", i+2)
			}
			if diff := cmp.Diff(first, got); diff != "" {
				return fmt.Errorf("idempotence: retain #%d returned another record than the stored one (-first +got):\n%s", i+2, diff)
			}
		}
		n, err := incidentCount(ctx, s)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("idempotence: %d records after three equivalent retains", n)
		}
		got, err := s.Get(ctx, first.ID)
		if err != nil {
			return fmt.Errorf("get: %v", err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			return fmt.Errorf("get: Get differs from what Retain returned:\n%s", diff)
		}
		return nil
	})
}

// retainTwiceLeavesOne retains one decision with two notes that are
// equivalent and checks the store keeps one record.
func retainTwiceLeavesOne(fp openrecall.Fingerprint, a, b string) error {
	return withStores(1, func(ctx context.Context, ss []*memory.Store) error {
		inc := openrecall.Incident{Fingerprint: fp, Decision: openrecall.DecisionKnownBenign, Note: a, SourceAlertID: "am-1"}
		first, _, err := ss[0].Retain(ctx, inc)
		if err != nil {
			return fmt.Errorf("retain error: %v", err)
		}
		inc.Note = b
		second, created, err := ss[0].Retain(ctx, inc)
		if err != nil {
			return fmt.Errorf("retain error: %v", err)
		}
		if created || second.ID != first.ID {
			return fmt.Errorf("store: notes %q and %q stored as two records (%s, %s)", a, b, first.ID, second.ID)
		}
		return nil
	})
}

// record is what order independence compares of a stored incident.
type record struct {
	ID, DedupeKey, SourceAlertID string
	Fingerprint                  openrecall.Fingerprint
	Decision                     openrecall.Decision
}

func exportRecords(ctx context.Context, s *memory.Store) ([]record, error) {
	var buf bytes.Buffer
	if _, err := s.Export(ctx, &buf); err != nil {
		return nil, fmt.Errorf("export: %v", err)
	}
	var out []record
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var inc openrecall.Incident
		if err := dec.Decode(&inc); err != nil {
			return nil, fmt.Errorf("export: %v", err)
		}
		out = append(out, record{ID: inc.ID, DedupeKey: inc.DedupeKey, SourceAlertID: inc.SourceAlertID, Fingerprint: inc.Fingerprint, Decision: inc.Decision})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func checkRetainOrder(p gen.RetainPlan) error {
	var states [2][]record
	var scores [2]map[string]float64
	for k, incs := range [][]openrecall.Incident{p.Listed(), p.Permuted()} {
		err := withStores(1, func(ctx context.Context, ss []*memory.Store) error {
			for _, inc := range incs {
				if _, _, err := ss[0].Retain(ctx, inc); err != nil {
					return fmt.Errorf("retain error: %v", err)
				}
			}
			recs, err := exportRecords(ctx, ss[0])
			if err != nil {
				return err
			}
			states[k] = recs
			scores[k] = map[string]float64{}
			for _, fp := range gen.Families() {
				for _, id := range gen.Identities() {
					ms, err := ss[0].Recall(ctx, id, fp, 100)
					if err != nil {
						return fmt.Errorf("recall error: %v", err)
					}
					for _, m := range ms {
						scores[k][id.String()+" "+fp.ID()+" "+m.Incident.ID] = m.Score
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if diff := cmp.Diff(states[0], states[1]); diff != "" {
		return fmt.Errorf("order: the stored records depend on the retain order (-listed +permuted):\n%s", diff)
	}
	if diff := cmp.Diff(scores[0], scores[1]); diff != "" {
		return fmt.Errorf("order: recall scores depend on the retain order:\n%s", diff)
	}
	return nil
}

func checkConcurrentRetain(c gen.ConcurrentRetain) error {
	return withStores(2, func(ctx context.Context, ss []*memory.Store) error {
		a, b := c.Incident, c.Incident
		a.Note, b.Note = c.Note.A(), c.Note.B()
		type res struct {
			inc     openrecall.Incident
			created bool
			err     error
		}
		var wg sync.WaitGroup
		results := make([]res, 2)
		start := make(chan struct{})
		for i, inc := range []openrecall.Incident{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got, created, err := ss[i].Retain(ctx, inc)
				results[i] = res{got, created, err}
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range results {
			if r.err != nil {
				return fmt.Errorf("retain error: connection %d: %v", i+1, r.err)
			}
		}
		if results[0].created == results[1].created {
			return fmt.Errorf("concurrency: created flags %v and %v, want exactly one created", results[0].created, results[1].created)
		}
		if results[0].inc.ID != results[1].inc.ID {
			return fmt.Errorf("concurrency: two ids %s and %s for one decision", results[0].inc.ID, results[1].inc.ID)
		}
		for i, s := range ss {
			n, err := incidentCount(ctx, s)
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("concurrency: connection %d sees %d records, want 1", i+1, n)
			}
		}
		return nil
	})
}

// memModel is the in-memory model of the memory: incidents by dedupe key.
// It is a value: NextState copies it.
type memModel struct {
	incidents map[string]openrecall.Incident
	latch     *latch
	// expected outcome of the last command, for its postcondition
	lastCreated bool
	lastID      string
}

// String describes the model without its latch's address, so reports are
// the same on every run.
func (m memModel) String() string { return fmt.Sprintf("memModel{%d incidents}", len(m.incidents)) }

func (m memModel) with(inc openrecall.Incident) memModel {
	next := m
	next.incidents = make(map[string]openrecall.Incident, len(m.incidents)+1)
	for k, v := range m.incidents {
		next.incidents[k] = v
	}
	next.incidents[inc.DedupeKey] = inc
	return next
}

// recall is the model's recall: exactly the documented semantics, written
// out again. Candidates agree on the four critical fields; a memory of the
// alert's identity scores Similarity (a strong candidate), any other is a
// related match scored 0.80·Similarity and only when the DNA names an error
// class or a service role.
func (m memModel) recall(id openrecall.Identity, fp openrecall.Fingerprint, limit int) []openrecall.Match {
	out := []openrecall.Match{}
	if limit <= 0 {
		return out
	}
	for _, inc := range m.incidents {
		if !openrecall.SameCritical(fp, inc.Fingerprint) {
			continue
		}
		switch {
		case !id.IsZero() && inc.Identity == id:
			out = append(out, openrecall.Match{Incident: inc, Score: openrecall.Similarity(fp, inc.Fingerprint)})
		case fp.ErrorClass != "" || fp.ServiceRole != "":
			out = append(out, openrecall.Match{Incident: inc, Score: 0.80 * openrecall.Similarity(fp, inc.Fingerprint), Related: true})
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
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// latch is the slippage guard of a stateful run: the first failure's kind
// is the only kind that fails afterwards, while gopter shrinks.
type latch struct {
	kind   string
	others []string
}

func (l *latch) fail(err error) *gopter.PropResult {
	kind, _, _ := strings.Cut(err.Error(), ":")
	if l.kind == "" {
		l.kind = kind
	}
	if kind != l.kind {
		l.others = append(l.others, err.Error())
		return &gopter.PropResult{Status: gopter.PropTrue}
	}
	return &gopter.PropResult{Status: gopter.PropFalse, Error: err}
}

type memSUT struct {
	dir   string
	store *memory.Store
	err   error
	drop  func() // removes a PostgreSQL schema; nil for SQLite
}

type retainCmd struct{ Inc openrecall.Incident }

type retainResult struct {
	inc     openrecall.Incident
	created bool
	err     error
}

func (c retainCmd) Run(sut commands.SystemUnderTest) commands.Result {
	s := sut.(*memSUT)
	if s.err != nil {
		return retainResult{err: s.err}
	}
	inc, created, err := s.store.Retain(context.Background(), c.Inc)
	return retainResult{inc, created, err}
}

func (c retainCmd) NextState(state commands.State) commands.State {
	m := state.(memModel)
	n := c.Inc.Normalized()
	if n.CreatedAt.IsZero() {
		n.CreatedAt = fixedNow()
	}
	if old, ok := m.incidents[n.DedupeKey]; ok {
		if old.Identity.IsZero() && !n.Identity.IsZero() {
			// An equivalent retain with an identity restores the vote of
			// a memory without one.
			old.Identity, old.Severity = n.Identity, n.Severity
			m = m.with(old)
		}
		m.lastCreated, m.lastID = false, old.ID
		return m
	}
	next := m.with(n)
	next.lastCreated, next.lastID = true, n.ID
	return next
}

func (c retainCmd) PreCondition(commands.State) bool { return true }

func (c retainCmd) PostCondition(state commands.State, result commands.Result) *gopter.PropResult {
	m, r := state.(memModel), result.(retainResult)
	switch {
	case r.err != nil:
		return m.latch.fail(fmt.Errorf("retain error: %v", r.err))
	case r.created != m.lastCreated:
		return m.latch.fail(fmt.Errorf("retain created flag: store says %v, model says %v for %s", r.created, m.lastCreated, r.inc.ID))
	case r.inc.ID != m.lastID:
		return m.latch.fail(fmt.Errorf("retain id: store returned %s, model %s", r.inc.ID, m.lastID))
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (c retainCmd) String() string { return fmt.Sprintf("retainCmd{%#v}", c.Inc) }

type recallCmd struct {
	ID    openrecall.Identity
	FP    openrecall.Fingerprint
	Limit int
}

type recallResult struct {
	matches []openrecall.Match
	err     error
}

func (c recallCmd) Run(sut commands.SystemUnderTest) commands.Result {
	s := sut.(*memSUT)
	if s.err != nil {
		return recallResult{err: s.err}
	}
	ms, err := s.store.Recall(context.Background(), c.ID, c.FP, c.Limit)
	return recallResult{ms, err}
}

func (c recallCmd) NextState(state commands.State) commands.State { return state }

func (c recallCmd) PreCondition(commands.State) bool { return true }

func (c recallCmd) PostCondition(state commands.State, result commands.Result) *gopter.PropResult {
	m, r := state.(memModel), result.(recallResult)
	if r.err != nil {
		return m.latch.fail(fmt.Errorf("recall error: %v", r.err))
	}
	want := m.recall(c.ID, c.FP, c.Limit)
	got := r.matches
	brief := func(ms []openrecall.Match) []string {
		var out []string
		for _, x := range ms {
			out = append(out, fmt.Sprintf("%s@%.4f/%s related=%v", x.Incident.ID, x.Score, x.Incident.CreatedAt.Format("15:04"), x.Related))
		}
		return out
	}
	for _, x := range got {
		if !(x.Score >= 0 && x.Score <= 1) {
			return m.latch.fail(fmt.Errorf("recall score: %v outside [0, 1]", x.Score))
		}
		if x.Incident.Fingerprint == c.FP && !x.Related && x.Score != 1 {
			return m.latch.fail(fmt.Errorf("recall score: identical fingerprint scored %v", x.Score))
		}
		if x.Related != (c.ID.IsZero() || x.Incident.Identity != c.ID) || x.Related && x.Score > openrecall.MinStrongThreshold {
			return m.latch.fail(fmt.Errorf("recall identity: %s of identity %s recalled for %s as related=%v score %v", x.Incident.ID, x.Incident.Identity, c.ID, x.Related, x.Score))
		}
	}
	if diff := cmp.Diff(brief(want), brief(got)); diff != "" {
		return m.latch.fail(fmt.Errorf("recall differs: the store's matches for %s %s limit %d are not the model's (-model +store):\n%s", c.ID, c.FP, c.Limit, diff))
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (c recallCmd) String() string {
	return fmt.Sprintf("recallCmd{ID: %#v, FP: %#v, Limit: %d}", c.ID, c.FP, c.Limit)
}

// memoryCommands describes the stateful test: a fresh store per sequence, and
// commands whose arguments shrink (built with DeriveGen).
func memoryCommands(l *latch) commands.Commands {
	retain := gopter.DeriveGen(
		func(inc openrecall.Incident) commands.Command { return retainCmd{inc} },
		func(c commands.Command) openrecall.Incident { return c.(retainCmd).Inc },
		gen.FamilyIncidentGen(),
	)
	recall := gopter.DeriveGen(
		func(id openrecall.Identity, fp openrecall.Fingerprint, limit int) commands.Command {
			return recallCmd{id, fp, limit}
		},
		func(c commands.Command) (openrecall.Identity, openrecall.Fingerprint, int) {
			r := c.(recallCmd)
			return r.ID, r.FP, r.Limit
		},
		gen.Of(gen.Identities(), 0.2), gen.FamilyFingerprintGen(), gen.IntUpTo(12),
	)
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(commands.State) commands.SystemUnderTest {
			dir, err := os.MkdirTemp("", "openrecall-pbt-")
			if err != nil {
				return &memSUT{err: err}
			}
			loc, drop, err := storeLocation(dir)
			if err != nil {
				return &memSUT{dir: dir, err: err}
			}
			s, err := memory.Open(context.Background(), loc, memory.Options{Now: fixedNow})
			return &memSUT{dir: dir, store: s, err: err, drop: drop}
		},
		DestroySystemUnderTestFunc: func(sut commands.SystemUnderTest) {
			s := sut.(*memSUT)
			if s.store != nil {
				_ = s.store.Close()
			}
			if s.dir != "" {
				_ = os.RemoveAll(s.dir)
			}
			if s.drop != nil {
				s.drop()
			}
		},
		InitialStateGen: gg.Const(memModel{incidents: map[string]openrecall.Incident{}, latch: l}),
		GenCommandFunc: func(commands.State) gopter.Gen {
			return gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: retain}, {Weight: 2, Gen: recall}})
		},
	}
}

func memoryCommandsProp() gopter.Prop { return commands.Prop(memoryCommands(&latch{})) }

// replayMemory runs a pinned command sequence against a fresh store.
func replayMemory(cmds ...commands.Command) error {
	l := &latch{}
	mc := memoryCommands(l)
	sut := mc.NewSystemUnderTest(nil)
	defer mc.DestroySystemUnderTest(sut)
	res := commands.Replay(sut, memModel{incidents: map[string]openrecall.Incident{}, latch: l}, cmds...)
	if !res.Success() {
		if res.Error != nil {
			return res.Error
		}
		return errors.New("postcondition failed")
	}
	return nil
}
