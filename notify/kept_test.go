package notify

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/openrecall/openrecall"
)

// TestKeptCarriesTheDecisionOn: what a delivery keeps for the episode's
// later notifications is the trigger's decision, route and reason, carried
// on through an update, so a resolve after a person's decision still says
// what openrecall decided (a regression: e-mail's update kept only its
// Message-ID, and the resolve's mail lost the decision).
func TestKeptCarriesTheDecisionOn(t *testing.T) {
	trigger := Notification{Kind: KindTrigger, Result: openrecall.Result{Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionReal,
		Steps: []openrecall.RouteStep{{Step: openrecall.StepAnalysis, Reason: "privilege escalation on a node"}}}}
	kept := keptFor(trigger)
	want := map[string]string{"decision": "real", "route": RouteOf(trigger.Result), "reason": "privilege escalation on a node"}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Fatalf("the trigger keeps (-want +got):\n%s", diff)
	}
	// An update's delivery (e-mail adds its Message-ID) keeps them on.
	prior := map[string]string{"message_id": "<a@b>"}
	for k, v := range kept {
		prior[k] = v
	}
	update := Notification{Kind: KindUpdate, Prior: prior, Decision: &Decided{Decision: openrecall.DecisionKnownBenign, Analyst: "ana"}}
	if diff := cmp.Diff(want, keptFor(update)); diff != "" {
		t.Errorf("the update keeps (-want +got):\n%s", diff)
	}
	resolve := Notification{Kind: KindResolve, Prior: keptFor(update), Result: openrecall.Result{Outcome: openrecall.ResultResolved}}
	if v := viewOf(resolve); v.Decision != openrecall.DecisionReal || v.Reason == "" {
		t.Errorf("the resolve after the update shows decision %q, reason %q; want openrecall's real and its reason", v.Decision, v.Reason)
	}
}
