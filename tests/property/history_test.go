package property

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/audit"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// historyProperties are the rules of History (DESIGN §12a): what was
// closed without a person, and a person's "this was wrong".
func historyProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P151_this_was_wrong_requeues_and_forgets_the_vouchers",
			"\"This was wrong\": for any analysis memory closed without a person (bypassed, or a firing grouped under a bypassed head) on the vote of one to three memories, beside memories of the same alert that did not vote, after a person says it was wrong it waits in the queue (reason wrong), no memory that vouched for it is recalled any more while every memory that did not vote still is, its history row says who said so and why, and saying it again changes nothing.",
			"WrongCaseGen", wrongCaseGen(), checkWrong, pbt.Expensive(4)),
	}
}

// wrongCase is one closure by memory: Voters memories vote, Bystanders
// more of the same alert are recalled without voting; Grouped makes it a
// firing of a group whose head memory bypassed.
type wrongCase struct {
	Voters     int
	Bystanders int
	Grouped    bool
	Reason     int // index into wrongReasons
	Analyst    int // index into wrongAnalysts
	Twice      bool
}

var (
	wrongReasons  = []string{"it was the outage", "  real incident  ", "Ünïcode reason \u202e with an RTL mark", "x"}
	wrongAnalysts = []string{"alice", "Bob Ödegaard", "carol"}
)

func wrongCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(wrongCase{}), map[string]gopter.Gen{
		"Voters":     gg.IntRange(1, 3),
		"Bystanders": gg.IntRange(0, 2),
		"Grouped":    gg.Bool(),
		"Reason":     gg.IntRange(0, len(wrongReasons)-1),
		"Analyst":    gg.IntRange(0, len(wrongAnalysts)-1),
		"Twice":      gg.Bool(),
	})
}

func checkWrong(c wrongCase) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "openrecall-pbt-wrong-")
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
	alert := openrecall.Alert{ID: "a-1", Title: "disk full on db-1", Severity: openrecall.SeverityLow, Status: openrecall.StatusFiring,
		Labels: map[string]string{"alertname": "DiskFull", "service": "db"}}
	fp, id := d.ex.Extract(alert), d.ex.Identify(alert)
	var voters, bystanders []string
	var matches []openrecall.Match
	for i := range c.Voters + c.Bystanders {
		inc, _, err := d.st.Retain(ctx, openrecall.Incident{Fingerprint: fp, Identity: id, Decision: openrecall.DecisionFalsePositive,
			Analyst: "dave", Note: fmt.Sprintf("memory %d", i), SourceAlertID: fmt.Sprintf("old-%d", i)})
		if err != nil {
			return fmt.Errorf("retain: %v", err)
		}
		matches = append(matches, openrecall.Match{Incident: inc, Score: 1})
		if i < c.Voters {
			voters = append(voters, inc.ID)
		} else {
			bystanders = append(bystanders, inc.ID)
		}
	}
	r := openrecall.Result{AnalysisID: "run-p151-000001", Batch: "run-p151", Outcome: openrecall.ResultTriaged, Alert: alert,
		Fingerprint: fp, Identity: id, Matches: matches, Decision: openrecall.DecisionFalsePositive,
		Triage: openrecall.TriageResult{Decision: openrecall.DecisionFalsePositive, Supporting: voters},
		Guard:  openrecall.GuardVerdict{Bypass: true}}
	if c.Grouped {
		r.Group = &openrecall.GroupRef{ID: "g-run-p151-000000", Role: openrecall.GroupRoleMember, HeadAnalysisID: "run-p151-000000", HeadAlertID: "a-0"}
	} else {
		r.Bypassed = true
	}
	r.Audit = audit.Entries(r, fixedNow())
	if _, err := d.sink.Persist(ctx, r, nil); err != nil {
		return fmt.Errorf("persist: %v", err)
	}
	reason, analyst := wrongReasons[c.Reason], wrongAnalysts[c.Analyst]
	out, err := d.app.Wrong(ctx, r.AnalysisID, reason, analyst)
	if err != nil {
		return fmt.Errorf("wrong: %v", err)
	}
	if !out.Changed {
		return fmt.Errorf("wrong changed nothing: %+v", out)
	}
	if c.Twice {
		again, err := d.app.Wrong(ctx, r.AnalysisID, "again", "eve")
		if err != nil || again.Changed {
			return fmt.Errorf("said again: %+v, %v; want nothing changed", again, err)
		}
	}
	queue, err := d.app.Queue(ctx, openrecall.WaitingFilter{})
	if err != nil {
		return fmt.Errorf("queue: %v", err)
	}
	if len(queue) != 1 || queue[0].AnalysisID != r.AnalysisID || queue[0].Reason != openrecall.WaitWrong {
		return fmt.Errorf("queue %+v, want %s waiting as wrong", queue, r.AnalysisID)
	}
	recalled, err := d.st.Recall(ctx, id, fp, 10)
	if err != nil {
		return fmt.Errorf("recall: %v", err)
	}
	var ids []string
	for _, m := range recalled {
		ids = append(ids, m.Incident.ID)
	}
	for _, v := range voters {
		if slices.Contains(ids, v) {
			return fmt.Errorf("memory %s vouched and is still recalled (%v)", v, ids)
		}
	}
	for _, b := range bystanders {
		if !slices.Contains(ids, b) {
			return fmt.Errorf("memory %s did not vote and is no longer recalled (%v)", b, ids)
		}
	}
	cl, err := d.app.ClosureOf(ctx, r.AnalysisID)
	if err != nil {
		return fmt.Errorf("closure: %v", err)
	}
	if !cl.Wrong || cl.WrongBy != analyst || cl.WrongReason != strings.TrimSpace(reason) {
		return fmt.Errorf("history row %+v, want wrong by %q for %q", cl, analyst, reason)
	}
	return nil
}
