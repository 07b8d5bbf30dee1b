package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/notify"
)

// Digests is what the digest job and the dispatcher read and write of the
// store for the receivers' digests (DESIGN §12b). memory.Store satisfies
// it.
type Digests interface {
	// ClosedBetween returns what openrecall closed without a person among
	// the analyses completed in [from, to), with up to links analysis ids
	// per identity.
	ClosedBetween(ctx context.Context, from, to time.Time, links int) (openrecall.ClosedWindow, error)
	// HasDigest returns which of receivers have the digest id already.
	HasDigest(ctx context.Context, id string, receivers []string) (map[string]bool, error)
	// AddDigest writes the digest intent id with key to each of receivers
	// that has none yet, in one transaction, and returns how many it
	// wrote.
	AddDigest(ctx context.Context, id, key string, receivers []string) (int, error)
}

// The digest job's defaults.
const (
	// defaultDigestSettle is how long after a window ends its digest is
	// written: a completion stamped before the end (by the Store's clock)
	// may still be committing, or come from a process whose clock is a
	// little behind.
	defaultDigestSettle = time.Minute
	// defaultDigestPoll is how often the job looks for windows that
	// ended.
	defaultDigestPoll = 15 * time.Second
	// digestCatchUp is how many windows back the job looks at its start
	// (the latest that ended included): a window that ended while no
	// process ran is digested if it ended at most that many windows ago.
	digestCatchUp = 3
)

// DigestKey is the key of the digest intent id: its own episode, so no
// digest waits for another.
func DigestKey(id string) string { return notify.KeyPrefix + id }

// checkDigests refuses digest settings the dispatcher cannot honour.
func checkDigests(cfg DispatchConfig) error {
	if len(cfg.DigestEvery) == 0 {
		return nil
	}
	if cfg.Digests == nil {
		return fmt.Errorf("dispatcher: digests are configured without a store to read them: %w", openrecall.ErrInvalid)
	}
	names := map[string]string{}
	for _, r := range cfg.Receivers {
		if r != nil {
			names[r.Name()] = r.Type()
		}
	}
	for name, every := range cfg.DigestEvery {
		typ, ok := names[name]
		switch {
		case !ok:
			return fmt.Errorf("dispatcher: a digest for %s, which is not a receiver: %w", name, openrecall.ErrInvalid)
		case !notify.TakesDigest(typ):
			return fmt.Errorf("dispatcher: a digest for %s, a %s receiver, which pages: %w", name, typ, openrecall.ErrInvalid)
		case every < notify.MinDigestEvery || every > notify.MaxDigestEvery:
			return fmt.Errorf("dispatcher: digest of %s every %s: want %s to %s: %w", name, every, notify.MinDigestEvery, notify.MaxDigestEvery, openrecall.ErrInvalid)
		}
	}
	return nil
}

// digester writes each receiver's digest intents, once per window that
// ended (DESIGN §12b). It is the dispatcher's, run by Run beside the
// lanes.
type digester struct {
	d *Dispatcher
	// done is, per receiver, the end of the latest window the job wrote
	// or found written or empty.
	done map[string]time.Time
}

