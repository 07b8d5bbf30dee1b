package property

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/google/go-cmp/cmp"
	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/memory"
	"github.com/openrecall/openrecall/tests/property/gen"
	"github.com/openrecall/openrecall/tests/property/pbt"
)

// existOp is one step of an existence index plan: a write through one of
// the stores on the database, a restart of the indexed store, or a recall
// through the stores that have the index.
type existOp struct {
	Kind int // see the existOp* constants
	// Via is the store a write goes through: existViaIndexed,
	// existViaCached or existViaOther.
	Via   int
	Inc   openrecall.Incident
	ID    openrecall.Identity
	FP    openrecall.Fingerprint
	Limit int
}

const (
	existOpRetain = iota
	existOpImport
	existOpForget
	existOpSupersede
	existOpReopen
	existOpRecall // and every kind above it
	existOpKinds  = existOpRecall + 4
)

const (
	existViaIndexed = iota // the store with the index alone
	existViaCached         // the store with the recall cache and the index
	existViaOther          // a store without either: another process
	existVias
)

// existPlanGen draws plans of writes, restarts and recalls over the
// families and identities of the generators, whose four critical tuples
// (one of them empty) make recalls that no memory answers common early in
// a plan and after forgets.
func existPlanGen() gopter.Gen {
	return gg.SliceOf(gg.Struct(reflect.TypeOf(existOp{}), map[string]gopter.Gen{
		"Kind":  gen.IntUpTo(existOpKinds - 1),
		"Via":   gen.IntUpTo(existVias - 1),
		"Inc":   gen.FamilyIncidentGen(),
		"ID":    gen.Of(gen.Identities(), 0.2),
		"FP":    gen.FamilyFingerprintGen(),
		"Limit": gen.IntUpTo(6),
	}))
}

