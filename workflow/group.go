package workflow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/routing"
)

// Grouping configures alert groups (DESIGN §6a): the firings of one alert
// within Window of each other are grouped under the first one, the head,
// which alone is triaged. The zero value groups nothing.
type Grouping struct {
	Enabled bool
	// Window is how far a firing may be from its group's last one, on the
	// alert's own time (else its arrival); 0 means
	// openrecall.DefaultGroupWindow.
	Window time.Duration
	// Store, when not nil, holds the groups of earlier runs: a run starts
	// from its open groups (serve keeps its groups across restarts), a
	// record it already assigned keeps its role (a run stopped before its
	// deliveries completed), and a group a person decided in the meantime
	// takes no more members. Without it a run groups within itself.
	Store GroupStore
}

// GroupStore is the storage of alert groups a run continues.
// memory.Store satisfies it.
type GroupStore interface {
	// OpenGroups returns the groups no person has decided, the latest one
	// per key.
	OpenGroups(ctx context.Context) ([]openrecall.Group, error)
	// Group returns the group id; an unknown id wraps openrecall.ErrNotFound.
	Group(ctx context.Context, id string) (openrecall.Group, error)
	// GroupOf returns the group an analysis was assigned to; none wraps
	// openrecall.ErrNotFound.
	GroupOf(ctx context.Context, analysisID string) (openrecall.GroupMember, error)
}

// GroupClaimer is a GroupStore that several processes share (DESIGN §13,
// memory.GroupScope): a run opens each group by a claim under the lock of
// its key, and finds the groups other runs opened since it started, so a
// storm spread over N processes is one group. Without it a run's groups
// are its own.
type GroupClaimer interface {
	GroupStore
	// GroupClaimSeq returns the seq of the last claim stored.
	GroupClaimSeq(ctx context.Context) (int64, error)
	// GroupClaims returns the claims of key made after since, oldest
	// first.
	GroupClaims(ctx context.Context, key openrecall.GroupKey, since int64) ([]openrecall.GroupClaim, error)
	// ClaimGroup stores claim c under the lock of its key unless join,
	// given the claims GroupClaims would return, says the firing joins
	// one of them; opened reports whether c was stored (or had been).
	ClaimGroup(ctx context.Context, c openrecall.GroupClaim, since int64, join func(others []openrecall.GroupClaim) bool) (opened bool, others []openrecall.GroupClaim, err error)
}

// foreignHeadWait bounds how long a firing waits for the head of a group
// another process opened to be stored (its result): longer than a strong
// model's answer takes, shorter than a lease (memory.DefaultLease), after
// which a dead process's delivery passes to another, since the firing
// holds its run's grouping turn meanwhile. A firing that waited that long
// is triaged on its own.
const foreignHeadWait = 30 * time.Second

// foreignHeadPoll is how often a waiting firing looks for that head.
const foreignHeadPoll = 20 * time.Millisecond

// GroupRouter is the part of the router group members take: the grouped
// route step. routing.Router satisfies it.
type GroupRouter interface {
	Grouped(in routing.Input, head openrecall.GroupHead, why string) routing.Output
}

// openGroup is a group of the run that may take members. head is set, and
// done closed, once the head's result is known.
type openGroup struct {
	id           string
	key          openrecall.GroupKey
	headSeverity openrecall.Severity
	last         time.Time
	head         openrecall.GroupHead
	done         chan struct{}
	// foreign marks a group another process opened (GroupClaimer);
	// known is set once its head is, and done closed, by the firing whose
	// turn it is.
	foreign, known bool
}

// grouper assigns records to groups in input order: only the record whose
// turn it is (gate) reads or changes open, which holds the open groups of
// each key, oldest first, at most maxOpenPerKey of them, and no key without
// one. held counts the groups in open; swept is held after the last sweep.
type grouper struct {
	window time.Duration
	store  GroupStore
	gate   *turnstile
	now    func() time.Time
	open   map[openrecall.GroupKey][]*openGroup
	// newest is the time of the run's newest firing, a time after now
	// counting as now (so one firing from a clock far ahead cannot expire
	// every group).
	newest time.Time
	held   int
	swept  int
	// claims is the store when several processes share it; owner names
	// this run's claims and since is the last claim made before it
	// started.
	claims GroupClaimer
	owner  string
	since  int64
}

