package workflow_test

import (
	"context"
	"testing"

	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/config"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
)

// productSink is the results' sink over st as the product wires it
// (internal/compose), sealing the trail with sealer.
func productSink(tb testing.TB, st *memory.Store, sealer audit.Sealer) memory.Sink {
	tb.Helper()
	cfg, err := config.Default()
	if err != nil {
		tb.Fatal(err)
	}
	sink, err := compose.Open(cfg, st, fixedNow, nil, compose.Sealer(compose.FixedSealer(sealer))).Sink(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return sink
}
