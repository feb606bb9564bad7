package planner

import (
	"math/rand/v2"
	"testing"
)

type randSource struct{ r *rand.Rand }

func (s randSource) next() byte { return byte(s.r.Uint32()) }

// TestAgainstReference runs random sessions against the naive reference:
// every FreeAt, FreeDuring, EarliestFit and Add answer must agree, and the
// tree must stay consistent with its own spans.
func TestAgainstReference(t *testing.T) {
	for seed := range uint64(8) {
		src := randSource{rand.New(rand.NewPCG(seed, 0x706c616e))}
		s := newSession(src)
		for i := range 3000 {
			if err := s.step(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
			if i%50 == 0 {
				if err := s.p.verify(); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, i, err)
				}
			}
		}
		if err := s.p.verify(); err != nil {
			t.Fatalf("seed %d end: %v", seed, err)
		}
	}
}