// maxOpenPerKey bounds the groups of one key a firing may still join: a
// key opens another group only for a more severe firing, or one out of
// the window of the others (a late or out-of-order one).
const maxOpenPerKey = 64

// forgetAfter is how many windows behind the newest firing an open group
// expires: a day at the default window, far more than the clocks of one
// storm's senders disagree by. An expired group takes no more members:
// only a firing out of order by that much could still have joined it (it
// opens a group of its own instead), and a long run keeps no more than the
// groups that may still grow, whatever the number of keys it sees.
const forgetAfter = 24

// minSweep is the least number of held groups at which add sweeps out the
// expired ones; above it a sweep runs once the held groups have doubled
// since the last one, so sweeping costs O(1) per group added and a run
// holds at most about twice the groups that have not expired.
const minSweep = 1024

// saw records the time t of a firing about to be grouped.
func (g *grouper) saw(t time.Time) {
	if now := g.now(); t.After(now) {
		t = now
	}
	if t.After(g.newest) {
		g.newest = t
	}
}

// expired reports whether og's last firing is more than forgetAfter
// windows behind the run's newest firing.
func (g *grouper) expired(og *openGroup) bool {
	return og.last.Before(g.newest.Add(-forgetAfter * g.window))
}

// add makes og the newest open group of its key, and forgets the groups
// of the key that expired or whose last firing is more than forgetAfter
// windows before og's (og may be dated after now, where expiry does not
// reach); every so often it sweeps the expired groups of every key.
func (g *grouper) add(og *openGroup) {
	old := g.open[og.key]
	list := old[:0:0]
	for _, x := range old {
		if !x.last.Before(og.last.Add(-forgetAfter*g.window)) && !g.expired(x) {
			list = append(list, x)
		}
	}
	list = append(list, og)
	if len(list) > maxOpenPerKey {
		list = list[len(list)-maxOpenPerKey:]
	}
	g.open[og.key] = list
	g.held += len(list) - len(old)
	if g.held >= max(2*g.swept, minSweep) {
		g.sweep()
	}
}

// sweep forgets the expired groups of every key, and the keys left with
// none.
func (g *grouper) sweep() {
	for key, list := range g.open {
		kept := list[:0:0]
		for _, x := range list {
			if !g.expired(x) {
				kept = append(kept, x)
			}
		}
		g.held -= len(list) - len(kept)
		if len(kept) == 0 {
			delete(g.open, key)
			continue
		}
		if len(kept) < len(list) {
			g.open[key] = kept
		}
	}
	g.swept = g.held
}

// drop forgets open group og.
func (g *grouper) drop(og *openGroup) {
	list := g.open[og.key]
	for i, x := range list {
		if x == og {
			g.held--
			if len(list) == 1 {
				delete(g.open, og.key)
				return
			}
			g.open[og.key] = slices.Delete(slices.Clone(list), i, i+1)
			return
		}
	}
}

// newGrouper returns the grouper of one run, started from the store's open
// groups; nil when grouping is off.
func (w *Workflow) newGrouper(ctx context.Context) (*grouper, error) {
	g := w.cfg.Grouping
	if !g.Enabled {
		return nil, nil
	}
	gr := &grouper{window: g.Window, store: g.Store, gate: newTurnstile(), now: w.now, open: map[openrecall.GroupKey][]*openGroup{}}
	if gr.window <= 0 {
		gr.window = openrecall.DefaultGroupWindow
	}
	if gr.store == nil {
		return gr, nil
	}
	var err error
	if c, ok := gr.store.(GroupClaimer); ok {
		// The seq first: a group opened after it is found by its claim,
		// before it by OpenGroups.
		if gr.since, err = c.GroupClaimSeq(ctx); err != nil {
			return nil, fmt.Errorf("group claims: %w", err)
		}
		var b [12]byte
		_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
		gr.claims, gr.owner = c, hex.EncodeToString(b[:])
	}
	stored, err := gr.store.OpenGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("open groups: %w", err)
	}
	for _, sg := range stored {
		gr.saw(sg.LastAt)
	}
	for _, sg := range stored {
		if og := storedGroup(sg); !gr.expired(og) {
			gr.add(og)
		}
	}
	return gr, nil
}

