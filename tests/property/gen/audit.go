package gen

import (
	"fmt"
	"reflect"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// TamperKinds names the ways TrailCase tampers with a sealed trail; "none"
// (the first) leaves it untouched.
func TamperKinds() []string {
	return []string{
		"none",
		"edit-entry",       // one field of one audit entry
		"edit-cost",        // one field of one cost link
		"edit-state",       // one field of the head records or the keyed boundary
		"delete-entry",     // one audit entry
		"delete-cost",      // one cost link
		"swap-entries",     // two audit entries change places in stored order
		"swap-costs",       // two cost links change places in stored order
		"truncate-entries", // cut the audit chain and roll its head back
		"truncate-costs",   // cut the cost chain and roll its head back
		"rehash",           // edit an entry and re-hash it and the rest without the key
		"rehash-downgrade", // re-hash the whole chain unkeyed and move the boundary past it
	}
}

// TrailCase is a sealed trail (audit entries, the first of them written
// before the chain was keyed, and keyed cost points), a checkpoint of its
// head, and one way to tamper with it.
type TrailCase struct {
	// MoreEntries and MoreCosts: the trail holds 2+MoreEntries entries and
	// 2+MoreCosts cost points.
	MoreEntries, MoreCosts int
	// Legacy mod (entries+1) entries were written before keying.
	Legacy int
	// Kind indexes TamperKinds.
	Kind int
	// Target, Other and Field choose what is tampered with (each taken
	// modulo what there is to choose from).
	Target, Other, Field int
}

// Entries returns the number of audit entries.
func (c TrailCase) Entries() int { return 2 + c.MoreEntries }

// Costs returns the number of cost points.
func (c TrailCase) Costs() int { return 2 + c.MoreCosts }

// LegacyEntries returns how many entries were written before keying.
func (c TrailCase) LegacyEntries() int { return c.Legacy % (c.Entries() + 1) }

// Tamper returns the name of the case's tampering.
func (c TrailCase) Tamper() string { return TamperKinds()[c.Kind] }

// TrailCaseGen generates trails of 2 to 40 entries and 2 to 20 cost points
// with one tampering; about one case in ten is untouched.
func TrailCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(TrailCase{}), map[string]gopter.Gen{
		"MoreEntries": IntUpTo(38),
		"MoreCosts":   IntUpTo(18),
		"Legacy":      IntUpTo(40),
		"Kind":        Index(len(TamperKinds()), 0.1),
		"Target":      IntUpTo(40),
		"Other":       IntUpTo(40),
		"Field":       IntUpTo(30),
	})
}

// ValidTrailCase checks the ranges TrailCaseGen keeps.
func ValidTrailCase(c TrailCase) error {
	switch {
	case c.MoreEntries < 0 || c.MoreEntries > 38 || c.MoreCosts < 0 || c.MoreCosts > 18:
		return fmt.Errorf("size out of range: %+v", c)
	case c.Kind < 0 || c.Kind >= len(TamperKinds()):
		return fmt.Errorf("kind %d out of range", c.Kind)
	case c.Legacy < 0 || c.Target < 0 || c.Other < 0 || c.Field < 0:
		return fmt.Errorf("negative choice: %+v", c)
	}
	return nil
}
