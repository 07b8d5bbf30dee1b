// Package gen holds the property suite's named generators, one per domain
// noun (AlertFingerprintGen, RawAlertGen, MemoryMatchGen, StrongMatchSetGen,
// TriageResultGen, CostCurveGen, WorkflowInputGen, …), in one place.
//
// Every generator is built from the production vocabulary constants of the
// root package (openrecall.ErrorClasses, openrecall.MemoryDecisions, …), so a
// new vocabulary value widens the test space by itself. Empty values and edge
// values (exact thresholds, zero, the largest amounts) are included on
// purpose. Values are constructed valid, never filtered into existence, and
// every generator shrinks: pools are indexed so that shrinking moves toward
// the pool's first, simplest entry, composite values are built with
// gen.Struct (a bijection that keeps shrinking) or carry a hand-written
// shrinker whose candidates are valid by construction.
//
// All lists every named generator with its validity predicate; the health
// test checks each one (reject rate, determinism per seed, valid shrink
// candidates, a shrinker present).
package gen
