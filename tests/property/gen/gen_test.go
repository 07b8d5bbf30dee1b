package gen

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/leanovate/gopter"
)

func params(seed int64, size int) *gopter.GenParameters {
	return &gopter.GenParameters{MaxSize: size, MaxShrinkCount: 100, Rng: rand.New(rand.NewSource(seed))}
}

// TestGeneratorHealth checks every named generator: it rejects none of its
// own values, gives the same value for the same seed, has a shrinker that
// proposes something for non-trivial values, and every shrink candidate (two
// levels deep) is still valid.
func TestGeneratorHealth(t *testing.T) {
	const samples = 60
	for _, g := range All() {
		t.Run(g.Name, func(t *testing.T) {
			rejected, shrinkable := 0, 0
			for i := 0; i < samples; i++ {
				seed, size := int64(1000+i), i%40
				r := g.Gen(params(seed, size))
				v, ok := r.Retrieve()
				if !ok {
					rejected++
					continue
				}
				if err := g.Valid(v); err != nil {
					t.Fatalf("seed %d: generated an invalid value %#v: %v", seed, v, err)
				}
				again, _ := g.Gen(params(seed, size)).Retrieve()
				if fmt.Sprintf("%#v", again) != fmt.Sprintf("%#v", v) {
					t.Fatalf("seed %d: two values for one seed:\n%#v\n%#v", seed, v, again)
				}
				if r.Shrinker == nil {
					t.Fatal("no shrinker")
				}
				n := checkShrinks(t, g, r, v, 2)
				if n > 0 {
					shrinkable++
				}
			}
			if rejected > 0 {
				t.Errorf("rejected %d of %d of its own values", rejected, samples)
			}
			if shrinkable < samples/5 {
				t.Errorf("only %d of %d values have a shrink candidate: is a shrinker present?", shrinkable, samples)
			}
		})
	}
}

// checkShrinks checks up to 20 shrink candidates of v (5 below the first
// level), depth levels deep, and returns how many v had.
func checkShrinks(t *testing.T, g Named, r *gopter.GenResult, v any, depth int) int {
	t.Helper()
	sh := r.Shrinker(v)
	if r.Sieve != nil {
		sh = sh.Filter(r.Sieve)
	}
	n := 0
	limit := 20
	if depth < 2 {
		limit = 5
	}
	for c, ok := sh(); ok && n < limit; c, ok = sh() {
		n++
		if err := g.Valid(c); err != nil {
			t.Fatalf("shrink candidate %#v of %#v is invalid: %v", c, v, err)
		}
		if depth > 1 {
			checkShrinks(t, g, r, c, depth-1)
		}
	}
	return n
}

func TestFingerprintMutationsNeverCanonical(t *testing.T) {
	for m := range Mutations() {
		for at := 0; at < 40; at++ {
			for _, fp := range []FingerprintMutation{{Mutation: m, At: at}} {
				s := fp.Text()
				if s == fp.Fingerprint.String() {
					t.Fatalf("mutation %q at %d left the string canonical", Mutations()[m], at)
				}
			}
		}
	}
}
