package property

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/intake"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/routing"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// trustProperties are the rules issue #33 added to what the server
// accepts and reports: back-pressure, reading a credential before a body,
// and the model tiers' circuits.
func trustProperties() []pbt.Property {
	return []pbt.Property{
		pbt.ForAll("P125_inbox_limit_is_back_pressure",
			"server.inbox_limit is back-pressure, not a ceiling on one body: a body of new alerts is refused (ErrFull, nothing stored) exactly when the backlog it finds is at or over the limit, and stored whole otherwise, however many records it holds; the backlog is always what was stored minus what finished.",
			"InboxPressureGen", gen.InboxPressureGen(), checkInboxPressure,
			pbt.Expensive(3),
			pbt.PinFunc("a body of 5 alerts into an empty inbox limited to 2, then one more", func() error {
				return checkInboxPressure(gen.InboxPressure{Limit: 2, Steps: []gen.PressureStep{{Records: 5}, {Records: 1}, {Records: 3, Finish: 4}}})
			}),
		),
		pbt.ForAll("P126_routing_key_read_within_its_bound",
			"A PagerDuty event's routing_key is read within its bound: intake.RoutingKey never reads more than the bound of the event, whatever it holds; it returns the top-level routing_key exactly when that member's value ends within the bound (never one nested in another member, never a member named in another case), and the bytes it returns are the event's first bytes, so the event is the bytes read followed by the rest.",
			"RoutingKeyEventGen", gen.RoutingKeyEventGen(), checkRoutingKey,
			pbt.PinFunc("the key's value ends exactly at the bound, after a nested routing_key and a decoy", func() error {
				e := gen.RoutingKeyEvent{Before: []int{3}, Nested: true, Decoy: true, Present: true, After: 10}
				_, end := e.Body()
				e.Within = end
				return checkRoutingKey(e)
			}),
		),
		pbt.ForAll("P127_model_circuit_opens_on_consecutive_failures",
			"A model tier's circuit is open exactly when its last Threshold counted calls all failed: its failure count is the number of failed calls since the last success, a success closes it and resets the count, and a call its caller cancelled counts neither way.",
			"CircuitRunGen", gen.CircuitRunGen(), checkCircuit,
		),
	}
}

// checkInboxPressure runs a pressure plan against a real store and the
// model: refused iff the backlog is at or over the limit.
func checkInboxPressure(p gen.InboxPressure) error {
	ctx := context.Background()
	st, done, err := scratchStore("pressure", memory.Options{Now: fixedNow})
	if err != nil {
		return err
	}
	defer done()
	name := func(id int64) string { return fmt.Sprintf("serve-%06d", id) }
	var pending []int64 // oldest first
	alert := 0
	for si, s := range p.Steps {
		for range min(s.Finish, len(pending)) {
			id := pending[0]
			if err := st.Complete(ctx, []int64{id}, []openrecall.Result{{AnalysisID: name(id), Outcome: openrecall.ResultTriaged}}); err != nil {
				return fmt.Errorf("step %d: complete %d: %v", si, id, err)
			}
			pending = pending[1:]
		}
		body := make([]openrecall.Delivery, s.Records)
		for i := range body {
			alert++
			body[i] = openrecall.Delivery{Endpoint: "alertmanager", Alert: openrecall.Alert{ID: fmt.Sprintf("a-%d", alert), Title: "disk full",
				Severity: openrecall.SeverityLow, Status: openrecall.StatusFiring}}
		}
		backlog := len(pending)
		out, err := st.Enqueue(ctx, body, p.Limit, name)
		refuse := backlog >= p.Limit
		switch {
		case refuse && !errors.Is(err, openrecall.ErrFull):
			return fmt.Errorf("step %d: a body of %d on a backlog of %d, limit %d: %v, want refused with ErrFull", si, s.Records, backlog, p.Limit, err)
		case !refuse && err != nil:
			return fmt.Errorf("step %d: a body of %d on a backlog of %d, limit %d: refused (%v), want stored whole", si, s.Records, backlog, p.Limit, err)
		case !refuse:
			for _, d := range out {
				if d.Duplicate || d.ID == 0 {
					return fmt.Errorf("step %d: %+v not queued", si, d)
				}
				pending = append(pending, d.ID)
			}
		}
		n, err := st.InboxDepth(ctx)
		if err != nil {
			return fmt.Errorf("step %d: depth: %v", si, err)
		}
		if n != len(pending) {
			return fmt.Errorf("step %d: inbox depth %d, want %d (stored minus finished)", si, n, len(pending))
		}
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// checkRoutingKey reads an event's routing_key within its bound.
func checkRoutingKey(e gen.RoutingKeyEvent) error {
	body, end := e.Body()
	src := &countingReader{r: strings.NewReader(body)}
	key, read, err := intake.RoutingKey(src, int64(e.Within))
	if src.n > e.Within {
		return fmt.Errorf("read %d bytes of a %d-byte event, bound %d", src.n, len(body), e.Within)
	}
	if len(read) != src.n || !strings.HasPrefix(body, string(read)) {
		return fmt.Errorf("returned %d bytes, read %d: not the event's first bytes", len(read), src.n)
	}
	want := e.Present && end <= e.Within
	switch {
	case want && (err != nil || key != gen.RoutingKeyEventKey):
		return fmt.Errorf("the key's value ends at %d, bound %d: got %q, %v; want %q", end, e.Within, key, err, gen.RoutingKeyEventKey)
	case !want && (err == nil || !errors.Is(err, intake.ErrNoRoutingKey)):
		return fmt.Errorf("key present=%v ending at %d, bound %d: got %q, %v; want ErrNoRoutingKey", e.Present, end, e.Within, key, err)
	}
	return nil
}

// scriptedCalls answers each call as a CircuitRun says.
type scriptedCalls struct{ next int }

func (m *scriptedCalls) Name() string { return "scripted" }

func (m *scriptedCalls) Complete(ctx context.Context, req routing.Request) (routing.Response, error) {
	switch m.next {
	case gen.CallFails:
		return routing.Response{}, errors.New("500 internal server error")
	case gen.CallCancelled:
		return routing.Response{}, ctx.Err()
	}
	return routing.Response{Text: "{}"}, nil
}

// checkCircuit drives a circuit with a run of calls against the model: a
// streak of counted failures.
func checkCircuit(r gen.CircuitRun) error {
	c := routing.NewCircuit(openrecall.TierStrong, r.Threshold, nil)
	m := &scriptedCalls{}
	w := c.Wrap(m)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	streak := 0
	for i, call := range r.Calls {
		m.next = call
		ctx := context.Background()
		switch call {
		case gen.CallSucceeds:
			streak = 0
		case gen.CallFails:
			streak++
		case gen.CallCancelled:
			ctx = cancelled
		}
		_, _ = w.Complete(ctx, routing.Request{})
		st := c.State()
		if st.Failures != streak || st.Open != (streak >= r.Threshold) {
			return fmt.Errorf("after call %d (%v): open=%v failures=%d; want open=%v failures=%d", i, r.Calls[:i+1], st.Open, st.Failures, streak >= r.Threshold, streak)
		}
	}
	return nil
}
