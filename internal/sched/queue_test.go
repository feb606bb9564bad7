package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// The queue's answers against a sorted slice, over random inserts,
// removals and changes of class.
func TestQueueAgainstSlice(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs int
		seed uint64
	}{{"empty", 0, 1}, {"one", 1, 2}, {"few", 9, 3}, {"many", 600, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 0))
			var q queue
			var ref []*pending // sorted
			all := make([]*pending, 0, tc.jobs)
			for i := range tc.jobs {
				p := &pending{id: fluid.ID(i + 1), priority: int64(rng.IntN(3)), tsubmit: float64(rng.IntN(50)),
					amount: [3]int64{int64(rng.IntN(8)), int64(rng.IntN(2)), 0}}
				p.loud, p.try = rng.IntN(4) == 0, rng.IntN(3) > 0
				all = append(all, p)
			}
			in := map[*pending]bool{}
			check := func() {
				t.Helper()
				if q.Len() != len(ref) {
					t.Fatalf("Len %d, want %d", q.Len(), len(ref))
				}
				keys := append([]*pending{nil}, all...)
				for range 40 {
					a, b := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
					cores, gpus := int64(rng.IntN(10)-1), int64(rng.IntN(3)-1)
					// The slice's answers.
					start := 0
					if a != nil {
						start, _ = slices.BinarySearchFunc(ref, a, compare)
						if start < len(ref) && ref[start] == a {
							start++
						}
					}
					var after, found *pending
					if start < len(ref) {
						after = ref[start]
					}
					for _, x := range ref[start:] {
						if x.loud || (x.try && x.amount[0] <= cores && x.amount[1] <= gpus) {
							found = x
							break
						}
					}
					end := len(ref)
					if b != nil {
						end, _ = slices.BinarySearchFunc(ref, b, compare)
					}
					if got := q.after(a); got != after {
						t.Fatalf("after(%v) = %v, want %v", a, got, after)
					}
					if got := q.find(a, cores, gpus); got != found {
						t.Fatalf("find(%v, %d, %d) = %v, want %v", a, cores, gpus, got, found)
					}
					if got, want := q.between(a, b), max(end-start, 0); (b == nil || a == nil || compare(a, b) < 0) && got != want {
						t.Fatalf("between(%v, %v) = %d, want %d", a, b, got, want)
					}
				}
			}
			for range 3 * tc.jobs {
				p := all[rng.IntN(len(all))]
				switch {
				case !in[p]:
					q.insert(p)
					i, _ := slices.BinarySearchFunc(ref, p, compare)
					ref = slices.Insert(ref, i, p)
					in[p] = true
				case rng.IntN(2) == 0:
					q.remove(p)
					i, _ := slices.BinarySearchFunc(ref, p, compare)
					ref = slices.Delete(ref, i, i+1)
					in[p] = false
				default:
					p.loud, p.try = !p.loud, rng.IntN(2) == 0
					q.refresh(p)
				}
				check()
			}
			check()
		})
	}
}

