package loop_test

import (
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/loop"
	"github.com/fluxq/fluxq/internal/wire"
)

// A peer closed for breaking the protocol (a refused ready) is started
// again after a pause that doubles with each breach in a row, up to a
// cap, and starts from the shortest once a successor comes up well.
func TestPeerBreachBackoff(t *testing.T) {
	p := &loop.Peer{}
	a, _ := wire.Pipe()
	b, _ := wire.Pipe()
	if _, ok := loop.PauseAfter(p, a); ok {
		t.Fatal("a connection that did not breach has a breach pause")
	}
	steps := []struct {
		healthy bool
		want    time.Duration
	}{
		{false, 100 * time.Millisecond},
		{false, 200 * time.Millisecond},
		{false, 400 * time.Millisecond},
		{false, 800 * time.Millisecond},
		{false, 1600 * time.Millisecond},
		{false, 3200 * time.Millisecond},
		{false, 5 * time.Second},
		{false, 5 * time.Second},
		{true, 100 * time.Millisecond},
	}
	for i, s := range steps {
		if s.healthy {
			loop.Healthy(p)
		}
		c := a
		if i%2 == 1 {
			c = b
		}
		if got := loop.Breach(p, c); got != s.want {
			t.Errorf("breach %d: pause %v, want %v", i+1, got, s.want)
		}
		if got, ok := loop.PauseAfter(p, c); !ok || got != s.want {
			t.Errorf("breach %d: pause after = %v %v, want %v", i+1, got, ok, s.want)
		}
	}
}
