package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEndHeapOrder holds the ends' heap to (at, seq) order, pushes and
// pops interleaved.
func TestEndHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h endHeap
	var want, got []end
	seq := 0
	for round := range 200 {
		for range rng.IntN(5) {
			seq++
			e := end{at: int64(round + rng.IntN(20)), seq: seq}
			h.push(e)
			want = append(want, e)
		}
		if h.Len() > 0 && rng.IntN(2) == 0 {
			slices.SortFunc(want, func(a, b end) int {
				if a.at != b.at {
					return int(a.at - b.at)
				}
				return a.seq - b.seq
			})
			got = append(got, h.pop())
			if g, w := got[len(got)-1], want[0]; g != w {
				t.Fatalf("popped %+v, want %+v", g, w)
			}
			want = want[1:]
		}
	}
	for h.Len() > 0 {
		h.pop()
	}
}
