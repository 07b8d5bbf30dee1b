package memory

// boxes hands out the interface values a statement binds, boxing a value
// once for the rows of a write that bind it again: an audit batch binds the
// same step names, models, outcomes, batch and time in row after row, an
// entry's prev_hash is the hash of the row before, a group member's id and
// time go to two statements. database/sql takes arguments as []any, and
// boxing a string or a large integer allocates; a box handed out twice is
// the same value, so what is bound, and written, does not change.
//
// It remembers the last len(vals) distinct values (round robin); the zero
// value is ready to use. Not safe for concurrent use: one per write.
type boxes[T comparable] struct {
	vals  [8]T
	boxed [8]any
	next  int
}

// of returns v as an interface value, the one handed out before for an
// equal v when it is still remembered.
func (b *boxes[T]) of(v T) any {
	for i := range b.boxed {
		if b.boxed[i] != nil && b.vals[i] == v {
			return b.boxed[i]
		}
	}
	x := any(v)
	b.vals[b.next], b.boxed[b.next] = v, x
	b.next = (b.next + 1) % len(b.boxed)
	return x
}