// storedGroup is a stored group as an open group whose head is known.
func storedGroup(sg openrecall.Group) *openGroup {
	og := &openGroup{id: sg.ID, key: sg.Key, headSeverity: sg.HeadSeverity, last: sg.LastAt, head: sg.Head, done: make(chan struct{})}
	close(og.done)
	return og
}

// joinable returns the open group a firing of key at time t and severity
// sev joins, or nil: of the groups of its key that take it — not expired,
// within the window of their last firing, the firing not more severe than
// their head, no person having decided them — the one with the least severe head, the
// newest among equals, so the firings after a severity rise go on joining
// the storm they belong to and the rise stays a group of its own.
func (g *grouper) joinable(ctx context.Context, key openrecall.GroupKey, sev openrecall.Severity, t time.Time) (*openGroup, error) {
	list := g.open[key]
	var best *openGroup
	for i := len(list) - 1; i >= 0; i-- {
		og := list[i]
		if g.expired(og) || !openrecall.JoinsGroup(sev, og.headSeverity, t, og.last, g.window) {
			continue
		}
		if best != nil && !openrecall.LessSevereHead(og.headSeverity, best.headSeverity) {
			continue
		}
		if g.store != nil {
			sg, err := g.store.Group(ctx, og.id)
			switch {
			case errors.Is(err, openrecall.ErrNotFound):
			case err != nil:
				return nil, fmt.Errorf("group %s: %w", og.id, err)
			case sg.Decided:
				g.drop(og)
				continue
			}
		}
		best = og
	}
	return best, nil
}

// refresh merges into the open groups of key those other processes opened
// since the run started (GroupClaimer), and what the store knows of those
// held already: their last firing, another process's head once stored.
func (g *grouper) refresh(ctx context.Context, key openrecall.GroupKey) error {
	if g.claims == nil {
		return nil
	}
	others, err := g.claims.GroupClaims(ctx, key, g.since)
	if err != nil {
		return fmt.Errorf("group claims: %w", err)
	}
	g.merge(key, others)
	return nil
}

// merge merges claims into the open groups of key: a group held already
// takes the later last firing (another process's firings may have joined
// it) and, another process's, its head once stored; an undecided group
// of another process not held, unless expired, becomes the newest open
// group of its key. This run's own groups it no longer holds stay gone.
func (g *grouper) merge(key openrecall.GroupKey, claims []openrecall.GroupClaim) {
	for _, c := range claims {
		var og *openGroup
		for _, x := range g.open[key] {
			if x.id == c.ID {
				og = x
			}
		}
		if og == nil {
			if c.Decided || c.Owner == g.owner {
				continue
			}
			og = &openGroup{id: c.ID, key: key, headSeverity: c.HeadSeverity, last: c.Last, done: make(chan struct{}), foreign: true}
			if g.expired(og) {
				continue
			}
			g.add(og)
		}
		if storable(c.Last) {
			og.last = later(og.last, c.Last)
		}
		if og.foreign && !og.known && c.Stored {
			og.head, og.known = c.Head, true
			close(og.done)
		}
	}
}

// storable reports whether t is a time the store keeps as it is: it
// clamps a sender's time outside the range of int64 nanoseconds, and a
// clamped time says nothing of a group's last firing.
func storable(t time.Time) bool {
	return t.After(time.Unix(0, math.MinInt64)) && t.Before(time.Unix(0, math.MaxInt64))
}

// forgetOwn forgets the open group of key that the firing analysisID
// heads, held as another process's: that process claimed it for the
// firing and stopped or died before storing the firing's result (or stored
// only the group, fenced out), and this run now holds the delivery. The
// firing then finds its claim (ClaimGroup) and heads the group again, as
// it would never join it as a member of itself. Only with a shared store.
func (g *grouper) forgetOwn(key openrecall.GroupKey, analysisID string) {
	if g.claims == nil {
		return
	}
	id := openrecall.GroupID(analysisID)
	for _, og := range g.open[key] {
		if og.id == id {
			g.drop(og)
			return
		}
	}
}

