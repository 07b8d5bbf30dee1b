package storetest

import (
	"context"
	"testing"

	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/fingerprint"
	"github.com/openrecall/openrecall/memory"
)

// Keyed binds key to st's audit trail and seals its rows with it, as the
// commands do before they write, and returns the sealer: a test store is
// keyed and sealed like the product's.
func Keyed(t testing.TB, st *memory.Store, key audit.Key) audit.Sealer {
	t.Helper()
	ctx := context.Background()
	if _, err := st.BindAuditKey(ctx, key.ID(), func(through, costs int64) string {
		return audit.BoundaryMAC(key, through, costs)
	}); err != nil {
		t.Fatal(err)
	}
	sealer := audit.NewSealer(key)
	if err := st.SealRows(ctx, memory.RowSealer{KeyID: key.ID(), Seal: sealer.Seal, Row: sealer.RowSeal, Sealing: sealer.SealingMAC}); err != nil {
		t.Fatal(err)
	}
	return sealer
}

// Fingerprinter returns the product's fingerprinter on its default rules.
func Fingerprinter(t testing.TB) *fingerprint.Extractor {
	t.Helper()
	rules, err := fingerprint.DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	ex, err := fingerprint.New(rules)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}
