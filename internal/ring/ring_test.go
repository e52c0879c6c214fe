package ring

import (
	"slices"
	"testing"
)

// Against a slice that keeps everything: the ring holds its last Size
// values, in order either way.
func TestRingKeepsTheNewest(t *testing.T) {
	for _, size := range []int{1, 3, 20} {
		r := New[int](size)
		var all []int
		for v := range 3*size + 2 {
			r.Push(v)
			all = append(all, v)
			want := all[max(0, len(all)-size):]
			if got := r.AppendOldestFirst(nil); !slices.Equal(got, want) || r.Len() != len(want) {
				t.Fatalf("size %d after %d: oldest first %v, want %v", size, len(all), got, want)
			}
			rev := slices.Clone(want)
			slices.Reverse(rev)
			for n := range size + 2 {
				if got := r.NewestFirst(n); !slices.Equal(got, rev[:min(n, len(rev))]) {
					t.Fatalf("size %d after %d: newest %d %v, want %v", size, len(all), n, got, rev[:min(n, len(rev))])
				}
			}
		}
	}
	if r := New[int](0); r.Size() != 1 || len(r.NewestFirst(-1)) != 0 {
		t.Fatal("a ring of size 0 is not one of size 1")
	}
}
