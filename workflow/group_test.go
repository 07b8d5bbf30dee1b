package workflow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/costcurve"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/workflow"
)

// grouping returns p's workflow with grouping on over sink.
func (p *pipeline) grouping(t *testing.T, budget *routing.Budget, sink workflow.Sink, store workflow.GroupStore) *workflow.Workflow {
	t.Helper()
	p.groups = workflow.Grouping{Enabled: true, Store: store}
	return p.workflow(t, budget, sink)
}

func stormLine(i int, rule, severity, ts string) string {
	return fmt.Sprintf(`{"id":"s-%d","title":"%s on host-%d","text":"disk usage above threshold","severity":%q,"labels":{"alertname":%q,"service":"storage","instance":"10.0.0.%d:9100"},"timestamp":%q}`,
		i, rule, i, severity, rule, i, ts)
}

func TestStormGroupsUnderOneAnalysis(t *testing.T) {
	var lines []string
	base := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	for i := range 12 {
		sev := "warning"
		if i == 6 {
			sev = "critical" // a severity rise inside the storm
		}
		lines = append(lines, stormLine(i, "NodeDiskFull", sev, base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339)))
	}
	lines = append(lines, stormLine(99, "NodeDiskFull", "warning", base.Add(3*time.Hour).Format(time.RFC3339)))
	q := strings.Join(lines, "\n")
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint(workers, " workers"), func(t *testing.T) {
			p := newPipeline(t)
			sealer := audit.NewSealer(benchKey)
			sink := productSink(t, p.store, sealer)
			w := p.grouping(t, nil, sink, nil)
			res, sum := analyze(t, w, q, workers)
			roles := ""
			for _, r := range res {
				switch {
				case r.Group == nil:
					roles += "-"
				case r.Grouped():
					roles += "m"
				default:
					roles += "H"
				}
			}
			// The rise at 6 heads its own group (more severe than the head);
			// the later warnings go on joining the first group (of those
			// that take them, the least severe head's); three hours later a
			// new group starts.
			if want := "HmmmmmHmmmmmH"; roles != want {
				t.Fatalf("roles %s, want %s", roles, want)
			}
			calls := 0
			for _, n := range sum.ModelCalls {
				calls += n
			}
			if calls != 3 || sum.Grouped != 10 || sum.Groups != 3 || res[7].Group.HeadAnalysisID != res[0].AnalysisID {
				t.Errorf("summary: %d model calls, %d grouped, %d groups; want 3, 10, 3", calls, sum.Grouped, sum.Groups)
			}
			head := res[0]
			for _, r := range append(res[1:6:6], res[7:12]...) {
				if r.Decision != head.Decision || r.Cost != 0 || r.Baseline <= 0 || len(r.Steps) != 3 || r.Steps[2].Step != openrecall.StepGrouped {
					t.Errorf("member %s: decision %s cost %d baseline %d steps %v", r.Alert.ID, r.Decision, r.Cost, r.Baseline, r.Steps)
				}
				if len(r.Audit) != len(r.Steps) {
					t.Errorf("member %s: %d audit entries for %d steps", r.Alert.ID, len(r.Audit), len(r.Steps))
				}
				if r.Group.HeadAnalysisID != head.AnalysisID {
					t.Errorf("member %s: head %s, want %s", r.Alert.ID, r.Group.HeadAnalysisID, head.AnalysisID)
				}
			}
			stored, err := p.store.Groups(context.Background(), true, 10)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, g := range stored {
				sizes = append(sizes, g.Size)
			}
			if fmt.Sprint(sizes) != "[1 1 11]" {
				t.Errorf("stored group sizes (newest first) %v, want [1 1 11]", sizes)
			}
		})
	}
}

func TestBypassedHeadsMembersRerunTheGuard(t *testing.T) {
	p := newPipeline(t)
	base := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	first := firstAlert(t, stormLine(0, "NodeDiskFull", "warning", base.Format(time.RFC3339)))
	p.teach(t, first, openrecall.DecisionKnownBenign, 6)
	var lines []string
	for i := range 4 {
		lines = append(lines, stormLine(i, "NodeDiskFull", "warning", base.Add(time.Duration(i)*time.Minute).Format(time.RFC3339)))
	}
	w := p.grouping(t, nil, nil, nil)
	res, sum := analyze(t, w, strings.Join(lines, "\n"), 2)
	if !res[0].Bypassed || sum.Grouped != 3 {
		t.Fatalf("head bypassed %v, %d grouped; want a bypassed head and 3 members", res[0].Bypassed, sum.Grouped)
	}
	for _, r := range res[1:] {
		if r.Decision != openrecall.DecisionKnownBenign || !r.Guard.Bypass || r.Bypassed {
			t.Errorf("member %s: decision %s, guard %v, bypassed %v", r.Alert.ID, r.Decision, r.Guard.Bypass, r.Bypassed)
		}
	}
}

// numbered numbers the records of src from next on, as serve's inbox does,
// so that two runs of one batch name their analyses apart.
type numbered struct {
	src  workflow.Source
	next int
}

func (n *numbered) Next(ctx context.Context) (intake.Record, error) {
	rec, _, err := n.NextNumbered(ctx)
	return rec, err
}

func (n *numbered) NextNumbered(ctx context.Context) (intake.Record, int, error) {
	rec, err := n.src.Next(ctx)
	seq := n.next
	n.next++
	return rec, seq, err
}

