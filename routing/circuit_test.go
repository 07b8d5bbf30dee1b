package routing

import (
	"context"
	"errors"
	"testing"

	"github.com/openrecall/openrecall"
)

// scriptedModel answers from a list of errors, nil for a success.
type scriptedModel struct{ errs []error }

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) Complete(ctx context.Context, req Request) (Response, error) {
	err := m.errs[0]
	m.errs = m.errs[1:]
	return Response{Text: "{}"}, err
}

// TestCircuitOpensAndCloses: the circuit opens after its failures in a row,
// stays open while calls fail, closes on the first success; a call its
// caller cancelled is not counted.
func TestCircuitOpensAndCloses(t *testing.T) {
	down := errors.New("500 internal server error")
	m := &scriptedModel{errs: []error{down, down, nil, down, down, down, context.Canceled, down, nil}}
	c := NewCircuit(openrecall.TierStrong, 3, nil)
	w := c.Wrap(m)
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	want := []struct {
		open     bool
		failures int
	}{{false, 1}, {false, 2}, {false, 0}, {false, 1}, {false, 2}, {true, 3}, {true, 3}, {true, 4}, {false, 0}}
	for i, tt := range want {
		callCtx := ctx
		if i == 6 {
			callCtx = cancelled
		}
		_, _ = w.Complete(callCtx, Request{})
		st := c.State()
		if st.Open != tt.open || st.Failures != tt.failures {
			t.Fatalf("after call %d: open=%v failures=%d, want open=%v failures=%d", i, st.Open, st.Failures, tt.open, tt.failures)
		}
		if st.Failures > 0 && (st.LastError == "" || st.Since.IsZero()) {
			t.Fatalf("after call %d: %+v lacks the error or its start", i, st)
		}
	}
	if w.Name() != "scripted" || pricedName(w) != "scripted" {
		t.Errorf("the wrapper is named %q and priced as %q", w.Name(), pricedName(w))
	}
}
