package gen

import (
	"math"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// IntUpTo returns ints in [0, max], uniform, shrinking toward 0 and never
// out of range (gopter's IntRange shrinks through negative values and relies
// on a sieve that gen.Weighted drops).
func IntUpTo(max int) gopter.Gen { return Index(max+1, 0) }

// Index returns a generator of indexes in [0, n): 0 with probability p0,
// otherwise uniform over [1, n); p0 ≤ 0 means uniform over [0, n). It shrinks toward 0 by halving the distance,
// and every shrink candidate stays in range. gopter's Weighted drops the
// range sieve of its parts (so their shrinks leave the range); Index is the
// weighted pick that keeps it.
func Index(n int, p0 float64) gopter.Gen {
	if n < 1 {
		panic("gen.Index needs a non-empty pool")
	}
	return func(gp *gopter.GenParameters) *gopter.GenResult {
		i := 0
		switch {
		case p0 <= 0:
			i = gp.Rng.Intn(n)
		case n > 1 && gp.Rng.Float64() >= p0:
			i = 1 + gp.Rng.Intn(n-1)
		}
		r := gopter.NewGenResult(i, IndexShrinker)
		r.Sieve = func(v any) bool {
			x, ok := v.(int)
			return ok && x >= 0 && x < n
		}
		return r
	}
}

// IndexShrinker shrinks a non-negative int toward 0: 0, x/2, 3x/4, …, x-1.
func IndexShrinker(v any) gopter.Shrink {
	x := v.(int)
	half := x
	return func() (any, bool) {
		if half <= 0 {
			return nil, false
		}
		c := x - half
		half /= 2
		return c, true
	}
}

// Of returns a generator of the values of pool (which must hold no duplicates):
// pool[0] with probability p0, otherwise uniform; it shrinks toward pool[0].
func Of[T comparable](pool []T, p0 float64) gopter.Gen {
	pool = append([]T(nil), pool...)
	return gopter.DeriveGen(
		func(i int) T { return pool[i] },
		func(v T) int {
			for i, x := range pool {
				if x == v {
					return i
				}
			}
			return 0
		},
		Index(len(pool), p0),
	)
}

// Prepend returns v followed by the values of pool.
func Prepend[T any](v T, pool []T) []T { return append([]T{v}, pool...) }

// SliceUpTo returns a generator of slices of at most max elements (and at most
// the size parameter); it shrinks by removing elements and shrinking each.
func SliceUpTo(max int, elem gopter.Gen, typ reflect.Type) gopter.Gen {
	return func(gp *gopter.GenParameters) *gopter.GenResult {
		p := *gp
		if p.MaxSize > max {
			p.MaxSize = max
		}
		p.MinSize = 0
		return gg.SliceOf(elem, typ)(&p)
	}
}

// ScoreEdges returns the edge scores every score generator draws often: zero,
// one, the default strong-match threshold and the values just beside it, and
// the three similarity levels memory can return.
func ScoreEdges() []float64 {
	return []float64{0, 1, 0.85, math.Nextafter(0.85, 0), math.Nextafter(0.85, 1), 89.0 / 98, 80.0 / 98, 78.0 / 98, 0.5, 0.9}
}

// scoreGen returns scores in [0, 1]: an edge value (index < len(edges)) or a
// uniform value in millionths. It shrinks toward 0.
func scoreGen(edges []float64) gopter.Gen {
	n := len(edges)
	return gopter.DeriveGen(
		func(kind, millionths int) float64 {
			if kind < n {
				return edges[kind]
			}
			return float64(millionths) / 1e6
		},
		func(s float64) (int, int) {
			for i, e := range edges {
				if e == s {
					return i, 0
				}
			}
			return n, int(math.Round(s * 1e6))
		},
		Index(n+1, 0.1),
		Index(1_000_001, 0),
	)
}

// joinPieces returns the pieces idx names (each index modulo the pool), in
// order, as one string: how the index-built texts become text.
func joinPieces(pool []string, idx []int) string {
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(pool[i%len(pool)])
	}
	return b.String()
}
