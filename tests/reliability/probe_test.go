package reliability

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall/internal/probe"
)

// TestProbeFamilies runs a fixed tenth of scripts/probe's families (issue
// 33) against the built binary: bad credentials on every guarded route,
// hostile bodies on every ingest and write endpoint, field mutations of
// every sender fixture, then the drain. Any failure fails the test; the
// whole run is `go run ./scripts/probe`.
func TestProbeFamilies(t *testing.T) {
	needBinary(t)
	var log strings.Builder
	rep, err := probe.Run(context.Background(), probe.Options{
		Bin: bin, Dir: t.TempDir(), Senders: "../../intake/testdata/senders", Sample: 10, Drain: 3 * time.Minute, Log: &log,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out strings.Builder
	rep.Print(&out, 30)
	t.Log("\n" + out.String())
	for _, f := range rep.Families {
		if f.Probes == 0 {
			t.Errorf("family %s sent no probe", f.Name)
		}
	}
	if n := rep.Failed(); n > 0 {
		t.Errorf("%d probe failures (see the table above)", n)
	}
}
