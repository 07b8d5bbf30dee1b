package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/workflow"
)

// senderFixture returns one sender fixture (intake/testdata/senders), each
// old string replaced by its new one; an empty new string keeps the old.
func senderFixture(t *testing.T, sender, name, old, replacement string) string {
	t.Helper()
	body, err := os.ReadFile("../intake/testdata/senders/" + sender + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if replacement == "" {
		return string(body)
	}
	return strings.ReplaceAll(string(body), old, replacement)
}

// readSenderFixture reads one sender fixture through the real intake.
func readSenderFixture(t *testing.T, sender, name, old, replacement string) openrecall.Alert {
	t.Helper()
	recs, err := intake.ParseBytes([]byte(senderFixture(t, sender, name, old, replacement)), intake.Options{})
	if err != nil || len(recs) != 1 || recs[0].Err != nil {
		t.Fatalf("%s/%s: %v %+v", sender, name, err, recs)
	}
	return recs[0].Alert
}

// TestNewRelicTwoChecksOfOneEntity is the case that once bypassed a
// critical alert: New Relic's "High CPU" and "Low Storage" conditions on
// one entity read as one identity (the quoted condition name was masked)
// with an unknown severity, so six benign High CPU decisions vouched for a
// critical Low Storage alert. Now the condition is the rule, exactly as
// sent: the High CPU firings are vouched for and the Low Storage alert goes
// to the strong model.
func TestNewRelicTwoChecksOfOneEntity(t *testing.T) {
	p := newPipeline(t)
	const issue = "6f1d2c3b-8a9e-4b7c-9d10-2e3f4a5b6c01"
	var taught []openrecall.Alert
	for i := range 6 {
		taught = append(taught, readSenderFixture(t, "newrelic", "high-cpu-main-app.json", issue, fmt.Sprintf("6f1d2c3b-0000-4b7c-9d10-00000000000%d", i)))
	}
	cpu := readSenderFixture(t, "newrelic", "high-cpu-main-app.json", issue, "6f1d2c3b-0000-4b7c-9d10-000000000099")
	storage := readSenderFixture(t, "newrelic", "low-storage-main-app.json", "", "")
	if cpu.Severity != openrecall.SeverityCritical || storage.Severity != openrecall.SeverityCritical {
		t.Fatalf("severities %q and %q: New Relic's CRITICAL must read critical", cpu.Severity, storage.Severity)
	}
	cpuID, storageID := p.ex.Identify(cpu), p.ex.Identify(storage)
	if cpuID == storageID || cpuID.Rule != "High CPU" || storageID.Rule != "Low Storage" {
		t.Fatalf("identities %q and %q: want the two conditions, exactly as sent", cpuID, storageID)
	}
	p.retainAll(t, taught)
	// The seventh High CPU firing and the Low Storage alert, as New Relic
	// posts them, through the real workflow.
	var queue bytes.Buffer
	for _, f := range [][2]string{{"high-cpu-main-app.json", "6f1d2c3b-0000-4b7c-9d10-000000000099"}, {"low-storage-main-app.json", ""}} {
		if err := json.Compact(&queue, []byte(senderFixture(t, "newrelic", f[0], issue, f[1]))); err != nil {
			t.Fatal(err)
		}
		queue.WriteByte('\n')
	}
	results := map[string]openrecall.Result{}
	_, err := p.workflow(t, nil, nil).AnalyzeQueue(context.Background(), workflow.Records(intake.NewReader(&queue, intake.Options{})),
		workflow.QueueOptions{Workers: 1}, func(r openrecall.Result) error {
			results[r.Identity.Rule] = r
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if r := results["High CPU"]; !r.Bypassed {
		t.Errorf("the seventh High CPU firing after six benign decisions was not bypassed: %+v", r.Guard)
	}
	r := results["Low Storage"]
	if r.Bypassed || r.Triage.StrongCount != 0 {
		t.Errorf("the critical Low Storage alert was vouched for by High CPU's memory: bypassed %v, %d strong matches", r.Bypassed, r.Triage.StrongCount)
	}
	if !strongTier(r) {
		t.Errorf("the Low Storage alert did not go to the strong model: steps %+v", r.Steps)
	}
	t.Logf("High CPU: %s, bypassed %v; Low Storage: %s, bypassed %v, decision %s",
		cpuID, results["High CPU"].Bypassed, storageID, r.Bypassed, r.Decision)
}

// strongTier reports whether the result's analysis ran on the strong model.
func strongTier(r openrecall.Result) bool {
	for _, s := range r.Steps {
		if s.Step == openrecall.StepAnalysis && s.Tier == openrecall.TierStrong && !s.Skipped {
			return true
		}
	}
	return false
}
