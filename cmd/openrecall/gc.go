package main

import (
	"math"
	"os"
	"runtime/debug"
)

// A batch run (analyze) keeps a small live heap (bounded caches, one batch
// of results in flight) and allocates fast, so at Go's default GOGC=100 the
// collector runs many times a second and took about a tenth of analyze's
// CPU on the corpus benchmark. It runs with batchGCPercent instead, under a
// soft memory limit that makes the collector work harder before the heap
// passes it; GOGC and GOMEMLIMIT in the environment win over both.
const (
	batchGCPercent   = 400
	batchMemoryLimit = 512 << 20
)

// batchGC applies the batch collector settings and returns the function
// that restores the previous ones.
func batchGC() (restore func()) {
	gc, limit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		gc = debug.SetGCPercent(batchGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && debug.SetMemoryLimit(-1) == math.MaxInt64 {
		limit = debug.SetMemoryLimit(batchMemoryLimit)
	}
	return func() {
		if gc != -2 {
			debug.SetGCPercent(gc)
		}
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}
