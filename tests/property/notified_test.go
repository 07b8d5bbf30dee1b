package property

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/internal/compose"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/notify"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// notifiedProperties are the laws of what the product notifies of each
// stored result (DESIGN §12b): its route tree, its episodes and the
// store's trigger rule together.
func notifiedProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P150_stored_results_notify_what_their_routes_reach",
			"What a stored result notifies is the routes' and the episode's (DESIGN §12b): for any route tree and any deliveries of alerts firing, acknowledged and recovering (their ids naming their episode or not), each result the inbox queues and serve stores has, in the outbox written with it, exactly one trigger per receiver its routes reach when it is a firing, one resolve per receiver that has a trigger of its episode when it is a recovery, and nothing else — every intent keyed by the episode, which a firing opens when its alert is new or recovered (unless its id names the episode) and every later delivery continues.",
			"NotifiedRunGen", gen.NotifiedRunGen(), checkNotified,
			pbt.Classify(func(r gen.NotifiedRun) []string {
				var labels []string
				fired, recovered, again := map[int]bool{}, map[int]bool{}, false
				for _, e := range r.Events {
					switch e.Status {
					case 0:
						again = again || recovered[e.Alert]
						fired[e.Alert] = true
					case 2:
						if fired[e.Alert] {
							recovered[e.Alert] = true
						}
					}
				}
				if len(recovered) > 0 {
					labels = append(labels, "recovery of a firing")
				}
				if again {
					labels = append(labels, "fires again after recovering")
				}
				return labels
			}),
			pbt.Cover("recovery of a firing", 30), pbt.Cover("fires again after recovering", 20),
		),
	}
}

// notifiedReceivers are the receivers of the generated trees.
var notifiedReceivers = []string{"r0", "r1", "r2", "r3"}

// checkNotified runs r's deliveries through the inbox, the product's sink
// and its notify hook, and compares each stored result's intents with the
// model: episodes tracked per alert, triggers from the routes, resolves
// where the episode's trigger is.
func checkNotified(r gen.NotifiedRun) error {
	ctx := context.Background()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(gen.RouteCase{Routes: r.Routes}.YAML(0)), &doc); err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	route, err := notify.ParseRoute(doc.Content[0].Content[1], map[string]bool{"r0": true, "r1": true, "r2": true, "r3": true})
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	st, done, err := scratchStore("notified", memory.Options{})
	if err != nil {
		return err
	}
	defer done()
	root, err := productRoot(st, nil, time.Now, compose.Notify(notify.Intents(route, notifiedReceivers)))
	if err != nil {
		return err
	}
	sink, err := root.Sink(ctx)
	if err != nil {
		return fmt.Errorf("setup: %v", err)
	}
	// The model: each alert's state and the analysis that opened its
	// episode; the episodes each receiver has a trigger of.
	type alertModel struct {
		state, opener string
	}
	alerts := map[int]*alertModel{}
	triggered := map[[2]string]bool{}
	statuses := []string{openrecall.StatusFiring, openrecall.StatusAcknowledged, openrecall.StatusResolved}
	for i, e := range r.Events {
		labels := gen.RouteCase{Labels: e.Labels}.RouteLabels()
		a := openrecall.Alert{ID: fmt.Sprintf("a%d", e.Alert), Title: "disk full", Status: statuses[e.Status],
			Severity: openrecall.Severity(labels["severity"]), Service: labels["service"], Episode: r.Episodic && e.Alert == 0,
			Labels: map[string]string{}}
		if team, ok := labels["team"]; ok {
			a.Labels["team"] = team
		}
		ds, err := st.Enqueue(ctx, []openrecall.Delivery{{Endpoint: "alerts", Alert: a}}, 0, func(id int64) string { return fmt.Sprintf("serve-%06d", id) })
		if err != nil {
			return fmt.Errorf("event %d: enqueue: %v", i, err)
		}
		if ds[0].Duplicate {
			continue // not queued: no result, no state moved
		}
		// The model's episode.
		m := alerts[e.Alert]
		if m == nil {
			m = &alertModel{}
			alerts[e.Alert] = m
		}
		if m.state == "" || (e.Status == 0 && m.state == openrecall.AlertResolved && !a.Episode) {
			m.opener = ds[0].AnalysisID
		}
		m.state = ds[0].State
		claimed, err := st.Claim(ctx, 10)
		if err != nil || len(claimed) != 1 {
			return fmt.Errorf("event %d: claim: %d deliveries, %v", i, len(claimed), err)
		}
		res := openrecall.Result{AnalysisID: ds[0].AnalysisID, Alert: a, Outcome: openrecall.ResultResolved,
			Audit: []openrecall.AuditEntry{{AnalysisID: ds[0].AnalysisID, AlertID: a.ID, Step: openrecall.StepIntake, Outcome: "stored"}}}
		if e.Status == 0 {
			res.Outcome, res.Decision = openrecall.ResultTriaged, openrecall.Decision(labels["decision"])
		}
		if _, err := sink.PersistBatch(ctx, []openrecall.Result{res}, []*openrecall.CostPoint{nil}); err != nil {
			return fmt.Errorf("event %d: persist: %v", i, err)
		}
		key := notify.EpisodeKey(m.opener)
		var want []string
		switch e.Status {
		case 0:
			for _, match := range route.Receivers(notify.SubjectOf(res)) {
				want = append(want, match.Receiver+"/trigger/"+key)
				triggered[[2]string{match.Receiver, key}] = true
			}
		case 2:
			for _, name := range notifiedReceivers {
				if triggered[[2]string{name, key}] {
					want = append(want, name+"/resolve/"+key)
				}
			}
		}
		stored, err := st.Intents(ctx, openrecall.IntentFilter{AnalysisID: res.AnalysisID})
		if err != nil {
			return err
		}
		slices.Reverse(stored)
		var got []string
		for _, in := range stored {
			got = append(got, in.Receiver+"/"+in.Kind+"/"+in.Key)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("event %d (a%d %s, episode opened by %s): intents %v, want %v", i, e.Alert, a.Status, m.opener, got, want)
		}
	}
	return nil
}
