package property

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/model/local"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
	"github.com/openrecall/openrecall/triage"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// runsProperties are the rules of state carried across runs (issue #40
// item 4): serve analyses batch after batch, day after day, on one store,
// restarting now and then, while people retain and take back decisions,
// decide groups, and add and revoke exceptions between the batches.
func runsProperties() []pbt.Property {
	ex := newExtractor()
	run := func(check func(tr *runsTrace) error) func(gen.RunsPlan) error {
		return func(p gen.RunsPlan) error {
			tr, err := playRuns(ex, p)
			if err != nil {
				return err
			}
			return check(tr)
		}
	}
	opts := []pbt.Option{pbt.Expensive(3), pbt.Classify(classifyRuns),
		pbt.Cover("memory changed between two firings of a family", 30), pbt.Cover("a restart between two firings of a family", 15),
		pbt.Cover("an exception ends before a later firing", 10), pbt.Cover("several batches in one run", 40),
		pbt.Cover("a group decided before a later firing of its alert", 5)}
	return []pbt.Property{
		pbt.ForAll("P159_stored_group_member_rechecked_on_its_runs_memory",
			"A firing that joins a group opened in an earlier batch or run is re-checked against the memory of its own batch (DESIGN §6a): it joins only a group of its own alert no person has decided, within 1 h of the group's last firing, and takes the head's decision (escalated when a model, not memory, called the head benign); when memory bypassed the head, the member is closed only if memory now — after every retain, forget, supersede, expiry and group decision since — still passes the guard on the head's decision (strong memories of the alert, consistency ≥ 0.90, confidence c·(n+1)/(n+2) ≥ 0.85) resting on exactly the memories that supported the head; and a firing no exception closes, within 1 h of the last firing of its alert's newest group, which no person has decided, joins that group when its head was not bypassed by memory or when memory of its alert at the firing's batch is what it was at the head's.",
			"RunsPlanGen", gen.RunsPlanGen(), run(checkRunGroups), append(slices.Clone(opts),
				pbt.Pin("a group a person decided between two batches takes no more members", gen.RunsPlan{Seeds: []int{3, 3}, Workers: 1, Steps: []gen.RunStep{
					{Firings: []gen.RunFiring{{Family: 0}}},
					{Ops: []gen.RunOp{{Kind: gen.OpDecide, Decision: 2}}, Firings: []gen.RunFiring{{Family: 0}}}}}),
				pbt.Pin("a decision retained since the head's batch ends the bypass its members took", gen.RunsPlan{Seeds: []int{0, 0}, Workers: 1, Steps: []gen.RunStep{
					{Firings: []gen.RunFiring{{Family: 0}}},
					{Ops: []gen.RunOp{{Kind: gen.OpRetain}}, Firings: []gen.RunFiring{{Family: 0}}}}}))...),
		pbt.ForAll("P160_ended_exception_never_matches_a_later_run",
			"An exception revoked or expired before a batch (revocation by a person, expiry at its time exactly: active strictly before it) matches no firing of that batch or any later one, in the same run or after a restart; an exception a person added and nobody revoked, not expired at the batch's time, matches every firing of its alert in the batch, the oldest such exception first (DESIGN §6b).",
			"RunsPlanGen", gen.RunsPlanGen(), run(checkRunExceptions), append(slices.Clone(opts),
				pbt.Pin("an exception of an hour matches nothing an hour later (10 + 50 minutes)", gen.RunsPlan{Seeds: []int{3, 3}, Workers: 1, Steps: []gen.RunStep{
					{Ops: []gen.RunOp{{Kind: gen.OpException}}, Firings: []gen.RunFiring{{Family: 0}}},
					{Firings: []gen.RunFiring{{Family: 0}}},
					{Gap: 1, Firings: []gen.RunFiring{{Family: 0}}}}}),
				pbt.Pin("an exception revoked between two runs matches nothing after the restart", gen.RunsPlan{Seeds: []int{3, 3}, Workers: 1, Steps: []gen.RunStep{
					{Ops: []gen.RunOp{{Kind: gen.OpException, Expiry: 3}}, Firings: []gen.RunFiring{{Family: 0}}},
					{Restart: true, Ops: []gen.RunOp{{Kind: gen.OpRevoke}}, Firings: []gen.RunFiring{{Family: 0}}}}}))...),
		pbt.ForAll("P161_forgotten_memory_never_votes_in_a_later_run",
			"A memory taken back (memory forget, or superseded by a new decision) before a batch is never recalled again in that batch or any later run: in no match, no supporting list, no bypass; a memory neither taken back nor expired is recalled as a strong match by every later firing of its alert that memory is consulted for, and supports it when it agrees with the triage's decision (DESIGN §5).",
			"RunsPlanGen", gen.RunsPlanGen(), run(checkRunMemory), append(slices.Clone(opts),
				pbt.Pin("a memory taken back between two runs, and one superseded in a batch, never vote again", gen.RunsPlan{Seeds: []int{0, 0}, Workers: 1, Steps: []gen.RunStep{
					{Firings: []gen.RunFiring{{Family: 0}}},
					{Restart: true, Ops: []gen.RunOp{{Kind: gen.OpForget}}, Firings: []gen.RunFiring{{Family: 0}}},
					{Ops: []gen.RunOp{{Kind: gen.OpSupersede, Which: 1}}, Firings: []gen.RunFiring{{Family: 0}}}}}))...),
	}
}

