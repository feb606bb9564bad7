package resource

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// errInvalid marks a step whose request is malformed (flux-core's EINVAL).
var errInvalid = errors.New("invalid request")

// allocStep is one row of flux-core's src/common/librlist/test/rlist.c
// tables: a request, what it gets (result; "" = nothing now), and the
// allocated and available sets after it.
type allocStep struct {
	desc      string
	policy    Policy
	down      string // ranks down during this step only
	req       Request
	result    string
	feasible  error // Feasible's answer: nil, errInvalid or a sentinel
	allocated string
	avail     string
	free      bool // release the result again after checking
}

func uniform(nranks, ncores int) *rset.R {
	nodes := make([]rset.Node, nranks)
	for i := range nodes {
		nodes[i] = rset.Node{Rank: uint(i), Cores: idset.FromRange(0, uint(ncores-1))}
	}
	return rset.New(nodes)
}

func runSteps(t *testing.T, p *Pool, steps []allocStep) {
	t.Helper()
	for i, s := range steps {
		id := fluid.ID(i + 1)
		down := idset.MustParse(s.down)
		p.SetDown(down)
		err := p.Feasible(s.req)
		switch {
		case s.feasible == errInvalid:
			if err == nil || errors.Is(err, ErrUnsatisfiable) || errors.Is(err, ErrNoMatch) || errors.Is(err, ErrUnsatisfiableConstrained) {
				t.Errorf("%s: Feasible = %v, want a validation error", s.desc, err)
			}
		case !errors.Is(err, s.feasible) || (err == nil) != (s.feasible == nil):
			t.Errorf("%s: Feasible = %v, want %v", s.desc, err, s.feasible)
		}
		r, ok := p.Match(s.req, s.policy)
		switch {
		case s.result == "" && ok:
			t.Errorf("%s: Match = %v, want nothing", s.desc, r)
		case s.result != "" && !ok:
			t.Errorf("%s: Match found nothing, want %s", s.desc, s.result)
		case ok:
			if r.String() != s.result {
				t.Errorf("%s: Match = %s, want %s", s.desc, r, s.result)
			}
			if r.NSlots() != s.req.NSlots {
				t.Errorf("%s: nslots = %d, want %d", s.desc, r.NSlots(), s.req.NSlots)
			}
			if err := p.Allocate(id, r); err != nil {
				t.Fatalf("%s: Allocate: %v", s.desc, err)
			}
		}
		if got := p.AllocatedAll().String(); s.allocated != "" && got != s.allocated {
			t.Errorf("%s: allocated = %s, want %s", s.desc, got, s.allocated)
		}
		if got := p.Available().String(); got != s.avail {
			t.Errorf("%s: available = %s, want %s", s.desc, got, s.avail)
		}
		if s.free {
			if err := p.Release(id, nil); err != nil {
				t.Errorf("%s: Release: %v", s.desc, err)
			}
		}
		p.SetUp(down)
	}
}