// checkExistIndex runs a plan on four Stores of one database: one with the
// existence index alone, one with the recall cache and the index (both
// with recheck 0, the data version read before every recall), another
// that writes as another process would, and a reference with neither, the
// plain twin. Writes go through any of the first three; a restart closes
// the indexed store and opens it again. Every recall through the two
// stores with the index equals the reference's.
func checkExistIndex(plan []existOp) error {
	loc, done, err := scratchLocation("existindex")
	if err != nil {
		return err
	}
	defer done()
	ctx := context.Background()
	var stores [existVias + 1]*memory.Store
	defer func() {
		for _, s := range stores {
			if s != nil {
				_ = s.Close()
			}
		}
	}()
	open := func(i int) error {
		s, err := memory.Open(ctx, loc, memory.Options{Now: fixedNow})
		if err != nil {
			return fmt.Errorf("setup: open store: %v", err)
		}
		switch i {
		case existViaIndexed:
			s.EnableRecallIndex(0)
		case existViaCached:
			s.EnableRecallCache(64, 0)
		}
		stores[i] = s
		return nil
	}
	for i := range stores {
		if err := open(i); err != nil {
			return err
		}
	}
	ref := stores[existVias]
	for i, op := range plan {
		via := stores[op.Via]
		var err error
		switch op.Kind {
		case existOpRetain:
			_, _, err = via.Retain(ctx, op.Inc)
		case existOpImport:
			line, _ := json.Marshal(op.Inc)
			var rep memory.ImportReport
			if rep, err = via.Import(ctx, bytes.NewReader(append(line, '\n'))); err == nil && len(rep.Rejected) > 0 {
				err = fmt.Errorf("import report %+v", rep)
			}
		case existOpForget:
			if _, _, err = via.Forget(ctx, op.Inc.Normalized().ID); errors.Is(err, openrecall.ErrNotFound) {
				err = nil // never retained: nothing to forget
			}
		case existOpSupersede:
			_, _, _, err = via.Supersede(ctx, op.Inc.Normalized().ID, supersedingOf(op))
			if errors.Is(err, openrecall.ErrNotFound) || errors.Is(err, openrecall.ErrInvalid) {
				err = nil // never retained, or already taken back: nothing stored
			}
		case existOpReopen:
			if err = stores[existViaIndexed].Close(); err == nil {
				stores[existViaIndexed] = nil
				err = open(existViaIndexed)
			}
		default:
			want, err := ref.Recall(ctx, op.ID, op.FP, op.Limit)
			if err != nil {
				return fmt.Errorf("recall error: step %d: reference: %v", i, err)
			}
			for _, v := range []int{existViaIndexed, existViaCached} {
				got, err := stores[v].Recall(ctx, op.ID, op.FP, op.Limit)
				if err != nil {
					return fmt.Errorf("recall error: step %d: %s: %v", i, existViaName(v), err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					return fmt.Errorf("index differs: step %d, recall of %s %s limit %d through the %s is not the plain store's (-plain +indexed):\n%s",
						i, op.ID, op.FP, op.Limit, existViaName(v), diff)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("write error: step %d: %v", i, err)
		}
	}
	return nil
}

// supersedingOf is the memory a supersede step stores in place of op.Inc:
// op's identity and fingerprint, so that a supersede moves a memory from
// one family to another.
func supersedingOf(op existOp) openrecall.Incident {
	inc := op.Inc
	inc.Identity, inc.Fingerprint = op.ID, op.FP
	inc.Note += " (superseded)"
	return inc
}

func existViaName(v int) string {
	return [...]string{"indexed store", "cached store", "other store"}[v]
}

// existRecallKey is the key of the model classifyExistPlan keeps: what a
// recall of id and fp needs a memory to share (its critical values, and
// its identity when it reads only its own tiers); "" when it runs no
// query.
func existRecallKey(id openrecall.Identity, fp openrecall.Fingerprint) string {
	crit := fmt.Sprintf("%q %q %q %q", fp.ErrorClass, fp.ServiceRole, fp.AttackPattern, fp.Environment)
	switch {
	case fp.ErrorClass != "" || fp.ServiceRole != "":
		return crit
	case !id.IsZero():
		return fmt.Sprintf("%q %q %s", id.Rule, id.Service, crit)
	}
	return ""
}

// classifyExistPlan labels plans by what they make the index face, from a
// model that keeps the keys of every memory retained (forgets ignored).
func classifyExistPlan(plan []existOp) []string {
	labels := map[string]bool{}
	have := map[string]bool{}
	missed := map[string]bool{}
	for _, op := range plan {
		switch op.Kind {
		case existOpRetain, existOpImport, existOpSupersede:
			inc := op.Inc
			if op.Kind == existOpSupersede {
				inc = supersedingOf(op)
			}
			for _, k := range []string{existRecallKey(openrecall.Identity{}, inc.Fingerprint), existRecallKey(inc.Identity, inc.Fingerprint)} {
				if missed[k] {
					labels[[...]string{"this store retains what a recall missed", "the cached store retains what a recall missed",
						"another store retains what a recall missed"}[op.Via]] = true
				}
				have[k] = true
			}
		case existOpForget:
			if op.Via == existViaOther {
				labels["another store forgets"] = true
			}
		case existOpReopen:
			labels["a restart"] = true
		default:
			if k := existRecallKey(op.ID, op.FP); k != "" && !have[k] {
				labels["a recall no memory answers"] = true
				missed[k] = true
			}
		}
	}
	l := make([]string, 0, len(labels))
	for label := range labels {
		l = append(l, label)
	}
	sort.Strings(l)
	return l
}

// existIndexProperty is the rule of recall's existence index.
func existIndexProperty() []pbt.Property {
	first := gen.Families()[0]
	return []pbt.Property{pbt.ForAll("P175_existence_index_equals_query",
		"Recall's existence index never changes a recall: through a store with the index (alone, or with the recall cache), every recall equals the recall of a store without either on the same database (the plain twin), whatever this store, the cached store and another one (another process) retained, imported, forgot and superseded in between, and across a restart of the indexed store.",
		"ExistPlanGen (FamilyIncidentGen, FamilyFingerprintGen)", existPlanGen(), checkExistIndex,
		pbt.Expensive(3),
		pbt.Classify(classifyExistPlan),
		pbt.Cover("a recall no memory answers", 40), pbt.Cover("another store retains what a recall missed", 5),
		pbt.Cover("this store retains what a recall missed", 10), pbt.Cover("another store forgets", 15), pbt.Cover("a restart", 25),
		pbt.Pin("another store's retain after a recall that found nothing", []existOp{
			{Kind: existOpRecall, FP: first, Limit: 5},
			{Kind: existOpRetain, Via: existViaOther, Inc: openrecall.Incident{Fingerprint: first, Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}},
			{Kind: existOpRecall, FP: first, Limit: 5},
		}),
		pbt.Pin("this store's retain after a recall that found nothing", []existOp{
			{Kind: existOpRecall, ID: gen.Identities()[1], Limit: 5},
			{Kind: existOpRetain, Via: existViaIndexed, Inc: openrecall.Incident{Identity: gen.Identities()[1], Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}},
			{Kind: existOpRecall, ID: gen.Identities()[1], Limit: 5},
		}),
	)}
}
