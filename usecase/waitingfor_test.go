package usecase_test

import (
	"testing"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/usecase"
)

// TestWaitingForLeavesWhatAnExceptionClosed pins a regression: a
// detection closed by an exception a person approved (its triage asked a
// person to approve, as triage does for every attack) waited in the queue
// all the same, so the exception quieted nothing there and History never
// listed it. An exception is a person's approval given in advance.
func TestWaitingForLeavesWhatAnExceptionClosed(t *testing.T) {
	r := openrecall.Result{
		AnalysisID: "serve-000001", Outcome: openrecall.ResultTriaged, Decision: openrecall.DecisionKnownBenign,
		Alert:       openrecall.Alert{ID: "falco-1", Title: "Terminal shell in container", Severity: openrecall.SeverityHigh},
		Fingerprint: openrecall.Fingerprint{AttackPattern: "execution"},
		Triage:      openrecall.TriageResult{Decision: openrecall.DecisionKnownBenign, RequiresHumanApproval: true},
		Exception:   &openrecall.ExceptionRef{ID: "exc_1", Analyst: "alice"},
	}
	if w, ok := usecase.WaitingFor(r); ok {
		t.Errorf("an excepted detection waits: %+v", w)
	}
	r.Exception = nil
	if _, ok := usecase.WaitingFor(r); !ok {
		t.Error("the same detection without its exception does not wait for approval")
	}
}