// TestStoredGroupOfABypassedHeadEndsWhenItsMemoryChanges: a later run of
// the batch (serve after a restart, or its next inbox batch) continues the
// stored group of a head memory bypassed, but a firing joins it only while
// the guard, run again on current memory, still passes on the same
// supporting memories (DESIGN §6a): after a memory forget the firing heads
// a group of its own and is triaged on its own, bypassed on the memories
// left when they still vouch, analysed when they no longer do.
func TestStoredGroupOfABypassedHeadEndsWhenItsMemoryChanges(t *testing.T) {
	base := time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		forget     int
		wantMember bool
		wantBypass bool
	}{
		{"memory unchanged: joins the stored group", 0, true, false},
		{"one memory forgotten, the rest still vouch: a group of its own, bypassed", 1, false, true},
		{"two memories forgotten, the rest no longer vouch: a group of its own, analysed", 2, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := newPipeline(t)
			p.teach(t, firstAlert(t, stormLine(0, "NodeDiskFull", "warning", base.Format(time.RFC3339))), openrecall.DecisionKnownBenign, 6)
			sealer := audit.NewSealer(benchKey)
			sink := productSink(t, p.store, sealer)
			w := p.grouping(t, nil, sink, memory.GroupScope{Store: p.store, Batch: "test"})
			// One cost curve for both runs, as serve continues its stored one.
			curve := costcurve.New("test")
			run := func(from int, lines ...string) []openrecall.Result {
				t.Helper()
				var out []openrecall.Result
				src := &numbered{src: workflow.Records(intake.NewReader(strings.NewReader(strings.Join(lines, "\n")), intake.Options{Format: intake.FormatJSONL})), next: from}
				if _, err := w.AnalyzeQueue(ctx, src, workflow.QueueOptions{Workers: 2, Curve: curve}, func(r openrecall.Result) error {
					out = append(out, r)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return out
			}
			first := run(0,
				stormLine(0, "NodeDiskFull", "warning", base.Format(time.RFC3339)),
				stormLine(1, "NodeDiskFull", "warning", base.Add(time.Minute).Format(time.RFC3339)))
			head := first[0]
			if !head.Bypassed || head.Group == nil || head.Grouped() || !first[1].Grouped() || len(head.Triage.Supporting) != 6 {
				t.Fatalf("first run: head bypassed %v on %d memories, group %+v; second firing grouped %v",
					head.Bypassed, len(head.Triage.Supporting), head.Group, first[1].Grouped())
			}
			for _, id := range head.Triage.Supporting[:tc.forget] {
				if _, _, err := p.store.Forget(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			r := run(10, stormLine(2, "NodeDiskFull", "warning", base.Add(2*time.Minute).Format(time.RFC3339)))[0]
			if r.Group == nil {
				t.Fatalf("later firing has no group")
			}
			if tc.wantMember {
				if !r.Grouped() || r.Group.ID != head.Group.ID || r.Decision != openrecall.DecisionKnownBenign || !r.Guard.Bypass || r.Cost != 0 {
					t.Errorf("later firing: group %+v, decision %s, guard %v, cost %d; want a member of %s, known_benign, no call",
						r.Group, r.Decision, r.Guard.Bypass, r.Cost, head.Group.ID)
				}
				return
			}
			if r.Grouped() || r.Group.ID == head.Group.ID {
				t.Errorf("later firing after %d memories forgotten joined group %s (head %s): the bypass rested on memories that changed",
					tc.forget, r.Group.ID, r.Group.HeadAnalysisID)
			}
			if r.Bypassed != tc.wantBypass {
				t.Errorf("later firing after %d memories forgotten: bypassed %v, want %v (%s)", tc.forget, r.Bypassed, tc.wantBypass, r.Guard.Reason)
			}
		})
	}
}

// TestExpiredGroupTakesNoMember: a group whose last firing is more than a
// day of windows behind the run's newest firing, of any key, takes no more
// members (the grouper forgets it); a firing dated after now counts as now,
// so one clock far ahead expires nothing.
func TestExpiredGroupTakesNoMember(t *testing.T) {
	// fixedNow is 2026-11-30 12:00.
	day2, day3 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		base  time.Time
		other time.Duration // after base: another key's firing, between the two of NodeDiskFull
		want  string
	}{
		{"another key 25 h later", day2, 25 * time.Hour, "H-H"},
		{"another key 23 h later", day2, 23 * time.Hour, "H-m"},
		{"another key dated a year past now", day3, 400 * 24 * time.Hour, "H-m"},
		{"another key dated past now, now 60 h after the first", day2.Add(-12 * time.Hour), 400 * 24 * time.Hour, "H-H"},
		// A firing without a time of its own is grouped on its arrival
		// (now, 60 h after the first): it does not move the run's newest
		// firing, or a replayed history would expire every group at the
		// first such alert (make run's example queue lost 22 of its 40
		// grouped firings that way).
		{"another key without a time of its own, now 60 h after the first", day2, -1, "H-m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := func(d time.Duration) string { return tt.base.Add(d).Format(time.RFC3339) }
			other := strings.Replace(stormLine(2, "NodeInodesFull", "warning", at(tt.other)), `"service":"storage"`, `"service":"other"`, 1)
			if tt.other < 0 {
				other = strings.Replace(other, `,"timestamp":"`+at(tt.other)+`"`, "", 1)
			}
			q := strings.Join([]string{
				stormLine(1, "NodeDiskFull", "warning", at(0)),
				other,
				stormLine(3, "NodeDiskFull", "warning", at(10*time.Minute)),
			}, "\n")
			p := newPipeline(t)
			res, _ := analyze(t, p.grouping(t, nil, nil, nil), q, 1)
			roles := ""
			for _, r := range res {
				switch {
				case r.Group == nil:
					roles += "?"
				case r.Grouped():
					roles += "m"
				case r.Alert.ID == "s-2":
					roles += "-"
				default:
					roles += "H"
				}
			}
			if roles != tt.want {
				t.Errorf("roles %s, want %s (H heads a group, m joins one, - the other key's head)", roles, tt.want)
			}
		})
	}
}
