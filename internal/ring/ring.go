// Package ring is the module's bounded ring of the newest values: what a
// thread's status keeps of its delivered reports (relay) and what watch
// keeps of its notification feed. Pushing past its size evicts the oldest
// value. It is not safe for concurrent use: its owner locks around it.
package ring

// Ring keeps the newest Size values pushed. Make one with New; its memory
// grows with what is pushed, up to Size values.
type Ring[T any] struct {
	buf  []T
	head int // the oldest value's index once buf is full
	size int
}

// New returns an empty ring of size values (at least 1).
func New[T any](size int) Ring[T] { return Ring[T]{size: max(size, 1)} }

// Size is the most values the ring keeps.
func (r *Ring[T]) Size() int { return r.size }

// Len is how many values it holds now, at most Size.
func (r *Ring[T]) Len() int { return len(r.buf) }

// Push adds v as the newest value, evicting the oldest when full.
func (r *Ring[T]) Push(v T) {
	if len(r.buf) < r.size {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.head] = v
	r.head = (r.head + 1) % r.size
}

// AppendOldestFirst appends every value to dst, oldest first.
func (r *Ring[T]) AppendOldestFirst(dst []T) []T {
	dst = append(dst, r.buf[r.head:]...)
	return append(dst, r.buf[:r.head]...)
}

// NewestFirst returns up to n values, newest first, in a new slice.
func (r *Ring[T]) NewestFirst(n int) []T {
	n = max(min(n, len(r.buf)), 0)
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, r.buf[(r.head-1-i+2*len(r.buf))%len(r.buf)])
	}
	return out
}