// flux-core test/rlist.c test_2n_4c, worst-fit (sched-simple's default).
// The "3 nodes, 4 slots" row becomes 3 nodes, 3 slots: an uneven spread is
// refused as malformed here (see Request.Validate).
func TestFluxRlist2n4c(t *testing.T) {
	runSteps(t, NewPool(uniform(2, 4)), []allocStep{
		{desc: "too large of slot", req: Request{NSlots: 1, CoresPerSlot: 5}, feasible: ErrUnsatisfiable, avail: "rank[0-1]/core[0-3]"},
		{desc: "too many slots", req: Request{NSlots: 9, CoresPerSlot: 1}, feasible: ErrUnsatisfiable, avail: "rank[0-1]/core[0-3]"},
		{desc: "invalid number of nodes", req: Request{NNodes: -1, NSlots: 1, CoresPerSlot: 1}, feasible: errInvalid, avail: "rank[0-1]/core[0-3]"},
		{desc: "too many nodes", req: Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1}, feasible: ErrUnsatisfiable, avail: "rank[0-1]/core[0-3]"},
		{desc: "nodes > slots", req: Request{NNodes: 2, NSlots: 1, CoresPerSlot: 1}, feasible: errInvalid, avail: "rank[0-1]/core[0-3]"},
		{desc: "invalid number of slots", req: Request{NSlots: 0, CoresPerSlot: 1}, feasible: errInvalid, avail: "rank[0-1]/core[0-3]"},
		{desc: "invalid slot size", req: Request{NSlots: 1, CoresPerSlot: -1}, feasible: errInvalid, avail: "rank[0-1]/core[0-3]"},
		{desc: "all nodes down: waits, never denied", down: "0-1", req: Request{NSlots: 1, CoresPerSlot: 1}, avail: ""},
		{desc: "single core", req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank0/core0", allocated: "rank0/core0", avail: "rank0/core[1-3] rank1/core[0-3]", free: true},
		{desc: "single core with down rank", down: "0", req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank1/core0", allocated: "rank1/core0", avail: "rank1/core[1-3]"},
		{desc: "another core, all up", req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank0/core0", allocated: "rank[0-1]/core0", avail: "rank[0-1]/core[1-3]"},
		{desc: "another core", req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank0/core1", allocated: "rank0/core[0-1] rank1/core0", avail: "rank0/core[2-3] rank1/core[1-3]"},
		{desc: "1 slot of size 3 lands on the emptier node", req: Request{NSlots: 1, CoresPerSlot: 3}, result: "rank1/core[1-3]", allocated: "rank0/core[0-1] rank1/core[0-3]", avail: "rank0/core[2-3]"},
		{desc: "4 slots of 1 core do not fit now", req: Request{NSlots: 4, CoresPerSlot: 1}, allocated: "rank0/core[0-1] rank1/core[0-3]", avail: "rank0/core[2-3]"},
		{desc: "remaining 2 cores", req: Request{NSlots: 1, CoresPerSlot: 2}, result: "rank0/core[2-3]", allocated: "rank[0-1]/core[0-3]", avail: ""},
	})
}

// flux-core test/rlist.c test_6n_4c: best-fit.
func TestFluxRlist6n4cBestFit(t *testing.T) {
	runSteps(t, NewPool(uniform(6, 4)), []allocStep{
		{desc: "1 core", policy: BestFit, req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank0/core0", avail: "rank0/core[1-3] rank[1-5]/core[0-3]"},
		{desc: "1 slot of 3 fits on rank0", policy: BestFit, req: Request{NSlots: 1, CoresPerSlot: 3}, result: "rank0/core[1-3]", avail: "rank[1-5]/core[0-3]"},
		{desc: "2 slots of 2 fit on rank1", policy: BestFit, req: Request{NSlots: 2, CoresPerSlot: 2}, result: "rank1/core[0-3]", avail: "rank[2-5]/core[0-3]"},
		{desc: "3 slots of 1", policy: BestFit, req: Request{NSlots: 3, CoresPerSlot: 1}, result: "rank2/core[0-2]", avail: "rank2/core3 rank[3-5]/core[0-3]"},
		{desc: "3 more slots of 1 fill rank2 first", policy: BestFit, req: Request{NSlots: 3, CoresPerSlot: 1}, result: "rank2/core3 rank3/core[0-1]", allocated: "rank[0-2]/core[0-3] rank3/core[0-1]", avail: "rank3/core[2-3] rank[4-5]/core[0-3]"},
	})
}

// flux-core test/rlist.c test_1024n_4c: node counts, worst-fit.
func TestFluxRlist1024n4c(t *testing.T) {
	runSteps(t, NewPool(uniform(1024, 4)), []allocStep{
		{desc: "512 nodes with 2 cores", req: Request{NNodes: 512, NSlots: 512, CoresPerSlot: 2}, result: "rank[0-511]/core[0-1]",
			allocated: "rank[0-511]/core[0-1]", avail: "rank[0-511]/core[2-3] rank[512-1023]/core[0-3]"},
		{desc: "512 slots of 4 cores", req: Request{NSlots: 512, CoresPerSlot: 4}, result: "rank[512-1023]/core[0-3]",
			allocated: "rank[0-511]/core[0-1] rank[512-1023]/core[0-3]", avail: "rank[0-511]/core[2-3]", free: true},
		{desc: "1 core on 10 nodes", req: Request{NNodes: 10, NSlots: 10, CoresPerSlot: 1}, result: "rank[512-521]/core0",
			allocated: "rank[0-511]/core[0-1] rank[512-521]/core0", avail: "rank[0-511]/core[2-3] rank[512-521]/core[1-3] rank[522-1023]/core[0-3]"},
		{desc: "2 cores on 128 nodes", req: Request{NNodes: 128, NSlots: 256, CoresPerSlot: 1}, result: "rank[522-649]/core[0-1]",
			allocated: "rank[0-511,522-649]/core[0-1] rank[512-521]/core0", avail: "rank[0-511,522-649]/core[2-3] rank[512-521]/core[1-3] rank[650-1023]/core[0-3]"},
	})
}

// flux-core test/rlist.c test_exclusive.
func TestFluxRlistExclusive(t *testing.T) {
	runSteps(t, NewPool(uniform(4, 4)), []allocStep{
		{desc: "exclusive without nnodes", req: Request{NSlots: 1, CoresPerSlot: 1, Exclusive: true}, feasible: errInvalid, avail: "rank[0-3]/core[0-3]"},
		{desc: "one core first", req: Request{NSlots: 1, CoresPerSlot: 1}, result: "rank0/core0", avail: "rank0/core[1-3] rank[1-3]/core[0-3]"},
		{desc: "2 nodes exclusively", req: Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Exclusive: true}, result: "rank[1-2]/core[0-3]",
			allocated: "rank0/core0 rank[1-2]/core[0-3]", avail: "rank0/core[1-3] rank3/core[0-3]"},
		{desc: "2 more nodes exclusively wait", req: Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Exclusive: true},
			allocated: "rank0/core0 rank[1-2]/core[0-3]", avail: "rank0/core[1-3] rank3/core[0-3]"},
		{desc: "but 1 node works", req: Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, result: "rank3/core[0-3]",
			allocated: "rank0/core0 rank[1-3]/core[0-3]", avail: "rank0/core[1-3]"},
		{desc: "last 3 cores non-exclusively", req: Request{NSlots: 3, CoresPerSlot: 1}, result: "rank0/core[1-3]", allocated: "rank[0-3]/core[0-3]", avail: ""},
	})
}

// Which ranks and cores each policy picks from the same state: rank0 has
// 1 free core, rank1 3, rank2 4, rank3 2.
func TestMatchPolicies(t *testing.T) {
	setup := func(t *testing.T) *Pool {
		p := NewPool(uniform(4, 4))
		for id, s := range []string{"rank0/core[0-2]", "rank1/core0", "rank3/core[0-1]"} {
			if err := p.Allocate(fluid.ID(100+id), summary(t, s)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	tests := []struct {
		name string
		req  Request
		want map[Policy]string // "" = does not fit
	}{
		{"one core", Request{NSlots: 1, CoresPerSlot: 1}, map[Policy]string{
			FirstFit: "rank0/core3", WorstFit: "rank2/core0", BestFit: "rank0/core3"}},
		{"two cores", Request{NSlots: 1, CoresPerSlot: 2}, map[Policy]string{
			FirstFit: "rank1/core[1-2]", WorstFit: "rank2/core[0-1]", BestFit: "rank3/core[2-3]"}},
		{"three cores", Request{NSlots: 1, CoresPerSlot: 3}, map[Policy]string{
			FirstFit: "rank1/core[1-3]", WorstFit: "rank2/core[0-2]", BestFit: "rank1/core[1-3]"}},
		// Slots are packed: each node in policy order takes all it can.
		{"five single slots", Request{NSlots: 5, CoresPerSlot: 1}, map[Policy]string{
			FirstFit: "rank0/core3 rank1/core[1-3] rank2/core0",
			WorstFit: "rank1/core1 rank2/core[0-3]",
			BestFit:  "rank0/core3 rank1/core[1-2] rank3/core[2-3]"}},
		{"two nodes, two cores each", Request{NNodes: 2, NSlots: 2, CoresPerSlot: 2}, map[Policy]string{
			FirstFit: "rank1/core[1-2] rank2/core[0-1]",
			WorstFit: "rank1/core[1-2] rank2/core[0-1]",
			BestFit:  "rank1/core[1-2] rank3/core[2-3]"}},
		{"exclusive node", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, map[Policy]string{
			FirstFit: "rank2/core[0-3]", WorstFit: "rank2/core[0-3]", BestFit: "rank2/core[0-3]"}},
		{"too much now", Request{NSlots: 11, CoresPerSlot: 1}, map[Policy]string{}},
		{"three nodes of three cores", Request{NNodes: 3, NSlots: 3, CoresPerSlot: 3}, map[Policy]string{}},
	}
	for _, tc := range tests {
		for _, policy := range []Policy{FirstFit, WorstFit, BestFit} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, policy), func(t *testing.T) {
				p := setup(t)
				r, ok := p.Match(tc.req, policy)
				got := ""
				if ok {
					got = r.String()
				}
				if diff := cmp.Diff(tc.want[policy], got); diff != "" {
					t.Errorf("Match (-want +got):\n%s", diff)
				}
				// Match places, it does not allocate.
				if p.Jobs() != 3 {
					t.Errorf("Match changed the pool: %d jobs", p.Jobs())
				}
			})
		}
	}
}

func mustQuery(t *testing.T, q string) constraint.Constraint { return mustQueryB(t, q) }

func mustQueryB(t testing.TB, q string) constraint.Constraint {
	t.Helper()
	c, err := constraint.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// GPUs and constraints against testInventory: node[0-3] with 4 cores,
// node[2-3] with 2 GPUs, properties batch (all), gpu (2-3), debug (3).
func TestFeasibleAndMatchGPUsConstraints(t *testing.T) {
	tests := []struct {
		name     string
		req      Request
		feasible error
		match    string // worst-fit, on the idle pool; "" = none
	}{
		{"one gpu", Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 1}, nil, "rank2/core0,gpu0"},
		{"four gpus pack two nodes", Request{NSlots: 4, CoresPerSlot: 1, GPUsPerSlot: 1}, nil, "rank[2-3]/core[0-1],gpu[0-1]"},
		{"five gpus", Request{NSlots: 5, CoresPerSlot: 1, GPUsPerSlot: 1}, ErrUnsatisfiable, ""},
		{"three gpus per slot", Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 3}, ErrUnsatisfiable, ""},
		{"gpus per node", Request{NNodes: 2, NSlots: 2, CoresPerSlot: 2, GPUsPerSlot: 2}, nil, "rank[2-3]/core[0-1],gpu[0-1]"},
		{"gpus on three nodes", Request{NNodes: 3, NSlots: 3, CoresPerSlot: 1, GPUsPerSlot: 1}, ErrUnsatisfiable, ""},
		{"too many cores per node", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 5}, ErrUnsatisfiable, ""},
		{"exclusive takes gpus too", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true, Constraint: mustQuery(t, "gpu")}, nil, "rank2/core[0-3],gpu[0-1]"},
		{"constraint picks the node", Request{NSlots: 1, CoresPerSlot: 1, Constraint: mustQuery(t, "debug")}, nil, "rank3/core0"},
		{"constraint by host", Request{NSlots: 2, CoresPerSlot: 4, Constraint: mustQuery(t, "host:node[0,2]")}, nil, "rank[0,2]/core[0-3]"},
		{"constraint by rank", Request{NSlots: 1, CoresPerSlot: 1, Constraint: mustQuery(t, "rank:1")}, nil, "rank1/core0"},
		{"negated constraint", Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 1, Constraint: mustQuery(t, "^debug")}, nil, "rank2/core0,gpu0"},
		// librlist's constraint notes.
		{"no node matches", Request{NSlots: 1, CoresPerSlot: 1, Constraint: mustQuery(t, "nosuch")}, ErrNoMatch, ""},
		{"matching nodes too small", Request{NSlots: 5, CoresPerSlot: 1, Constraint: mustQuery(t, "debug")}, ErrUnsatisfiableConstrained, ""},
		{"gpus outside the constraint", Request{NSlots: 1, CoresPerSlot: 1, GPUsPerSlot: 1, Constraint: mustQuery(t, "^gpu")}, ErrUnsatisfiableConstrained, ""},
		// The whole-inventory total is checked before constraints, as librlist does.
		{"over the total, constrained", Request{NSlots: 17, CoresPerSlot: 1, Constraint: mustQuery(t, "nosuch")}, ErrUnsatisfiable, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(testInventory(t))
			if err := p.Feasible(tc.req); !errors.Is(err, tc.feasible) || (err == nil) != (tc.feasible == nil) {
				t.Errorf("Feasible = %v, want %v", err, tc.feasible)
			}
			r, ok := p.Match(tc.req, WorstFit)
			got := ""
			if ok {
				got = r.String()
				// The R carries the chosen nodes' hostnames and properties.
				for _, n := range r.Nodes() {
					inv, _ := p.Inventory().Node(n.Rank)
					if n.Hostname != inv.Hostname || !cmp.Equal(n.Properties, inv.Properties) {
						t.Errorf("node %d: host %q props %v, want %q %v", n.Rank, n.Hostname, n.Properties, inv.Hostname, inv.Properties)
					}
				}
				if _, err := r.MarshalJSON(); err != nil {
					t.Errorf("MarshalJSON: %v", err)
				}
			}
			if diff := cmp.Diff(tc.match, got); diff != "" {
				t.Errorf("Match (-want +got):\n%s", diff)
			}
		})
	}
}

