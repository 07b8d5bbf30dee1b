package main

import (
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
)

// TestAnalyzeNoCacheGivesTheSameResults holds analyze's hidden --no-cache
// (make bench-analyze's cache-off rows) to the cached run: the same results
// on the same seeded memory, no fingerprint cache hit and the recall cache
// off.
func TestAnalyzeNoCacheGivesTheSameResults(t *testing.T) {
	var runs [][]openrecall.Result
	for _, flags := range [][]string{nil, {"--no-cache"}} {
		db := seededDB(t)
		args := append([]string{"--db", db, "analyze", "--output", "jsonl", "--cache-stats"}, flags...)
		r := runCLI(t, "", append(args, "../../examples/queue.jsonl")...)
		if r.code != exitOK {
			t.Fatalf("analyze %v: exit %d\n%s", flags, r.code, r.stderr)
		}
		cached := len(flags) == 0
		if got := strings.Contains(r.stderr, "recall cache off"); got == cached {
			t.Errorf("analyze %v: recall cache off = %t, want %t:\n%s", flags, got, !cached, r.stderr)
		}
		// 92 lookups: the queue's three alerts whose source names a
		// security product (falco, wazuh) are detections, extracted
		// uncached (DESIGN §4).
		if got := strings.Contains(r.stderr, "fingerprint cache 0/92 hits"); got == cached {
			t.Errorf("analyze %v: no fingerprint cache hit = %t, want %t:\n%s", flags, got, !cached, r.stderr)
		}
		runs = append(runs, decodeResults(t, r.stdout))
	}
	if err := openrecall.EquivalentRuns(runs[0], runs[1]); err != nil {
		t.Errorf("--no-cache changed the results: %v", err)
	}
}
