package gen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// InboxPressure is a run of bodies against an inbox limit (issue #33):
// before each body the workers finish some of the oldest pending
// deliveries.
type InboxPressure struct {
	Limit int
	Steps []PressureStep
}

// PressureStep is one body of new alerts, and how many pending deliveries
// finish before it arrives.
type PressureStep struct {
	Records int
	Finish  int
}

// InboxPressureGen generates limits of 1–5 and bodies of 1–8 records, the
// backlog drained by 0–6 deliveries before each (none, most often): bodies
// larger than the limit, bodies on a backlog at, under and over it.
func InboxPressureGen() gopter.Gen {
	step := gg.Struct(reflect.TypeOf(PressureStep{}), map[string]gopter.Gen{
		"Records": gg.IntRange(1, 8),
		"Finish":  gg.IntRange(0, 6),
	})
	return gg.Struct(reflect.TypeOf(InboxPressure{}), map[string]gopter.Gen{
		"Limit": gg.IntRange(1, 5),
		"Steps": gg.SliceOf(step),
	})
}

// ValidInboxPressure checks a run's ranges.
func ValidInboxPressure(p InboxPressure) error {
	if p.Limit < 1 {
		return fmt.Errorf("limit %d", p.Limit)
	}
	for _, s := range p.Steps {
		if s.Records < 1 || s.Finish < 0 {
			return fmt.Errorf("step out of range: %+v", s)
		}
	}
	return nil
}

// RoutingKeyEvent is a PagerDuty event shaped to find where a reader of
// its routing_key stops: members before the key (padded strings, or
// objects and arrays that hold a routing_key of their own), a top-level
// member whose name differs from routing_key only in case, the key itself
// or none, and a padded member after it; Within is the reader's bound.
type RoutingKeyEvent struct {
	Within  int
	Before  []int // the pad lengths of the members before the key
	Nested  bool  // those members are objects and arrays holding a routing_key
	Decoy   bool  // a "Routing_Key" member comes first
	Present bool
	After   int
}

// RoutingKeyEventKey is the key a RoutingKeyEvent carries.
const RoutingKeyEventKey = "the-top-level-key"

// Body returns the event's bytes and the offset just past the closing quote
// of the top-level key's value (-1 without one).
func (e RoutingKeyEvent) Body() (string, int) {
	var b strings.Builder
	b.WriteString("{")
	members := 0
	sep := func() {
		if members > 0 {
			b.WriteString(",")
		}
		members++
	}
	if e.Decoy {
		sep()
		b.WriteString(`"Routing_Key":"decoy"`)
	}
	for i, n := range e.Before {
		sep()
		pad := strings.Repeat("p", n)
		if e.Nested {
			fmt.Fprintf(&b, `"m%d":{"routing_key":"nested","a":[{"routing_key":"deeper"},"%s",1.5,true,null]}`, i, pad)
		} else {
			fmt.Fprintf(&b, `"m%d":"%s"`, i, pad)
		}
	}
	end := -1
	if e.Present {
		sep()
		b.WriteString(`"routing_key":"` + RoutingKeyEventKey + `"`)
		end = b.Len()
	}
	sep()
	fmt.Fprintf(&b, `"event_action":"trigger","payload":{"summary":"%s","source":"x","severity":"info"}`, strings.Repeat("t", e.After))
	b.WriteString("}")
	return b.String(), end
}

// RoutingKeyEventGen generates events whose key falls before, at and past
// bounds of 16–600 bytes.
func RoutingKeyEventGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(RoutingKeyEvent{}), map[string]gopter.Gen{
		"Within":  gg.IntRange(16, 600),
		"Before":  gg.SliceOfN(4, gg.IntRange(0, 200)),
		"Nested":  gg.Bool(),
		"Decoy":   gg.Bool(),
		"Present": gg.Weighted([]gg.WeightedGen{{Weight: 4, Gen: gg.Const(true)}, {Weight: 1, Gen: gg.Const(false)}}),
		"After":   gg.IntRange(0, 400),
	})
}

// ValidRoutingKeyEvent checks an event's ranges.
func ValidRoutingKeyEvent(e RoutingKeyEvent) error {
	if e.Within < 1 || e.After < 0 {
		return fmt.Errorf("out of range: %+v", e)
	}
	for _, n := range e.Before {
		if n < 0 {
			return fmt.Errorf("pad %d", n)
		}
	}
	return nil
}

// Outcomes of a model call in a CircuitRun.
const (
	CallSucceeds = iota
	CallFails
	CallCancelled // the caller cancelled the call: it failed with the context's error
)

// CircuitRun is a circuit's threshold and the outcomes of a tier's calls.
type CircuitRun struct {
	Threshold int
	Calls     []int
}

// CircuitRunGen generates thresholds of 1–4 and runs of calls heavy in
// failures.
func CircuitRunGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(CircuitRun{}), map[string]gopter.Gen{
		"Threshold": gg.IntRange(1, 4),
		"Calls": gg.SliceOf(gg.Weighted([]gg.WeightedGen{{Weight: 2, Gen: gg.Const(CallSucceeds)}, {Weight: 5, Gen: gg.Const(CallFails)},
			{Weight: 1, Gen: gg.Const(CallCancelled)}})),
	})
}

// ValidCircuitRun checks a run's ranges.
func ValidCircuitRun(r CircuitRun) error {
	if r.Threshold < 1 {
		return fmt.Errorf("threshold %d", r.Threshold)
	}
	for _, c := range r.Calls {
		if c < CallSucceeds || c > CallCancelled {
			return fmt.Errorf("call outcome %d", c)
		}
	}
	return nil
}
