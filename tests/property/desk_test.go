package property

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
	"github.com/openrecall/openrecall/workflow"
)

// keyedDesk is a real SQLite memory bound to a fixed audit key, with the
// embedded rules, the application layer and the workflow's sink over it,
// wired as serve wires them: what the properties of what waits for a
// person (P100), of retention (P101) and of archiving (P102) run against.
type keyedDesk struct {
	st   *memory.Store
	ex   *fingerprint.Extractor
	app  *usecase.App
	sink memory.Sink
	// wiring is what the desk's composition roots share: the
	// fingerprinter, the trail's sealer and key, the clock.
	cfg    config.Config
	now    func() time.Time
	wiring []compose.Option
}

// root is the product's wiring over the desk's memory (internal/compose),
// with the differences opts names.
func (d *keyedDesk) root(opts ...compose.Option) *compose.Root {
	return compose.Open(d.cfg, d.st, d.now, nil, append(slices.Clone(d.wiring), opts...)...)
}

// fixedKeys hands out one audit key whatever the trail's state.
type fixedKeys struct{ key audit.Key }

func (k fixedKeys) Key(openrecall.TrailState, bool) (audit.Key, error) { return k.key, nil }
func (fixedKeys) Explain(err error) error                              { return err }

// openKeyedDesk opens the memory at path on the clock now under key; the
// caller closes d.st.
func openKeyedDesk(ctx context.Context, path string, key audit.Key, now func() time.Time) (*keyedDesk, error) {
	st, err := memory.Open(ctx, path, memory.Options{Now: now})
	if err != nil {
		return nil, err
	}
	if _, err := st.BindAuditKey(ctx, key.ID(), func(through, costs int64) string {
		return audit.BoundaryMAC(key, through, costs)
	}); err != nil {
		_ = st.Close() // the bind error says what went wrong
		return nil, err
	}
	ex, err := fingerprint.New(nil)
	if err != nil {
		_ = st.Close() // the rules error says what went wrong
		return nil, err
	}
	sealer := audit.NewSealer(key)
	// Rows are sealed and bound to the chain as serve seals them.
	if err := st.SealRows(ctx, memory.RowSealer{KeyID: key.ID(), Seal: sealer.Seal, Row: sealer.RowSeal, Sealing: sealer.SealingMAC}); err != nil {
		_ = st.Close() // the sealing error says what went wrong
		return nil, err
	}
	cfg, err := config.Default()
	if err != nil {
		_ = st.Close() // the configuration error says what went wrong
		return nil, err
	}
	d := &keyedDesk{st: st, ex: ex, cfg: cfg, now: now,
		wiring: []compose.Option{compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(sealer)), compose.Keys(fixedKeys{key})}}
	d.app = d.root().UseCases
	if d.sink, err = d.root().Sink(ctx); err != nil {
		_ = st.Close() // the sink error says what went wrong
		return nil, err
	}
	return d, nil
}

// inKeyedDesk runs f on a keyed desk (p90Key, fixedNow) in a fresh
// directory named after prefix, and removes it after; a setup failure is
// reported as "setup: …".
func inKeyedDesk(ctx context.Context, prefix string, f func(d *keyedDesk) error) error {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	loc, drop, err := storeLocation(dir)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer drop()
	d, err := openKeyedDesk(ctx, loc, p90Key, fixedNow)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	defer func() { _ = d.st.Close() }()
	return f(d)
}

// hourlyDesk is a keyed desk in a directory of its own (dir, where a case
// may write files too), at location loc, on a clock a case moves by the
// hour from base: what the properties of retention (P101), archiving
// (P102) and the archive directory (P103) run against.
type hourlyDesk struct {
	*keyedDesk
	dir, loc string
	base     time.Time
	clock    *pruneClock
	drop     func()
}

// openHourlyDesk opens one under a new directory named for name; close it.
func openHourlyDesk(ctx context.Context, name string) (*hourlyDesk, error) {
	dir, err := os.MkdirTemp("", "openrecall-pbt-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("setup: %v", err)
	}
	h := &hourlyDesk{dir: dir, base: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	h.clock = &pruneClock{t: h.base}
	loc, drop, err := storeLocation(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("setup: %v", err)
	}
	h.loc, h.drop = loc, drop
	if h.keyedDesk, err = openKeyedDesk(ctx, loc, p101Key, h.clock.now); err != nil {
		drop()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("setup: %v", err)
	}
	return h, nil
}

// close closes the store and removes its location and directory.
func (h *hourlyDesk) close() {
	_ = h.st.Close()
	h.drop()
	_ = os.RemoveAll(h.dir)
}

// productRoot is the product's wiring (internal/compose) over st on the
// default configuration, fingerprinting with ex, sealing the trail with
// trailKey, on the clock now, with the differences opts names: what the
// properties that run the pipeline over a real memory run against.
func productRoot(st *memory.Store, ex workflow.Fingerprinter, now func() time.Time, opts ...compose.Option) (*compose.Root, error) {
	cfg, err := config.Default()
	if err != nil {
		return nil, fmt.Errorf("setup: config: %v", err)
	}
	base := []compose.Option{compose.Fingerprinter(ex), compose.Sealer(compose.FixedSealer(audit.NewSealer(trailKey)))}
	return compose.Open(cfg, st, now, nil, append(base, opts...)...), nil
}