// runFamily is what the desk knows of a RunFamilies alert.
type runFamily struct {
	id openrecall.Identity
	fp openrecall.Fingerprint
}

// runMemory is the model of one memory: its family and decision, the step
// whose acts created it (−1: the seeds) and took it back (noStep: never),
// and its expiry (zero: none).
type runMemory struct {
	id              string
	family          int
	decision        openrecall.Decision
	created, forgot int
	expires         time.Time
}

// runException is the model of one exception a person added.
type runException struct {
	id               string
	family           int
	created, revoked int
	expires          time.Time
}

const noStep = 1 << 30

// runResult is one result of the desk with the step and family of its
// firing.
type runResult struct {
	openrecall.Result
	step, family int
}

// runsTrace is what a plan played: the results in input order, each
// step's time, and the model of memory, exceptions and group decisions
// the people's acts built.
type runsTrace struct {
	plan     gen.RunsPlan
	at       []time.Time
	results  []runResult
	mems     []*runMemory
	excs     []*runException
	decided  map[string]int // group id → the step whose acts decided it
	families []runFamily
}

// live returns the memories of family f that vote at step s (DESIGN §5):
// retained by then, not taken back, not expired at the step's time.
func (tr *runsTrace) live(f, s int) []*runMemory {
	var out []*runMemory
	for _, m := range tr.mems {
		if m.family == f && m.created <= s && m.forgot > s && (m.expires.IsZero() || tr.at[s].Before(m.expires)) {
			out = append(out, m)
		}
	}
	return out
}

// forgotten reports whether memory id was taken back by step s.
func (tr *runsTrace) forgotten(id string, s int) (*runMemory, bool) {
	for _, m := range tr.mems {
		if m.id == id {
			return m, m.forgot <= s
		}
	}
	return nil, false
}

// active returns the exceptions of family f active at step s, oldest
// first (DESIGN §6b): added by then, not revoked, before their expiry.
func (tr *runsTrace) active(f, s int) []*runException {
	var out []*runException
	for _, e := range tr.excs {
		if e.family == f && e.created <= s && e.revoked > s && tr.at[s].Before(e.expires) {
			out = append(out, e)
		}
	}
	return out
}

