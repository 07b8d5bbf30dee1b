package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/internal/detectcorpus"
	"github.com/openrecall/openrecall/internal/figures"
	"github.com/openrecall/openrecall/workflow"
)

// TestSecurityCorpus runs real public detections (Falco's and Sigma's rules,
// testdata/security) fired six times each with other hosts, users,
// processes and addresses, in three delivery forms (falcosidekick, an
// Elastic Security webhook, Alertmanager fed by falcosidekick), through the
// real intake, fingerprint, SQLite memory and workflow (DESIGN §4): every
// detection must be recognised as an attack; after five known_benign
// decisions on the first five firings, no sixth firing may be bypassed;
// the firings of one rule share one identity and two rules never do.
func TestSecurityCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the security corpus in -short mode (make test runs it)")
	}
	dir, err := detectcorpus.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := detectcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 600 {
		t.Fatalf("%d rules, want the corpus's ~700", len(rules))
	}
	for _, form := range detectcorpus.Forms() {
		t.Run(string(form), func(t *testing.T) {
			firings := detectcorpus.Render(rules, form, detectcorpus.DefaultFirings, 20260101)
			alerts := make([]openrecall.Alert, len(firings))
			p := newPipeline(t)
			for i, f := range firings {
				recs, err := intake.ParseBytes(f.Payload, intake.Options{})
				if err != nil || len(recs) != 1 || recs[0].Err != nil {
					t.Fatalf("%s firing %d of %s: %v %+v", form, f.N, f.Key, err, recs)
				}
				alerts[i] = recs[0].Alert
			}
			recognised := 0
			var missed []string
			ids := map[string]map[openrecall.Identity]bool{}
			owners := map[openrecall.Identity]map[string]bool{}
			for i, a := range alerts {
				key := firings[i].Key
				if p.ex.Extract(a).AttackPattern != "" {
					recognised++
				} else if len(missed) < 10 {
					missed = append(missed, key)
				}
				id := p.ex.Identify(a)
				if ids[key] == nil {
					ids[key] = map[openrecall.Identity]bool{}
				}
				ids[key][id] = true
				if owners[id] == nil {
					owners[id] = map[string]bool{}
				}
				owners[id][key] = true
			}
			split, merged := 0, 0
			for _, s := range ids {
				if len(s) > 1 {
					split++
				}
			}
			var mergedNames []string
			for id, o := range owners {
				if len(o) > 1 {
					merged += len(o)
					if len(mergedNames) < 5 {
						mergedNames = append(mergedNames, id.String())
					}
				}
			}
			// Five benign decisions on firings 1–5 of every rule, then the
			// sixth firings through the workflow.
			var taught, sixth []openrecall.Alert
			var sixthKeys []string
			var lines bytes.Buffer
			for i, f := range firings {
				if f.N < detectcorpus.DefaultFirings-1 { // N counts from 0
					taught = append(taught, alerts[i])
					continue
				}
				sixth = append(sixth, alerts[i])
				sixthKeys = append(sixthKeys, f.Key)
				if err := json.Compact(&lines, f.Payload); err != nil {
					t.Fatal(err)
				}
				lines.WriteByte('\n')
			}
			p.retainAll(t, taught)
			var results []openrecall.Result
			_, err := p.workflow(t, nil, nil).AnalyzeQueue(context.Background(), workflow.Records(intake.NewReader(&lines, intake.Options{})),
				workflow.QueueOptions{Workers: 2}, func(r openrecall.Result) error {
					results = append(results, r)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != len(sixth) {
				t.Fatalf("%d results for %d sixth firings", len(results), len(sixth))
			}
			sort.Slice(results, func(i, j int) bool { return results[i].Position.Line < results[j].Position.Line })
			bypassed, cheap, vouched := 0, 0, 0
			var bypassedNames []string
			for i, r := range results {
				if r.Bypassed {
					bypassed++
					if len(bypassedNames) < 10 {
						bypassedNames = append(bypassedNames, sixthKeys[i])
					}
				}
				if cheapTier(r) {
					cheap++
				}
				// Memory alone would vouch: five unanimous benign decisions
				// on the same alert. Only the attack clause stands between.
				if r.Triage.ConsistentCount >= 5 && r.Triage.Decision == openrecall.DecisionKnownBenign {
					vouched++
				}
			}
			figures.Report(t, "%s: %d rules, %d firings: recognised %d (%.1f%%); after 5 benign decisions, sixth firings that memory vouches for %d, bypassed %d of %d, cheap tier %d; rules whose firings name more than one workload (identity) %d; rules sharing an identity %d",
				form, len(rules), len(alerts), recognised, 100*float64(recognised)/float64(len(alerts)), vouched, bypassed, len(results), cheap, split, merged)
			if recognised != len(alerts) {
				t.Errorf("%d of %d firings not recognised as security detections, e.g. %v", len(alerts)-recognised, len(alerts), missed)
			}
			if bypassed > 0 || cheap > 0 {
				t.Errorf("%d sixth firings bypassed and %d sent to the cheap tier, e.g. %v", bypassed, cheap, bypassedNames)
			}
			// The renderer also varies the workload a detection is about
			// (namespace, image), which is part of its identity by design
			// (DESIGN §4); what only host, user, pid, addresses or times
			// change is held by the property suite. A split is reported.
			if merged > 0 {
				t.Errorf("%d rules share an identity with another rule, e.g. %v", merged, mergedNames)
			}
		})
	}
}