// A pass that passes over the jobs it would leave as they are, and takes
// the last pass's planned starts again where nothing they were made from
// changed (replan), sends exactly what a pass that looks at every one
// and makes every planned start anew sends (lookAtAll, noReplan), under
// every policy, several queues at once, queue depths, constraints,
// memory, priorities, cancels, frees, down ranks and paused passes.
// With atEnd, jobs end at their planned end, as in a replay, so that
// planned starts are kept over starts and ends (startsAsPlanned,
// current), in one queue of the policy named.
func TestPassOverAgreesWithLookingAtAll(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seed   uint64
		depth  int
		memory bool
		rounds int
		atEnd  string
	}{
		{"at-end-conservative", 1, 0, false, 400, "cons"},
		{"at-end-conservative-2", 6, 0, false, 400, "cons"},
		{"at-end-hybrid", 2, 0, false, 400, "hyb"},
		{"at-end-memory", 4, 0, true, 300, "cons"},
		{"unbounded", 1, 0, false, 400, ""},
		{"unbounded-2", 2, 0, false, 400, ""},
		{"depth-3", 3, 3, false, 400, ""},
		{"memory", 4, 0, true, 400, ""},
		{"memory-depth-5", 5, 5, true, 300, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 7))
			cfg := []resource.ConfigEntry{
				{Hosts: "n[0-3]", Cores: "0-3", Properties: []string{"a"}},
				{Hosts: "n[4-5]", Cores: "0-1", GPUs: "0"},
				{Hosts: "n[6-7]", Cores: "0-7"},
			}
			if tc.memory {
				for i := range cfg {
					cfg[i].Memory = "8G"
				}
			}
			var scheds [2]*Scheduler
			for i := range scheds {
				inv, err := resource.FromConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				s := New(inv, QueuePolicy{Kind: FCFS, QueueDepth: tc.depth}, 0)
				s.SetQueuePolicy("easy", QueuePolicy{Kind: EASY, QueueDepth: tc.depth, Match: resource.BestFit})
				s.SetQueuePolicy("cons", QueuePolicy{Kind: Conservative, QueueDepth: tc.depth})
				s.SetQueuePolicy("hyb", QueuePolicy{Kind: Hybrid, QueueDepth: tc.depth, ReservationDepth: 2})
				s.lookAtAll, s.noReplan = i == 1, i == 1
				scheds[i] = s
			}
			queues := []string{"", "easy", "cons", "hyb"}
			if tc.seed%2 == 0 {
				queues = []string{"easy"} // one queue, the simulator's case
			}
			if tc.atEnd != "" {
				queues = []string{tc.atEnd}
			}
			ends := map[fluid.ID]float64{} // with atEnd: each job's planned end
			durs := map[fluid.ID]float64{}
			now := 1000.0
			id := fluid.ID(0)
			var pending, running []fluid.ID
			each := func(f func(s *Scheduler) []schedproto.AllocResponse) []string {
				var outs [2]string
				for i, s := range scheds {
					outs[i] = render(f(s))
				}
				if outs[0] != outs[1] {
					t.Fatalf("passing over:\n%s\nlooking at all:\n%s", outs[0], outs[1])
				}
				return strings.Split(outs[0], "\n")
			}
			for range tc.rounds {
				for range rng.IntN(6) {
					id++
					o := jobspec.Options{Command: []string{"true"}, NTasks: 1 + rng.IntN(10), Queue: queues[rng.IntN(len(queues))]}
					if rng.IntN(8) > 0 {
						o.Duration = float64(rng.IntN(400))
					}
					if rng.IntN(6) == 0 {
						o.Constraints = map[string]any{"properties": []string{"a"}}
					}
					if rng.IntN(10) == 0 {
						o.NTasks, o.GPUsPerTask = 1, 1
					}
					if tc.memory && rng.IntN(3) == 0 {
						o.MemPerSlot = uint64(1+rng.IntN(6)) << 30
					}
					js, err := jobspec.FromOptions(o)
					if err != nil {
						t.Fatal(err)
					}
					raw, err := js.MarshalJSON()
					if err != nil {
						t.Fatal(err)
					}
					a := schedproto.Alloc{ID: id, Priority: int64(16 + rng.IntN(2)), TSubmit: now, Jobspec: raw}
					each(func(s *Scheduler) []schedproto.AllocResponse {
						out, err := s.Alloc(a)
						if err != nil {
							t.Fatal(err)
						}
						return out
					})
					pending = append(pending, id)
					durs[id] = o.Duration
				}
				switch r := rng.IntN(20); {
				case tc.atEnd != "" && r >= 4 && r < 14:
					// Every job whose planned end has come ends, most
					// often exactly then, as in a replay (and now and
					// then one ends early, below).
					running = slices.DeleteFunc(running, func(j fluid.ID) bool {
						if ends[j] > now {
							return false
						}
						for _, s := range scheds {
							if _, err := s.Free(j); err != nil {
								t.Fatal(err)
							}
						}
						return true
					})
				case r < 8 && len(running) > 0:
					i := rng.IntN(len(running))
					for _, s := range scheds {
						if _, err := s.Free(running[i]); err != nil {
							t.Fatal(err)
						}
					}
					running = slices.Delete(running, i, i+1)
				case r < 10 && len(pending) > 0:
					c := pending[rng.IntN(len(pending))]
					each(func(s *Scheduler) []schedproto.AllocResponse { return s.Cancel(c) })
				case r == 10 && len(pending) > 0:
					pr := schedproto.Prioritize{Jobs: [][2]uint64{{uint64(pending[rng.IntN(len(pending))]), uint64(10 + rng.IntN(10))}}}
					for _, s := range scheds {
						s.Prioritize(pr)
					}
				case r == 11:
					ranks, err := idset.Parse(fmt.Sprint(rng.IntN(8)))
					if err != nil {
						t.Fatal(err)
					}
					for _, s := range scheds {
						s.SetDown(ranks)
					}
				case r == 12:
					for _, s := range scheds {
						s.SetUp(s.Pool().Inventory().Ranks())
					}
				}
				now += float64(rng.IntN(60))
				if tc.atEnd != "" && rng.IntN(2) == 0 {
					// To the next planned end, so that jobs end then.
					next := math.Inf(1)
					for _, j := range running {
						next = min(next, ends[j])
					}
					if next > now && !math.IsInf(next, 1) {
						now = next
					}
				}
				// A pass, in Steps of a random budget at one time: passed
				// over jobs count toward no budget, so the two pause at
				// different jobs, and only the whole pass compares.
				budget := rng.IntN(4)
				for _, line := range each(func(s *Scheduler) []schedproto.AllocResponse {
					var all []schedproto.AllocResponse
					for s.Busy() {
						out, _ := s.Step(now, budget)
						all = append(all, out...)
					}
					return all
				}) {
					if f := strings.Fields(line); len(f) > 1 && f[1] == "SUCCESS" {
						var jid uint64
						fmt.Sscan(f[0], &jid)
						running = append(running, fluid.ID(jid))
						ends[fluid.ID(jid)] = math.Inf(1)
						if d := durs[fluid.ID(jid)]; d > 0 {
							ends[fluid.ID(jid)] = now + d
						}
					}
				}
				pending = slices.DeleteFunc(pending, func(p fluid.ID) bool { _, ok := scheds[0].byID[p]; return !ok })
			}
		})
	}
}

