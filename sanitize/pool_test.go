package sanitize

import (
	"strings"
	"sync"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testtext"
)

// Clean reuses its output buffers (pool.go): whatever an earlier call left
// in one, long or short, limited or not, and with calls running at once,
// each result is the one a Writer (which does not use the pool) gives.
func TestPooledBuffers(t *testing.T) {
	long := testtext.Terminal(64 << 10)
	ins := []string{
		long, "\x1b[31mred\x1b[0m", hostileInput(8 << 10), "a\tb", long[:5000] + "\x00", "x\x1b[1my",
		strings.Repeat("é\x1b[0m", 3000), "\u200b",
	}
	limits := []int{0, 3, 80, 1000}
	want := map[[2]int]string{}
	for i, in := range ins {
		for j, limit := range limits {
			s, err := streamed(in, limit, []int{len(in) / 2})
			if err != nil {
				t.Fatal(err)
			}
			want[[2]int{i, j}] = s
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 40 {
				i, j := (n+g)%len(ins), (n/len(ins)+g)%len(limits)
				if got := Clean(ins[i], limits[j]); got != want[[2]int{i, j}] {
					t.Errorf("Clean(input %d, %d) after other calls = %+q, want %+q", i, limits[j], got[:min(len(got), 80)], want[[2]int{i, j}][:min(len(want[[2]int{i, j}]), 80)])
					return
				}
			}
		})
	}
	wg.Wait()
}
