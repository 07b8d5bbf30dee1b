package property

import (
	"context"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/usecase"
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
	app := &usecase.App{Store: st, Fingerprinter: ex, Keys: fixedKeys{key}, Waiting: st, Now: now,
		Audit: func(ctx context.Context, es []openrecall.AuditEntry) error {
			_, err := st.AppendAudit(ctx, es, sealer.Seal)
			return err
		},
		ReadTrail: func(ctx context.Context, r usecase.TrailReader) error {
			return st.ReadTrail(ctx, memory.TrailReader(r))
		},
		ReadTrailPrefix: func(ctx context.Context, before time.Time, r usecase.TrailReader) error {
			return st.ReadTrailPrefix(ctx, before, memory.TrailReader(r))
		},
		Archives: st,
	}
	sink := memory.Sink{Store: st, Seal: sealer.Seal, SealCosts: sealer.SealCosts, Waits: usecase.WaitingFor}
	return &keyedDesk{st: st, ex: ex, app: app, sink: sink}, nil
}
