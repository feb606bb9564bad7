package reservation

import (
	"fmt"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
)

// The acceptance target (issue 5): creating, extending and releasing a
// reservation on an instance with 10,000 hosts and 10,000 jobs each take
// under 10 ms. The jobs are derived children spread over 100 reservations
// of 50 nodes each; every reserved node is busy.
const (
	benchNodes = 10000
	benchRes   = 100
	benchPer   = 50
	benchJobs  = 10000
)

type benchWorld struct {
	s    *State
	busy []bool
	next fluid.ID
}

func (w *benchWorld) idle(rank uint) bool { return !w.busy[rank] }

func newBench(b *testing.B) *benchWorld {
	b.Helper()
	names := make([]string, benchNodes)
	for i := range names {
		names[i] = fmt.Sprintf("h%05d", i)
	}
	s, err := New(Support{}, names, nil, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	w := &benchWorld{s: s, busy: make([]bool, benchNodes), next: 1}
	for range benchRes {
		w.reserve(b)
	}
	s.Dirty()
	return w
}

// reserve creates a reservation of benchPer nodes owned by a new job, with
// benchJobs/benchRes children spawned into it running on its nodes.
func (w *benchWorld) reserve(b *testing.B) *Reservation {
	owner := w.next
	w.next++
	ch, err := w.s.Allocate(Request{Op: OpNew, Count: benchPer, ReqID: fmt.Sprintf("q%d", owner), Inherit: ptr(InheritChild), Idle: w.idle}, app(owner), 1)
	if err != nil {
		b.Fatal(err)
	}
	r := ch.Reservation
	for _, name := range r.Nodes {
		n, _ := w.s.Node(name)
		w.busy[n.Rank] = true
	}
	for range benchJobs / benchRes {
		// Spawned into r by a tool: a derived child through r alone.
		w.s.Accepted(w.next, 0, []string{r.ID})
		w.next++
	}
	return r
}

func BenchmarkCreate(b *testing.B) {
	w := newBench(b)
	var made []string
	b.ResetTimer()
	for i := range b.N {
		if len(made) == 1000 { // keep free nodes: release what was made
			b.StopTimer()
			for _, id := range made {
				if _, err := w.s.Allocate(Request{Op: OpRelease, ID: id}, alice, 2); err != nil {
					b.Fatal(err)
				}
			}
			made = made[:0]
			w.s.Dirty()
			b.StartTimer()
		}
		ch, err := w.s.Allocate(Request{Op: OpNew, Count: 1, ReqID: fmt.Sprintf("c%d", i), Idle: w.idle}, alice, 2)
		if err != nil {
			b.Fatal(err)
		}
		w.s.Dirty()
		made = append(made, ch.Reservation.ID)
	}
}

func BenchmarkExtend(b *testing.B) {
	for _, by := range []string{"id", "req-id"} {
		b.Run(by, func(b *testing.B) {
			w := newBench(b)
			b.ResetTimer()
			for i := range b.N {
				if i%4000 == 3999 { // 5,000 nodes are free
					b.StopTimer()
					w = newBench(b)
					b.StartTimer()
				}
				r, _ := w.s.Get("r50")
				req := Request{Op: OpExtend, Count: 1, Time: 10, Idle: w.idle}
				if by == "id" {
					req.ID = r.ID
				} else {
					req.ReqID = r.ReqID
				}
				if _, err := w.s.Allocate(req, app(r.Owner.Job), 2); err != nil {
					b.Fatal(err)
				}
				w.s.Dirty()
			}
		})
	}
}

func BenchmarkRelease(b *testing.B) {
	w := newBench(b)
	live := w.s.All(false)
	b.ResetTimer()
	for range b.N {
		if len(live) == 0 {
			b.StopTimer()
			w = newBench(b)
			live = w.s.All(false)
			b.StartTimer()
		}
		r := live[len(live)-1]
		live = live[:len(live)-1]
		if _, err := w.s.Allocate(Request{Op: OpRelease, ID: r.ID}, app(r.Owner.Job), 2); err != nil {
			b.Fatal(err)
		}
		w.s.Dirty()
	}
}

// BenchmarkJobEnded is the owner-exit path on the same instance: each
// owner's end is checked against every reservation.
func BenchmarkJobEnded(b *testing.B) {
	w := newBench(b)
	jobs := alive{}
	for id := fluid.ID(1); id < w.next; id++ {
		jobs[id] = true
	}
	owners := w.s.All(false)
	b.ResetTimer()
	for i := range b.N {
		// CHILD: the reservation outlives its owner while its 100
		// children live, so the same ends can be replayed.
		id := owners[i%len(owners)].Owner.Job
		w.s.JobEnded(id, jobs, 3)
		w.s.Dirty()
	}
}