// digests runs the digest job until halt: a pass at start, then every
// DigestPoll.
func (d *Dispatcher) digests(ctx context.Context, halt <-chan struct{}) {
	if len(d.cfg.DigestEvery) == 0 {
		return
	}
	g := &digester{d: d, done: map[string]time.Time{}}
	t := time.NewTicker(d.cfg.DigestPoll)
	defer t.Stop()
	for {
		_, _ = g.pass(ctx) // logged there; the window is tried again at the next pass
		select {
		case <-halt:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DigestPass writes the digest intents of the windows that ended by now
// (less the settle time) and were not written yet, as the running job
// does at each look, and returns how many intents it wrote: a test's or
// a command's single pass. It remembers nothing between calls: each
// looks back digestCatchUp windows.
func (d *Dispatcher) DigestPass(ctx context.Context) (int, error) {
	g := &digester{d: d, done: map[string]time.Time{}}
	return g.pass(ctx)
}

// window is one digest window and the receivers it is due to.
type window struct {
	from, to  time.Time
	receivers []string
}

// pass writes the intents of every window due, and returns how many it
// wrote and the first error (logged; the window is tried again at the
// next pass).
func (g *digester) pass(ctx context.Context) (int, error) {
	now := g.d.now().Add(-g.d.cfg.DigestSettle)
	due := map[string]*window{}
	for name, every := range g.d.cfg.DigestEvery {
		_, end := openrecall.DigestWindow(now, every)
		first := end.Add(-time.Duration(digestCatchUp-1) * every)
		if last, ok := g.done[name]; ok && last.Add(every).After(first) {
			first = last.Add(every)
		}
		for e := first; !e.After(end); e = e.Add(every) {
			id := openrecall.DigestID(e.Add(-every), e)
			w := due[id]
			if w == nil {
				w = &window{from: e.Add(-every), to: e}
				due[id] = w
			}
			w.receivers = append(w.receivers, name)
		}
	}
	ids := make([]string, 0, len(due))
	for id := range due {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return due[a].to.Compare(due[b].to) })
	wrote := 0
	var first error
	for _, id := range ids {
		w := due[id]
		slices.Sort(w.receivers)
		n, err := g.write(ctx, id, w)
		wrote += n
		if err != nil {
			if ctx.Err() != nil {
				return wrote, err
			}
			g.d.log.Error("write a digest; will retry", zap.String("digest", id), zap.Strings("receivers", w.receivers), zap.Error(err))
			if first == nil {
				first = err
			}
			continue
		}
		for _, r := range w.receivers {
			if w.to.After(g.done[r]) {
				g.done[r] = w.to
			}
		}
	}
	return wrote, first
}

// write writes window w's digest intent to its receivers that have none,
// when the window closed anything without a person, and returns how many
// it wrote. An empty window sends nothing.
func (g *digester) write(ctx context.Context, id string, w *window) (int, error) {
	d := g.d
	has, err := d.cfg.Digests.HasDigest(ctx, id, w.receivers)
	if err != nil {
		return 0, err
	}
	var missing []string
	for _, r := range w.receivers {
		if !has[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return 0, nil
	}
	cw, err := d.cfg.Digests.ClosedBetween(ctx, w.from, w.to, 0)
	if err != nil {
		return 0, err
	}
	if cw.Closed == 0 {
		d.log.Debug("digest window closed nothing without a person; nothing to send", zap.String("digest", id))
		return 0, nil
	}
	n, err := d.cfg.Digests.AddDigest(ctx, id, DigestKey(id), missing)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		d.log.Info("digest written", zap.String("digest", id), zap.Int("closed", cw.Closed), zap.Strings("receivers", missing), zap.Int("written", n))
		for _, l := range d.lanes {
			if slices.Contains(missing, l.r.Name()) {
				l.poke()
			}
		}
	}
	return n, nil
}

// digestNotification fills n, the notification of digest intent in, with
// its window's digest, read now: the counts are those of the analyses
// stored in the window when it is sent (the job waited DigestSettle after
// the window's end). A window that no longer holds anything closed (its
// results pruned) or an id that is not a digest's cannot be made.
func (d *Dispatcher) digestNotification(ctx context.Context, in openrecall.OutboxIntent, n notify.Notification) (notify.Notification, error) {
	from, to, err := openrecall.ParseDigestID(in.AnalysisID)
	if err != nil {
		return n, &unreadableError{err.Error()}
	}
	if d.cfg.Digests == nil {
		return n, &unreadableError{"this process reads no digests (no digest store configured)"}
	}
	cw, err := d.cfg.Digests.ClosedBetween(ctx, from, to, notify.DigestLinks)
	if err != nil {
		return n, fmt.Errorf("read digest %s: %w", in.AnalysisID, err)
	}
	if cw.Closed == 0 {
		return n, &unreadableError{fmt.Sprintf("digest %s: its window holds no analysis closed without a person any more (pruned after the retention?)", in.AnalysisID)}
	}
	n.ReviewURL = ""
	n.Digest = notify.DigestOf(cw, d.cfg.ReviewURL)
	return n, nil
}