// pick returns the open group of key a firing of severity sev at time t
// joins, as joinable chooses, after merging claims of other processes; it
// reads no store (it runs inside ClaimGroup's transaction) and relies on
// joinable having dropped the decided groups held before.
func (g *grouper) pick(key openrecall.GroupKey, claims []openrecall.GroupClaim, sev openrecall.Severity, t time.Time) *openGroup {
	g.merge(key, claims)
	var best *openGroup
	list := g.open[key]
	for i := len(list) - 1; i >= 0; i-- {
		og := list[i]
		if g.expired(og) || !openrecall.JoinsGroup(sev, og.headSeverity, t, og.last, g.window) {
			continue
		}
		if best == nil || openrecall.LessSevereHead(og.headSeverity, best.headSeverity) {
			best = og
		}
	}
	return best
}

// claim opens the group a firing heads in the store shared with other
// processes (GroupClaimer), under the lock of its key, unless a group one
// of them opened meanwhile takes it: that group is returned then. Without
// a shared store it opens the group. join false opens it whatever the
// store holds (a firing whose group's bypass no longer holds).
func (g *grouper) claim(ctx context.Context, key openrecall.GroupKey, analysisID string, sev openrecall.Severity, t time.Time, join bool) (*openGroup, error) {
	if g.claims == nil {
		return nil, nil
	}
	var joined *openGroup
	c := openrecall.GroupClaim{ID: openrecall.GroupID(analysisID), Key: key, Owner: g.owner, HeadSeverity: sev, Last: t}
	opened, _, err := g.claims.ClaimGroup(ctx, c, g.since, func(others []openrecall.GroupClaim) bool {
		if !join {
			return false
		}
		joined = g.pick(key, others, sev, t)
		return joined != nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim group: %w", err)
	}
	if opened {
		return nil, nil
	}
	return joined, nil
}

// await waits for the outcome of og's head: known once the head's worker
// finished it, for a group of this run; once the store holds the head's
// result, for another process's (polled for up to foreignHeadWait, after
// which og is dropped and false returned). False too when ctx is done.
func (g *grouper) await(ctx context.Context, og *openGroup) bool {
	if og.foreign && !og.known {
		deadline := time.NewTimer(foreignHeadWait)
		defer deadline.Stop()
		tick := time.NewTicker(foreignHeadPoll)
		defer tick.Stop()
		for !og.known {
			sg, err := g.store.Group(ctx, og.id)
			switch {
			case err == nil:
				og.head, og.known = sg.Head, true
				og.last = later(og.last, sg.LastAt)
				close(og.done)
				continue
			case !errors.Is(err, openrecall.ErrNotFound):
				return false
			}
			select {
			case <-tick.C:
			case <-deadline.C:
				g.drop(og)
				return false
			case <-ctx.Done():
				return false
			}
		}
	}
	select {
	case <-og.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// prior returns the group a record was assigned to by an earlier run that
// stopped before it completed, or nil.
func (g *grouper) prior(ctx context.Context, analysisID string) (*openGroup, bool, error) {
	if g.store == nil {
		return nil, false, nil
	}
	m, err := g.store.GroupOf(ctx, analysisID)
	if errors.Is(err, openrecall.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("group of %s: %w", analysisID, err)
	}
	if m.Role == openrecall.GroupRoleHead {
		return nil, true, nil
	}
	sg, err := g.store.Group(ctx, m.GroupID)
	if err != nil {
		return nil, false, fmt.Errorf("group %s: %w", m.GroupID, err)
	}
	for _, og := range g.open[sg.Key] {
		if og.id == sg.ID {
			return og, false, nil
		}
	}
	return storedGroup(sg), false, nil
}

// arrival returns the time a record is grouped on: the alert's own time,
// else when it was received, else now.
func arrival(rec intake.Record, now func() time.Time) time.Time {
	switch {
	case !rec.Alert.Timestamp.IsZero():
		return rec.Alert.Timestamp
	case !rec.Received.IsZero():
		return rec.Received
	}
	return now()
}

// sameSupport reports whether a re-run of the guard still rests on the
// memories that supported the head's bypass: a memory forgotten, expired or
// added in between ends the bypass.
func sameSupport(head openrecall.GroupHead, tr openrecall.TriageResult) bool {
	return tr.Decision == head.Decision && slices.Equal(tr.Supporting, head.Supporting)
}