// playRuns plays plan p on one fresh keyed store wired as serve wires it
// (batch serve, its groups continued from the store, the cost curve
// continued): each step moves the clock, plays the people's acts through
// the use cases, records the exception expiries due (as serve's runner
// does at each batch) and analyses its firings as the next batch of the
// current run, or of a new run when it restarts.
func playRuns(ex workflow.Fingerprinter, p gen.RunsPlan) (*runsTrace, error) {
	ctx := context.Background()
	h, err := openHourlyDesk(ctx, "runs")
	if err != nil {
		return nil, err
	}
	defer h.close()
	h.clock.set(gen.RunStart())
	root := h.root(compose.Batch("serve"), compose.GroupScope(), compose.Continue())
	app := root.UseCases
	sink, err := root.Sink(ctx)
	if err != nil {
		return nil, fmt.Errorf("setup: sink: %v", err)
	}
	router, err := routing.New(routing.Config{Cheap: local.NewCheap(), Strong: local.NewStrong(), Vet: triage.Vet, Now: h.clock.now})
	if err != nil {
		return nil, fmt.Errorf("setup: router: %v", err)
	}
	tr := &runsTrace{plan: p, decided: map[string]int{}}
	seq := 0
	firing := func(f, host int) (openrecall.Alert, error) {
		seq++
		line := gen.RunFiringLine(f, host, fmt.Sprintf("run-%d", seq), h.clock.now())
		recs, err := intake.ParseBytes([]byte(line), intake.Options{Format: intake.FormatJSONL})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			return openrecall.Alert{}, fmt.Errorf("setup: firing line %s: %v %+v", line, err, recs)
		}
		return recs[0].Alert, nil
	}
	for f := range gen.RunFamilies() {
		a, err := firing(f, 0)
		if err != nil {
			return nil, err
		}
		tr.families = append(tr.families, runFamily{id: ex.Identify(a), fp: ex.Extract(a)})
		for range p.Seed(f) {
			if err := runRetain(ctx, tr, app, firing, -1, f, openrecall.DecisionKnownBenign, time.Time{}, ""); err != nil {
				return nil, err
			}
		}
	}
	acts := &runActs{tr: tr, app: app, firing: firing, now: h.clock.now}
	// step moves the clock to step s's time and plays its acts.
	step := func(s int) error {
		t := gen.RunStart()
		if s > 0 {
			t = tr.at[s-1]
		}
		t = t.Add(time.Duration(gen.RunGaps()[p.Steps[s].Gap]) * time.Minute)
		tr.at = append(tr.at, t)
		h.clock.set(t)
		for _, op := range p.Steps[s].Ops {
			if err := acts.play(ctx, s, op); err != nil {
				return fmt.Errorf("step %d: %s: %v", s, gen.RunOpKinds()[op.Kind], err)
			}
		}
		if err := app.RecordExpiries(ctx); err != nil {
			return fmt.Errorf("step %d: record expiries: %v", s, err)
		}
		return nil
	}
	for s := 0; s < len(p.Steps); {
		end := s + 1
		for end < len(p.Steps) && !p.Steps[end].Restart {
			end++
		}
		// A run starts after its first step's acts: it reads the open
		// groups and the active exceptions then.
		if err := step(s); err != nil {
			return nil, err
		}
		wf, err := root.Pipeline(router, openrecall.Mode{Memory: "sqlite", Model: "deterministic"}, sink)
		if err != nil {
			return nil, fmt.Errorf("setup: workflow: %v", err)
		}
		src := &runsSource{steps: p.Steps, step: s, end: end, boundary: step, firing: firing, at: h.clock.now, notify: make(chan struct{}, 1)}
		var mu sync.Mutex
		_, err = wf.AnalyzeQueue(ctx, src, workflow.QueueOptions{Workers: p.Workers, Curve: costcurve.Daily("serve-", h.clock.now)}, func(r openrecall.Result) error {
			mu.Lock()
			defer mu.Unlock()
			meta, ok := src.lookup(r.AnalysisID)
			if !ok {
				return fmt.Errorf("result %s of no firing", r.AnalysisID)
			}
			tr.results = append(tr.results, runResult{Result: r, step: meta[0], family: meta[1]})
			src.emitted()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("run from step %d: %v", s, err)
		}
		if src.err != nil {
			return nil, src.err
		}
		s = end
	}
	return tr, nil
}

// runsSource is one run's inbox: the firings of steps [step, end), a step
// after the first begun only once every firing before it was stored (its
// batch's acts happen between two batches, as a person's do between two
// claims of serve's inbox), each step a fresh batch.
type runsSource struct {
	steps     []gen.RunStep
	step, end int
	next      int // the next firing of steps[step]
	boundary  func(s int) error
	firing    func(f, host int) (openrecall.Alert, error)
	at        func() time.Time
	fresh     bool
	err       error

	mu          sync.Mutex
	given, done int
	notify      chan struct{}
	meta        map[string][2]int // analysis id → step, family
}

// lookup returns the step and family of the firing of analysis id.
func (s *runsSource) lookup(id string) ([2]int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.meta[id]
	return m, ok
}

// emitted counts one result stored; the caller holds no lock of s.
func (s *runsSource) emitted() {
	s.mu.Lock()
	s.done++
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *runsSource) Next(ctx context.Context) (intake.Record, error) {
	rec, _, err := s.NextNumbered(ctx)
	return rec, err
}

