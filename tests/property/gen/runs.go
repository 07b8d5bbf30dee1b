package gen

import (
	"fmt"
	"reflect"
	"time"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
)

// RunFamilies are the alerts a RunsPlan fires, as StormRules indexes: two
// rules of two services (two identities, so one family's memory and
// exceptions never touch the other's), each always at warning.
func RunFamilies() []int { return []int{2, 0} }

// RunGaps are the minutes the clock moves before a step: most within the
// 1 h group window, some summing to it exactly (10 + 50), one past it and
// one of hours (a quiet night between two runs).
func RunGaps() []int { return []int{10, 50, 25, 70, 180} }

// RunMemoryExpiries are the minutes a retained decision votes for (0: no
// expiry).
func RunMemoryExpiries() []int { return []int{0, 60, 120} }

// RunExceptionExpiries are the minutes an exception a person adds lasts:
// an hour (reached exactly by 10 + 50), half an hour, two hours, a day.
func RunExceptionExpiries() []int { return []int{60, 30, 120, 1440} }

// RunDecisions are the decisions a person retains or decides a group
// with, the common one first.
func RunDecisions() []openrecall.Decision {
	return []openrecall.Decision{openrecall.DecisionKnownBenign, openrecall.DecisionFalsePositive, openrecall.DecisionReal}
}

// RunSeeds are the numbers of unanimous known_benign memories a family
// starts with: six or seven vouch (the guard bypasses from six), five is
// one short, none is no memory.
func RunSeeds() []int { return []int{6, 7, 5, 0, 8} }

// The kinds of RunOp, in the order RunOpKinds names them.
const (
	OpRetain    = iota // a person retains a decision about a new firing
	OpForget           // a person takes a memory back (memory forget)
	OpSupersede        // a person retains a decision in place of a memory
	OpDecide           // a person decides the family's newest group
	OpException        // a person adds an exception for the family
	OpRevoke           // a person revokes one of the family's exceptions
	opKinds
)

// RunOpKinds names the kinds of RunOp.
func RunOpKinds() []string {
	return []string{"retain", "forget", "supersede", "decide group", "add exception", "revoke exception"}
}

// RunOp is one thing a person does between two steps of a RunsPlan.
type RunOp struct {
	Kind     int // RunOpKinds index
	Family   int // RunFamilies index
	Decision int // RunDecisions index (retain, supersede, decide group)
	Expiry   int // RunMemoryExpiries (retain, supersede) or RunExceptionExpiries index
	// Which picks, modulo their number, the memory (forget, supersede) or
	// exception (revoke) of the family the op is about, oldest first.
	Which int
}

// RunFiring is one firing of a RunsPlan step.
type RunFiring struct {
	Family int // RunFamilies index
	Host   int
}

// RunStep is one batch of serve's inbox: the clock moves by its gap, the
// people act (Ops), then its firings are analysed at the new time. A step
// that restarts begins a new run (serve restarted: the run starts again
// from the store); any other continues the run as its next batch.
type RunStep struct {
	Restart bool
	Gap     int // RunGaps index
	Ops     []RunOp
	Firings []RunFiring
}

// RunsPlan is serve across batches and restarts on one store: the families'
// starting memories, the steps, and the workers of every run.
type RunsPlan struct {
	Seeds   []int // RunSeeds index per family (missing: 0, six memories)
	Steps   []RunStep
	Workers int
}

// Seed returns the number of memories family f starts with.
func (p RunsPlan) Seed(f int) int {
	if f < len(p.Seeds) {
		return RunSeeds()[p.Seeds[f]]
	}
	return RunSeeds()[0]
}

// RunStart is the time before the first step's gap.
func RunStart() time.Time { return time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC) }

// RunFiringLine renders a firing of family f on host at time t as the
// product's own alert object, with alert id id.
func RunFiringLine(f, host int, id string, t time.Time) string {
	line := StormFiring{Rule: RunFamilies()[f], Host: host}.Line(0, t)
	// StormFiring numbers its firings storm-N; a plan numbers its own.
	return replaceOnce(line, `"id":"storm-0"`, fmt.Sprintf(`"id":%q`, id))
}

func replaceOnce(s, old, repl string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + repl + s[i+len(old):]
		}
	}
	panic("gen: " + old + " not in " + s)
}

// RunsPlanGen generates plans of up to eight steps, each a restart one
// time in four, with up to three people's acts and four firings, most of
// the first family so that its groups continue across steps.
func RunsPlanGen() gopter.Gen {
	op := gg.Struct(reflect.TypeOf(RunOp{}), map[string]gopter.Gen{
		"Kind":     Index(opKinds, 0),
		"Family":   Index(len(RunFamilies()), 0.7),
		"Decision": Index(len(RunDecisions()), 0.7),
		"Expiry":   Index(len(RunExceptionExpiries()), 0.5),
		"Which":    IntUpTo(7),
	})
	firing := gg.Struct(reflect.TypeOf(RunFiring{}), map[string]gopter.Gen{
		"Family": Index(len(RunFamilies()), 0.7),
		"Host":   IntUpTo(3),
	})
	step := gg.Struct(reflect.TypeOf(RunStep{}), map[string]gopter.Gen{
		"Restart": gg.Weighted([]gg.WeightedGen{{Weight: 3, Gen: gg.Const(false)}, {Weight: 1, Gen: gg.Const(true)}}),
		"Gap":     Index(len(RunGaps()), 0.4),
		"Ops":     SliceUpTo(3, op, reflect.TypeOf(RunOp{})),
		"Firings": SliceUpTo(4, firing, reflect.TypeOf(RunFiring{})),
	})
	return gg.Struct(reflect.TypeOf(RunsPlan{}), map[string]gopter.Gen{
		"Seeds":   gg.SliceOfN(len(RunFamilies()), Index(len(RunSeeds()), 0.4), reflect.TypeOf(0)),
		"Steps":   SliceUpTo(8, step, reflect.TypeOf(RunStep{})),
		"Workers": gg.IntRange(1, 3),
	})
}

// ValidRunsPlan reports a plan out of its pools' ranges.
func ValidRunsPlan(p RunsPlan) error {
	if p.Workers < 1 || p.Workers > 3 || len(p.Steps) > 8 || len(p.Seeds) > len(RunFamilies()) {
		return fmt.Errorf("runs plan: workers %d, %d steps, %d seeds", p.Workers, len(p.Steps), len(p.Seeds))
	}
	if err := indexesIn(p.Seeds, len(RunSeeds()), "seed"); err != nil {
		return err
	}
	for _, s := range p.Steps {
		if err := indexesIn([]int{s.Gap}, len(RunGaps()), "gap"); err != nil {
			return err
		}
		if len(s.Ops) > 3 || len(s.Firings) > 4 {
			return fmt.Errorf("runs step: %d ops, %d firings", len(s.Ops), len(s.Firings))
		}
		for _, o := range s.Ops {
			if o.Kind < 0 || o.Kind >= opKinds || o.Family < 0 || o.Family >= len(RunFamilies()) || o.Decision < 0 ||
				o.Decision >= len(RunDecisions()) || o.Expiry < 0 || o.Expiry >= len(RunExceptionExpiries()) || o.Which < 0 {
				return fmt.Errorf("runs op %+v", o)
			}
		}
		for _, f := range s.Firings {
			if f.Family < 0 || f.Family >= len(RunFamilies()) || f.Host < 0 {
				return fmt.Errorf("runs firing %+v", f)
			}
		}
	}
	return nil
}