// A drained node still counts for feasibility: a job that needs it waits.
func TestFeasibleIgnoresDownAndAllocations(t *testing.T) {
	p := NewPool(testInventory(t))
	p.SetDown(idset.MustParse("0-3"))
	if err := p.Allocate(1, summary(t, "rank2/core[0-3],gpu[0-1]")); err != nil {
		t.Fatal(err)
	}
	req := Request{NNodes: 4, NSlots: 4, CoresPerSlot: 4, Exclusive: true}
	if err := p.Feasible(req); err != nil {
		t.Errorf("Feasible = %v, want nil", err)
	}
	if r, ok := p.Match(req, WorstFit); ok {
		t.Errorf("Match = %v on down nodes", r)
	}
}

func TestRequestFromJobspec(t *testing.T) {
	tests := []struct {
		name string
		opts jobspec.Options
		want Request
	}{
		{"defaults", jobspec.Options{}, Request{NSlots: 1, CoresPerSlot: 1}},
		{"tasks and cores", jobspec.Options{NTasks: 4, CoresPerTask: 2, Duration: 60}, Request{NSlots: 4, CoresPerSlot: 2, Duration: 60}},
		{"gpus", jobspec.Options{NTasks: 2, GPUsPerTask: 1}, Request{NSlots: 2, CoresPerSlot: 1, GPUsPerSlot: 1}},
		// flux submit: -N without -n runs one task per node and implies -x.
		{"nodes alone", jobspec.Options{Nodes: 2}, Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Exclusive: true}},
		{"nodes and tasks", jobspec.Options{Nodes: 2, NTasks: 4}, Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1}},
		{"uneven tasks round up per node", jobspec.Options{Nodes: 2, NTasks: 3}, Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1}},
		{"constraint", jobspec.Options{Constraints: json.RawMessage(`{"properties":["gpu"]}`)},
			Request{NSlots: 1, CoresPerSlot: 1, Constraint: mustQuery(t, "gpu")}},
		{"targets", jobspec.Options{Extra: map[string]any{jobspec.TargetsKey: []string{"r2", "default"}}},
			Request{NSlots: 1, CoresPerSlot: 1, Targets: []string{"r2", "default"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Command = []string{"true"}
			js, err := jobspec.FromOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RequestFromJobspec(js)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(constraint.Constraint.Equal)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := RequestFromJobspec(nil); err == nil {
		t.Error("nil jobspec accepted")
	}
	// Malformed targets are the job's fault: the scheduler denies it with
	// the error.
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Extra: map[string]any{jobspec.TargetsKey: "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RequestFromJobspec(js)
	if diff := cmp.Diff("attributes.system.targets must be a non-empty array of allocation ids", errText(err)); diff != "" {
		t.Errorf("bad targets (-want +got):\n%s", diff)
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]Policy{"first": FirstFit, "worst": WorstFit, "best": BestFit, "first-fit": FirstFit, "worst-fit": WorstFit, "best-fit": BestFit} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", in, got, err, want)
		}
		if _, err := ParsePolicy(got.String()); err != nil {
			t.Errorf("ParsePolicy(%q.String()): %v", got, err)
		}
	}
	if _, err := ParsePolicy("fcfs"); err == nil || err.Error() != "unknown allocation mode: fcfs" {
		t.Errorf("ParsePolicy(fcfs) err = %v", err)
	}
}