// render writes responses one a line, all of each.
func render(resps []schedproto.AllocResponse) string {
	var b strings.Builder
	for i, r := range resps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d %s %s %s %s", uint64(r.ID), r.Type, r.Note, r.R, r.Annotations)
	}
	return b.String()
}

// TestStartAsPlannedShorterThanPlanned holds hold's epoch rule for a job
// that starts at its planned start but holds less than that start did:
// a job without a duration is planned until forever, and granted until
// the inventory's expiration. The planned starts after it were made
// with it holding its cores for good, so they must be made anew (the
// epoch moves); kept, C below would keep the start it had behind D's
// end (1300) rather than the expiration's (1100). Only the fitted case
// (place found the job's whole time free, nothing of the last pass
// left) may keep the epoch for a span other than the one planned.
func TestStartAsPlannedShorterThanPlanned(t *testing.T) {
	var scheds [2]*Scheduler
	for i := range scheds {
		inv, err := resource.FromConfig([]resource.ConfigEntry{{Hosts: "n0", Cores: "0-3"}})
		if err != nil {
			t.Fatal(err)
		}
		s := New(inv.WithTimes(0, 1100), QueuePolicy{Kind: Conservative}, 0)
		s.lookAtAll, s.noReplan = i == 1, i == 1
		scheds[i] = s
	}
	now := 1000.0
	each := func(f func(s *Scheduler) []schedproto.AllocResponse) string {
		t.Helper()
		var outs [2]string
		for i, s := range scheds {
			outs[i] = render(f(s))
		}
		if outs[0] != outs[1] {
			t.Fatalf("at %v, keeping planned starts:\n%s\nmaking them anew:\n%s", now, outs[0], outs[1])
		}
		return outs[0]
	}
	alloc := func(id fluid.ID, ntasks int, dur float64) {
		t.Helper()
		js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, NTasks: ntasks, Duration: dur})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := js.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		each(func(s *Scheduler) []schedproto.AllocResponse {
			out, err := s.Alloc(schedproto.Alloc{ID: id, Priority: 16, TSubmit: now + float64(id)/100, Jobspec: raw})
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
	pass := func() string {
		return each(func(s *Scheduler) []schedproto.AllocResponse { return s.Schedule(now) })
	}
	alloc(1, 4, 10) // X: every core until 1010
	pass()
	alloc(2, 2, 0)   // A: planned at 1010 until forever
	alloc(3, 2, 290) // D: planned at 1010 until 1300
	alloc(4, 2, 5)   // C: planned at 1300, behind A (forever) and D
	if out := pass(); !strings.Contains(out, `"t_estimate":1300`) {
		t.Fatalf("C is not planned at 1300 behind A and D:\n%s", out)
	}
	now = 1010 // X ends at its planned end: the planned starts stay
	for _, s := range scheds {
		if _, err := s.Free(1); err != nil {
			t.Fatal(err)
		}
	}
	if out := pass(); !strings.Contains(out, `"t_estimate":1100`) {
		t.Fatalf("C is not planned at 1100, when A's R expires:\n%s", out)
	}
}
