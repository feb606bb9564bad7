package planner

import "testing"

// FuzzPlanner decodes the input as a session of operations (see session)
// and checks every answer against the naive reference.
func FuzzPlanner(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 4, 0, 5, 10, 2, 0, 3, 9, 4, 6, 0, 20, 2})
	f.Add([]byte{1, 7, 3, 0, 0, 255, 7, 1, 2, 0, 6, 1, 30, 5, 3, 4, 0, 6, 0, 255, 1, 1})
	f.Add([]byte{2, 5, 5, 3, 2, 10, 9, 9, 9, 3, 12, 4, 9, 9, 9, 6, 0, 250, 1, 1, 1, 4, 0, 7, 0, 240, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		src := &byteSource{b: in}
		s := newSession(src)
		for !src.done() {
			if err := s.step(); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.p.verify(); err != nil {
			t.Fatal(err)
		}
	})
}
