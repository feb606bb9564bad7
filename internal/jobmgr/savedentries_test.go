package jobmgr

import "testing"

// A turn's saved entries come back in the order they were saved, across
// blocks, and a reset leaves one empty block, whatever the turn before
// it touched.
func TestSavedEntries(t *testing.T) {
	var s savedEntries
	for _, n := range []int{0, 1, savedBlock, 2*savedBlock + 3, 5} {
		es := make([]entry, n)
		for i := range es {
			s.add(savedEntry{e: &es[i]})
		}
		i := 0
		s.each(func(v *savedEntry) {
			if v.e != &es[i] {
				t.Fatalf("%d saved: entry %d is not the %dth saved", n, i, i)
			}
			i++
		})
		if i != n || s.n != n {
			t.Fatalf("%d saved: %d come back, n = %d", n, i, s.n)
		}
		s.reset()
		if s.n != 0 || len(s.blocks) > 1 || (len(s.blocks) == 1 && len(s.blocks[0]) != 0) {
			t.Fatalf("after %d, reset leaves %d blocks, n = %d", n, len(s.blocks), s.n)
		}
		if len(s.blocks) == 1 && cap(s.blocks[0]) > 0 && s.blocks[0][:1][0].e != nil {
			t.Fatalf("after %d, reset keeps a pointer to an entry", n)
		}
	}
}