// NextNumbered returns the next firing, numbered across the desk's runs.
func (s *runsSource) NextNumbered(ctx context.Context) (intake.Record, int, error) {
	for s.next >= len(s.steps[s.step].Firings) {
		if s.step+1 >= s.end {
			return intake.Record{}, 0, io.EOF
		}
		for {
			s.mu.Lock()
			settled := s.done == s.given
			s.mu.Unlock()
			if settled {
				break
			}
			select {
			case <-s.notify:
			case <-ctx.Done():
				return intake.Record{}, 0, io.EOF
			}
		}
		s.step++
		s.next = 0
		if err := s.boundary(s.step); err != nil {
			s.err = err
			return intake.Record{}, 0, io.EOF
		}
		s.fresh = true
	}
	if s.next == 0 {
		s.fresh = true
	}
	f := s.steps[s.step].Firings[s.next]
	s.next++
	a, err := s.firing(f.Family, f.Host)
	if err != nil {
		s.err = err
		return intake.Record{}, 0, io.EOF
	}
	// Numbered by the firing's own number, as serve numbers by inbox id.
	var n int
	if _, err := fmt.Sscanf(a.ID, "run-%d", &n); err != nil {
		s.err = fmt.Errorf("firing id %s: %v", a.ID, err)
		return intake.Record{}, 0, io.EOF
	}
	s.mu.Lock()
	if s.meta == nil {
		s.meta = map[string][2]int{}
	}
	s.meta[fmt.Sprintf("serve-%06d", n)] = [2]int{s.step, f.Family}
	s.given++
	s.mu.Unlock()
	return intake.Record{Alert: a, Received: s.at()}, n, nil
}

// FreshBatch reports whether the last firing began a step.
func (s *runsSource) FreshBatch() bool {
	f := s.fresh
	s.fresh = false
	return f
}

// runActs plays the people's acts between batches through the use cases
// and keeps the model of what they did.
type runActs struct {
	tr     *runsTrace
	app    *usecase.App
	firing func(f, host int) (openrecall.Alert, error)
	now    func() time.Time
}

// maxKept bounds the memories of one alert not taken back (expired ones
// are still recalled, as related): within the recall limit, so every
// voter is recalled.
const maxKept = 10

// kept returns the memories of family f not taken back by step s, oldest
// first.
func (a *runActs) kept(f, s int) []*runMemory {
	var out []*runMemory
	for _, m := range a.tr.mems {
		if m.family == f && m.forgot > s {
			out = append(out, m)
		}
	}
	return out
}

