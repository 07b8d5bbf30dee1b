package property

import (
	"context"
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

// cacheOp is one step of a recall cache plan: a write through the cached
// store or through another store on the same file (another process), or a
// recall through the cached store.
type cacheOp struct {
	Kind  int // see the cacheOp* constants
	Inc   openrecall.Incident
	ID    openrecall.Identity
	FP    openrecall.Fingerprint
	Limit int
	// Repeat makes a recall ask about what the last recall asked: 1 with
	// its limit (it meets that recall's cache entry after the writes in
	// between), 2 with its own.
	Repeat int
}

const (
	cacheOpRetainOwn = iota
	cacheOpRetainOther
	cacheOpForgetOwn
	cacheOpForgetOther
	cacheOpRecall // and every kind above it
	cacheOpKinds  = cacheOpRecall + 3
)

// cachePlanGen draws plans of writes and recalls over a few families and
// identities, so that recalls repeat (cache hits) between writes.
func cachePlanGen() gopter.Gen {
	return gg.SliceOf(gg.Struct(reflect.TypeOf(cacheOp{}), map[string]gopter.Gen{
		"Kind":   gen.IntUpTo(cacheOpKinds - 1),
		"Inc":    gen.FamilyIncidentGen(),
		"ID":     gen.Of(gen.Identities(), 0.2),
		"FP":     gen.FamilyFingerprintGen(),
		"Limit":  gen.IntUpTo(12),
		"Repeat": gen.IntUpTo(2),
	}))
}

// checkRecallCache runs a plan on three Stores of one file: the cached one
// (recheck 0: PRAGMA data_version before every lookup, as the tightest
// setting analyze can have), another that writes as another process would,
// and a reference without a cache. Every recall through the cached store,
// asked twice so that the second is a hit, equals the reference's.
func checkRecallCache(plan []cacheOp) error {
	return withStores(3, func(ctx context.Context, ss []*memory.Store) error {
		cached, other, ref := ss[0], ss[1], ss[2]
		cached.EnableRecallCache(64, 0)
		var last *cacheOp
		for i, op := range plan {
			if op.Kind >= cacheOpRecall {
				op = repeatLast(op, last)
				last = &op
			}
			var err error
			switch op.Kind {
			case cacheOpRetainOwn:
				_, _, err = cached.Retain(ctx, op.Inc)
			case cacheOpRetainOther:
				_, _, err = other.Retain(ctx, op.Inc)
			case cacheOpForgetOwn, cacheOpForgetOther:
				s := cached
				if op.Kind == cacheOpForgetOther {
					s = other
				}
				if _, _, err = s.Forget(ctx, op.Inc.Normalized().ID); errors.Is(err, openrecall.ErrNotFound) {
					err = nil // never retained: nothing to forget
				}
			default:
				want, err := ref.Recall(ctx, op.ID, op.FP, op.Limit)
				if err != nil {
					return fmt.Errorf("recall error: step %d: reference: %v", i, err)
				}
				for try := range 2 {
					got, err := cached.Recall(ctx, op.ID, op.FP, op.Limit)
					if err != nil {
						return fmt.Errorf("recall error: step %d: cached: %v", i, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						return fmt.Errorf("cache differs: step %d, recall %d of %s %s limit %d through the cache is not the store's (-store +cache):\n%s",
							i, try+1, op.ID, op.FP, op.Limit, diff)
					}
				}
			}
			if err != nil {
				return fmt.Errorf("write error: step %d: %v", i, err)
			}
		}
		return nil
	})
}

// repeatLast returns recall op asking about what last asked, as op.Repeat
// says.
func repeatLast(op cacheOp, last *cacheOp) cacheOp {
	if op.Repeat > 0 && last != nil {
		op.ID, op.FP = last.ID, last.FP
		if op.Repeat == 1 {
			op.Limit = last.Limit
		}
	}
	return op
}

// classifyCachePlan labels plans by what they make the cache face.
func classifyCachePlan(plan []cacheOp) []string {
	labels := map[string]bool{}
	seen := map[string]bool{}
	wrote := map[int]bool{}
	var last *cacheOp
	for _, op := range plan {
		if op.Kind >= cacheOpRecall {
			op = repeatLast(op, last)
			last = &op
		}
		if op.Kind < cacheOpRecall {
			wrote[op.Kind] = true
			if op.Kind == cacheOpRetainOther && len(seen) > 0 {
				labels["another store retains after a recall"] = true
			}
			continue
		}
		key := fmt.Sprint(op.ID, op.FP, op.Limit)
		if seen[key] && len(wrote) > 0 {
			labels["a recall repeated after writes"] = true
		}
		seen[key] = true
	}
	if wrote[cacheOpForgetOwn] || wrote[cacheOpForgetOther] {
		labels["a forget"] = true
	}
	l := make([]string, 0, len(labels))
	for label := range labels {
		l = append(l, label)
	}
	sort.Strings(l)
	return l
}

// recallCacheProperty is the rule of the per-run recall cache.
func recallCacheProperty() []pbt.Property {
	return []pbt.Property{pbt.ForAll("P45_recall_cache_equals_store",
		"The per-run recall cache never changes a recall: through a store with the cache on, every recall (the first, and the same again, answered from the cache) equals the recall of a store without one on the same file, whatever this store and another one (another process) retained and forgot in between.",
		"CachePlanGen (FamilyIncidentGen, FamilyFingerprintGen)", cachePlanGen(), checkRecallCache,
		pbt.Expensive(3),
		pbt.Classify(classifyCachePlan),
		pbt.Cover("a recall repeated after writes", 20), pbt.Cover("another store retains after a recall", 20), pbt.Cover("a forget", 10),
		pbt.Pin("another store's retain is seen at once", []cacheOp{
			{Kind: cacheOpRecall, FP: gen.Families()[0], Limit: 5},
			{Kind: cacheOpRetainOther, Inc: openrecall.Incident{Fingerprint: gen.Families()[0], Decision: openrecall.DecisionKnownBenign, CreatedAt: gen.Epoch()}},
			{Kind: cacheOpRecall, FP: gen.Families()[0], Limit: 5},
		}),
	)}
}
