package fingerprint

import (
	"errors"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/rulecorpus"
	"github.com/openrecall/openrecall/internal/testenv"
)

// ruleCorpusAlerts renders n firings of the rule corpus (firing i of rule i
// mod the rule count, as make bench-analyze's queue) as openrecall alerts
// through intake, as analyze reads them. A missing corpus file skips, or
// fails in CI.
func ruleCorpusAlerts(tb testing.TB, n int) []openrecall.Alert {
	tb.Helper()
	rules, err := rulecorpus.LoadNear(".")
	if errors.Is(err, rulecorpus.ErrAbsent) {
		testenv.Missing(tb, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]openrecall.Alert, 0, n)
	for i := range n {
		body, err := rulecorpus.Webhook(rulecorpus.Alert(rules[i%len(rules)], rulecorpus.Firing{N: i}))
		if err != nil {
			tb.Fatal(err)
		}
		recs, err := intake.ParseBytes(body, intake.Options{})
		if err != nil || len(recs) != 1 || recs[0].Err != nil {
			tb.Fatalf("firing %d: %d records, %v", i, len(recs), err)
		}
		out = append(out, recs[0].Alert)
	}
	return out
}