func (a *runActs) play(ctx context.Context, s int, op gen.RunOp) error {
	tr, f := a.tr, op.Family
	dec := gen.RunDecisions()[op.Decision]
	var memExpiry time.Time
	if m := gen.RunMemoryExpiries()[op.Expiry%len(gen.RunMemoryExpiries())]; m > 0 {
		memExpiry = a.now().Add(time.Duration(m) * time.Minute)
	}
	switch op.Kind {
	case gen.OpRetain:
		if len(a.kept(f, s)) >= maxKept {
			return nil
		}
		return runRetain(ctx, tr, a.app, a.firing, s, f, dec, memExpiry, "")
	case gen.OpForget, gen.OpSupersede:
		kept := a.kept(f, s)
		if len(kept) == 0 {
			return nil
		}
		old := kept[op.Which%len(kept)]
		if op.Kind == gen.OpSupersede {
			if err := runRetain(ctx, tr, a.app, a.firing, s, f, dec, memExpiry, old.id); err != nil {
				return err
			}
		} else {
			out, err := a.app.Forget(ctx, old.id, "taken back", "bob")
			if err != nil {
				return err
			}
			if !out.Changed {
				return fmt.Errorf("model: memory %s was not taken back before, yet forget changed nothing", old.id)
			}
		}
		old.forgot = s
	case gen.OpDecide:
		var head *runResult
		for i := range tr.results {
			r := &tr.results[i]
			if r.family == f && r.Group != nil && !r.Grouped() {
				head = r
			}
		}
		if head == nil || len(a.kept(f, s)) >= maxKept {
			return nil
		}
		dg, err := a.app.DecideGroup(ctx, head.Group.ID, usecase.Decision{Decision: dec, Note: "the storm", Analyst: "dave"})
		if _, was := tr.decided[head.Group.ID]; was {
			if !errors.Is(err, openrecall.ErrGroupDecided) {
				return fmt.Errorf("group %s, decided before, decided again: %v", head.Group.ID, err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		tr.decided[head.Group.ID] = s
		tr.mems = append(tr.mems, &runMemory{id: dg.Incident.ID, family: f, decision: dec, created: s, forgot: noStep})
	case gen.OpException:
		d := time.Duration(gen.RunExceptionExpiries()[op.Expiry]) * time.Minute
		fam := tr.families[f]
		ch, err := a.app.AddException(ctx, usecase.AddRequest{Identity: fam.id, DNA: fam.fp, MaxSeverity: openrecall.SeverityCritical,
			Decision: openrecall.DecisionKnownBenign, Expiry: d, Analyst: "alice", Note: "maintenance"})
		if err != nil {
			return err
		}
		if !ch.Changed {
			return nil // the same exception, held already
		}
		tr.excs = append(tr.excs, &runException{id: ch.Exception.ID, family: f, created: s, revoked: noStep, expires: a.now().Add(d)})
	case gen.OpRevoke:
		var mine []*runException
		for _, e := range tr.excs {
			if e.family == f && e.revoked == noStep {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		e := mine[op.Which%len(mine)]
		if _, err := a.app.RevokeException(ctx, e.id, "carol", "the maintenance is over"); err != nil {
			return err
		}
		e.revoked = s
	}
	return nil
}

// runRetain retains a person's decision about a new firing of family f at
// step s (superseding memory old when set) and adds it to the model.
func runRetain(ctx context.Context, tr *runsTrace, app *usecase.App, firing func(f, host int) (openrecall.Alert, error),
	s, f int, dec openrecall.Decision, expires time.Time, old string) error {
	a, err := firing(f, 1)
	if err != nil {
		return err
	}
	out, err := app.Retain(ctx, usecase.RetainRequest{Decision: usecase.Decision{Decision: dec, Note: "seen before", Analyst: "bob", ExpiresAt: expires},
		Subject: usecase.Subject{Alerts: []openrecall.Alert{a}}, Supersedes: old})
	if err != nil {
		return err
	}
	if len(out) != 1 || !out[0].Created {
		return fmt.Errorf("model: a decision about new firing %s stored %+v", a.ID, out)
	}
	tr.mems = append(tr.mems, &runMemory{id: out[0].Incident.ID, family: f, decision: dec, created: s, forgot: noStep, expires: expires})
	return nil
}

// idSet is a set of memory ids.
func idSet[T any](xs []T, id func(T) string) map[string]bool {
	out := map[string]bool{}
	for _, x := range xs {
		out[id(x)] = true
	}
	return out
}

func memID(m *runMemory) string { return m.id }

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// guardPasses is DESIGN §6's guard on voters for decision d, written out
// with the default thresholds in integers: d benign, every voter strong (a
// memory of the alert with its DNA scores 1), consistency n_d/n ≥ 0.90 and
// confidence (n_d/n)·(n+1)/(n+2) ≥ 0.85 (no attack, and every firing and
// memory is at warning: clause (e) holds).
func guardPasses(voters []*runMemory, d openrecall.Decision) bool {
	n, nd := 0, 0
	for _, v := range voters {
		n++
		if v.decision == d {
			nd++
		}
	}
	return d.Benign() && n > 0 && 10*nd >= 9*n && 20*nd*(n+1) >= 17*n*(n+2)
}

// runGroup is the reference's view of a group: its head's result, the
// time of its last firing so far, and its alert's voters at the head's
// step.
type runGroup struct {
	head   int
	last   time.Time
	voters map[string]bool
}

// checkRunGroups is P159.
func checkRunGroups(tr *runsTrace) error {
	groups := map[string]*runGroup{}
	newest := map[int]string{}
	for i, r := range tr.results {
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		t, s, f := tr.at[r.step], r.step, r.family
		voters := tr.live(f, s)
		if !r.Grouped() {
			if r.Exception != nil {
				continue
			}
			if id, ok := newest[f]; ok {
				g := groups[id]
				h := tr.results[g.head]
				_, decided := tr.decided[id]
				if !decided && within(t, g.last) && (!h.Bypassed || sameSet(idSet(voters, memID), g.voters)) {
					return fmt.Errorf("liveness: %s of family %d (step %d) was triaged on its own, yet group %s of its alert is undecided, its last firing %s before, and memory is as at its head %s (bypassed %v): %d voters",
						r.AnalysisID, f, s, id, t.Sub(g.last), h.AnalysisID, h.Bypassed, len(voters))
				}
			}
			if r.Group != nil {
				groups[r.Group.ID] = &runGroup{head: i, last: t, voters: idSet(voters, memID)}
				newest[f] = r.Group.ID
			}
			continue
		}
		g, ok := groups[r.Group.ID]
		if !ok {
			return fmt.Errorf("head: member %s names group %s, which no earlier firing opened", r.AnalysisID, r.Group.ID)
		}
		h := tr.results[g.head]
		if s2, decided := tr.decided[r.Group.ID]; decided && s2 <= s {
			return fmt.Errorf("decided: member %s (step %d) joined group %s, which a person decided at step %d", r.AnalysisID, s, r.Group.ID, s2)
		}
		switch {
		case h.family != f:
			return fmt.Errorf("mixed: member %s of family %d in group %s of family %d", r.AnalysisID, f, r.Group.ID, h.family)
		case !within(t, g.last):
			return fmt.Errorf("window: member %s at %s joined group %s whose last firing was at %s", r.AnalysisID, t, r.Group.ID, g.last)
		case r.Bypassed || r.Decision != memberDecision(h.Result):
			return fmt.Errorf("decision: member %s decided %s (bypassed %v), its head %s %s (bypassed %v)", r.AnalysisID, r.Decision, r.Bypassed, h.AnalysisID, h.Decision, h.Bypassed)
		}
		if h.Bypassed {
			var agree []*runMemory
			for _, v := range voters {
				if v.decision == h.Decision {
					agree = append(agree, v)
				}
			}
			support := idSet(agree, memID)
			if !guardPasses(voters, h.Decision) || !sameSet(support, idSet(h.Triage.Supporting, func(s string) string { return s })) {
				return fmt.Errorf("re-check: member %s (step %d) closed %s on head %s (step %d, supported by %v), yet memory at its step has %d voters, %v agreeing (guard passes: %v)",
					r.AnalysisID, s, r.Decision, h.AnalysisID, h.step, h.Triage.Supporting, len(voters), slices.Sorted(mapKeys(support)), guardPasses(voters, h.Decision))
			}
		}
		if t.After(g.last) {
			g.last = t
		}
	}
	return nil
}

// within reports whether t is within the 1 h group window of last, either
// way (DESIGN §6a).
func within(t, last time.Time) bool {
	d := t.Sub(last)
	return d <= time.Hour && -d <= time.Hour
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkRunExceptions is P160.
func checkRunExceptions(tr *runsTrace) error {
	for _, r := range tr.results {
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		s := r.step
		act := tr.active(r.family, s)
		if r.Exception != nil {
			var e *runException
			for _, x := range tr.excs {
				if x.id == r.Exception.ID {
					e = x
				}
			}
			switch {
			case e == nil:
				return fmt.Errorf("unknown: %s matched exception %s that no person added", r.AnalysisID, r.Exception.ID)
			case e.family != r.family:
				return fmt.Errorf("identity: %s of family %d matched exception %s of family %d", r.AnalysisID, r.family, e.id, e.family)
			case e.revoked <= s:
				return fmt.Errorf("revoked: %s (step %d) matched exception %s, revoked at step %d", r.AnalysisID, s, e.id, e.revoked)
			case !tr.at[s].Before(e.expires):
				return fmt.Errorf("expired: %s (step %d at %s) matched exception %s, expired at %s", r.AnalysisID, s, tr.at[s].Format(time.TimeOnly), e.id, e.expires.Format(time.TimeOnly))
			}
		}
		if len(act) > 0 && (r.Exception == nil || r.Exception.ID != act[0].id || r.Decision != openrecall.DecisionKnownBenign) {
			return fmt.Errorf("liveness: %s (step %d) matched %+v (decision %s), want active exception %s (expires %s, %d active)",
				r.AnalysisID, s, r.Exception, r.Decision, act[0].id, act[0].expires.Format(time.TimeOnly), len(act))
		}
	}
	return nil
}

// checkRunMemory is P161.
func checkRunMemory(tr *runsTrace) error {
	byID := map[string]runResult{}
	for _, r := range tr.results {
		byID[r.AnalysisID] = r
	}
	for _, r := range tr.results {
		if r.Outcome != openrecall.ResultTriaged {
			continue
		}
		s := r.step
		for _, m := range r.Matches {
			if mem, gone := tr.forgotten(m.Incident.ID, s); gone {
				return fmt.Errorf("recalled: %s (step %d) recalled memory %s (%s), taken back at step %d", r.AnalysisID, s, mem.id, mem.decision, mem.forgot)
			}
		}
		for _, id := range r.Triage.Supporting {
			if mem, gone := tr.forgotten(id, s); gone {
				return fmt.Errorf("voted: memory %s, taken back at step %d, supports %s (step %d, bypassed %v)", id, mem.forgot, r.AnalysisID, s, r.Bypassed)
			}
		}
		if r.Grouped() && !byID[r.Group.HeadAnalysisID].Bypassed {
			continue // memory is not consulted for it
		}
		for _, v := range tr.live(r.family, s) {
			i := slices.IndexFunc(r.Matches, func(m openrecall.Match) bool { return m.Incident.ID == v.id })
			if i < 0 || r.Matches[i].Related || r.Matches[i].Score < 0.85 {
				return fmt.Errorf("liveness: memory %s (%s, step %d, expires %v) does not vote for %s (step %d): %d matches", v.id, v.decision, v.created, v.expires, r.AnalysisID, s, len(r.Matches))
			}
			if r.Triage.Decision == v.decision && !slices.Contains(r.Triage.Supporting, v.id) {
				return fmt.Errorf("liveness: memory %s agrees with %s's decision %s and is not among its supporting %v", v.id, r.AnalysisID, v.decision, r.Triage.Supporting)
			}
		}
	}
	return nil
}

// classifyRuns labels a plan for coverage, from the plan alone.
func classifyRuns(p gen.RunsPlan) []string {
	var labels []string
	batches, restartBetween, changed, excEnds, decided := false, false, false, false, false
	fired := map[int]int{} // family → the last step it fired in
	touched := map[int]int{}
	restarts := map[int]bool{}
	exc := map[int][]time.Time{} // family → when its exceptions expire
	t := gen.RunStart()
	for s, st := range p.Steps {
		t = t.Add(time.Duration(gen.RunGaps()[st.Gap]) * time.Minute)
		if s > 0 && !st.Restart {
			batches = true
		}
		if st.Restart {
			restarts[s] = true
		}
		for _, op := range st.Ops {
			switch op.Kind {
			case gen.OpRetain, gen.OpForget, gen.OpSupersede, gen.OpDecide:
				touched[op.Family] = s
				if _, ok := fired[op.Family]; ok && op.Kind == gen.OpDecide && slices.ContainsFunc(st.Firings, func(f gen.RunFiring) bool { return f.Family == op.Family }) {
					decided = true
				}
			case gen.OpException:
				exc[op.Family] = append(exc[op.Family], t.Add(time.Duration(gen.RunExceptionExpiries()[op.Expiry])*time.Minute))
			case gen.OpRevoke:
				if len(exc[op.Family]) > 0 && slices.ContainsFunc(st.Firings, func(f gen.RunFiring) bool { return f.Family == op.Family }) {
					excEnds = true
				}
			}
		}
		for _, f := range st.Firings {
			for _, end := range exc[f.Family] {
				if !t.Before(end) {
					excEnds = true
				}
			}
			if last, ok := fired[f.Family]; ok && last < s {
				if t, ok := touched[f.Family]; ok && t > last {
					changed = true
				}
				for x := last + 1; x <= s; x++ {
					if restarts[x] {
						restartBetween = true
					}
				}
			}
			fired[f.Family] = s
		}
	}
	if batches {
		labels = append(labels, "several batches in one run")
	}
	if restartBetween {
		labels = append(labels, "a restart between two firings of a family")
	}
	if changed {
		labels = append(labels, "memory changed between two firings of a family")
	}
	if excEnds {
		labels = append(labels, "an exception ends before a later firing")
	}
	if decided {
		labels = append(labels, "a group decided before a later firing of its alert")
	}
	return labels
}
