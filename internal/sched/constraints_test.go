package sched

import (
	"fmt"
	"testing"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
)

// Backfilling with constraints and targets (issue 13, item 1): a job's
// constraint narrows where its planned start may be, never whether it
// gets one, and no job started now takes what a planned start counts on. The
// harness's clock starts at 5000.

// requiring adds an RFC 31 constraint to o.
func requiring(o jobspec.Options, c map[string]any) jobspec.Options {
	o.Constraints = c
	return o
}

func props(p ...string) map[string]any { return map[string]any{"properties": p} }
func hosts(h ...string) map[string]any { return map[string]any{"hostlist": h} }
func withHosts(c map[string]any) func(jobspec.Options) jobspec.Options {
	return func(o jobspec.Options) jobspec.Options { return requiring(o, c) }
}

// The scenario on 3 nodes x 2 cores, every node with property
// batch: A (4 cores, 60 s) runs; B (6 cores, 60 s) waits; C (1 core,
// 300 s); D (1 core, 10 s). B's shadow time is 5060, when A ends. D ends
// before it and backfills; C would end after it with no extra core and
// waits (easy, hybrid-1), or is planned after B (conservative). The same
// whether the jobs have no constraint, one every node satisfies, or name
// every host: such a constraint narrows nothing.
func TestConstraintKeepsPlannedStart(t *testing.T) {
	kinds := []struct {
		name string
		with func(jobspec.Options) jobspec.Options
	}{
		{"none", func(o jobspec.Options) jobspec.Options { return o }},
		{"properties", withHosts(props("batch"))},
		{"hostlist", withHosts(hosts("node[1-3]"))},
	}
	policies := []struct {
		kind  Kind
		depth int
		c     string
	}{
		{EASY, 0, "3 ANNOTATE insufficient resources"},
		{Hybrid, 1, "3 ANNOTATE insufficient resources"},
		{Hybrid, 2, "3 ANNOTATE insufficient resources eta=5120"},
		{Conservative, 0, "3 ANNOTATE insufficient resources eta=5120"},
	}
	for _, k := range kinds {
		for _, pol := range policies {
			t.Run(fmt.Sprintf("%s/%s-%d", k.name, pol.kind, pol.depth), func(t *testing.T) {
				h := newHarness(t, resource.WorstFit, resource.ConfigEntry{Hosts: "node[1-3]", Cores: "0-1", Properties: []string{"batch"}})
				h.s.def = QueuePolicy{Kind: pol.kind, ReservationDepth: pol.depth}
				h.run(do(alloc(1, k.with(cores(4, 60))), alloc(2, k.with(cores(6, 60))), alloc(3, k.with(cores(1, 300))), alloc(4, k.with(cores(1, 10)))),
					"1 SUCCESS rank[0-1]/core[0-1]",
					"2 ANNOTATE insufficient resources eta=5060",
					pol.c,
					"4 SUCCESS rank2/core0",
				)
				// D ends; B starts at its shadow time, not later.
				h.run(do(at(5010), free(4)), "4 FREE")
				// C is the head now: with one planned start it gets it.
				want := []string{"1 FREE", "2 SUCCESS rank[0-2]/core[0-1]"}
				if pol.c == "3 ANNOTATE insufficient resources" {
					want = append(want, "3 ANNOTATE insufficient resources eta=5120")
				}
				h.run(do(at(5060), free(1)), want...)
			})
		}
	}
}

// A constraint that narrows: 4 nodes x 2 cores, ranks 0-1 have property
// a. Job 1 (3 cores on a) holds rank 0 and one core of rank 1 until 5060.
// Job 2 (4 cores on a) can start only when job 1 ends: its planned start
// claims ranks 0-1 for [5060, 5120). First-fit would put job 3 (1 core,
// anywhere, 300 s) on rank 1's free core, which it would still hold at
// 5060: it goes to rank 2 instead. Job 4 (1 core on a, 100 s) would end
// after 5060 on a claimed node: it waits (easy) or is planned after job
// 2 (conservative). Job 5 (1 core on a, 10 s) ends before 5060 and
// backfills on rank 1.
func TestNarrowPlannedStart(t *testing.T) {
	tests := []struct {
		kind Kind
		j4   string
	}{
		{EASY, "4 ANNOTATE insufficient resources"},
		{Hybrid, "4 ANNOTATE insufficient resources eta=5120"},
		{Conservative, "4 ANNOTATE insufficient resources eta=5120"},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			h := newHarness(t, resource.FirstFit,
				resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1", Properties: []string{"a"}},
				resource.ConfigEntry{Hosts: "node[2-3]", Cores: "0-1"})
			h.s.def = QueuePolicy{Kind: tc.kind, Match: resource.FirstFit}
			a := withHosts(props("a"))
			h.run(do(alloc(1, a(cores(3, 60))), alloc(2, a(cores(4, 60))), alloc(3, cores(1, 300)), alloc(4, a(cores(1, 100))), alloc(5, a(cores(1, 10)))),
				"1 SUCCESS rank0/core[0-1] rank1/core0",
				"2 ANNOTATE insufficient resources eta=5060",
				"3 SUCCESS rank2/core0",
				tc.j4,
				"5 SUCCESS rank1/core1",
			)
			h.run(do(at(5010), free(5)), "5 FREE")
			want := []string{"1 FREE", "2 SUCCESS rank[0-1]/core[0-1]"}
			if tc.kind == EASY {
				want = append(want, "4 ANNOTATE insufficient resources eta=5120")
			}
			h.run(do(at(5060), free(1)), want...)
		})
	}
}

// Overlapping feasible sets see each other's claims. 3 nodes x 1 core:
// rank 0 has a, rank 1 a and b, rank 2 b; job 1 holds all three until
// 5100. Job 2 (2 cores on a) is planned on ranks 0-1 at 5100; job 3 (1
// core on b) on rank 2 at 5100, rank 1 being claimed; job 4 (2 cores on
// b) must wait for job 2's claim on rank 1 to end, at 5200.
func TestOverlappingClaims(t *testing.T) {
	h := newHarness(t, resource.FirstFit,
		resource.ConfigEntry{Hosts: "node0", Cores: "0", Properties: []string{"a"}},
		resource.ConfigEntry{Hosts: "node1", Cores: "0", Properties: []string{"a", "b"}},
		resource.ConfigEntry{Hosts: "node2", Cores: "0", Properties: []string{"b"}})
	h.s.def = QueuePolicy{Kind: Conservative, Match: resource.FirstFit}
	a, b := withHosts(props("a")), withHosts(props("b"))
	h.run(do(alloc(1, cores(3, 100)), alloc(2, a(cores(2, 100))), alloc(3, b(cores(1, 100))), alloc(4, b(cores(2, 50)))),
		"1 SUCCESS rank[0-2]/core0",
		"2 ANNOTATE insufficient resources eta=5100",
		"3 ANNOTATE insufficient resources eta=5100",
		"4 ANNOTATE insufficient resources eta=5200",
	)
	h.run(do(at(5100), free(1)), "1 FREE", "2 SUCCESS rank[0-1]/core0", "3 SUCCESS rank2/core0")
	h.run(do(at(5200), free(2), free(3)), "2 FREE", "3 FREE", "4 SUCCESS rank[1-2]/core0")
}

// Jobs in a node reservation's session get their planned starts on its
// nodes. Ranks 2-3 are r1's. Job 1 (3 cores in r1) holds rank 2 and one
// core of rank 3 until 5060; job 2 (4 cores in r1) is planned at 5060; job 3 (1 core
// in r1, 300 s) would hold rank 3's last core past 5060 and waits; job 4
// (1 core in r1, 10 s) backfills there. Job 5, in the default session,
// is not concerned.
func TestSessionPlannedStart(t *testing.T) {
	for _, kind := range []Kind{EASY, Hybrid, Conservative} {
		t.Run(kind.String(), func(t *testing.T) {
			h := newHarness(t, resource.WorstFit, fourHosts2Cores)
			h.s.def = QueuePolicy{Kind: kind}
			j3 := "3 ANNOTATE insufficient resources"
			if kind != EASY {
				j3 += " eta=5120"
			}
			r1 := func(o jobspec.Options) jobspec.Options { return targeting(o, "r1") }
			h.run(do(sessions("r1=2-3", ""), alloc(1, r1(cores(3, 60))), alloc(2, r1(cores(4, 60))), alloc(3, r1(cores(1, 300))),
				alloc(4, r1(cores(1, 10))), alloc(5, cores(1, 300))),
				"1 SUCCESS rank2/core[0-1] rank3/core0",
				"2 ANNOTATE insufficient resources eta=5060",
				j3,
				"4 SUCCESS rank3/core1",
				"5 SUCCESS rank0/core0",
			)
			h.run(do(at(5010), free(4)), "4 FREE")
			want := []string{"1 FREE", "2 SUCCESS rank[2-3]/core[0-1]"}
			if kind == EASY {
				want = append(want, "3 ANNOTATE insufficient resources eta=5120")
			}
			h.run(do(at(5060), free(1)), want...)
		})
	}
}

// A job that may run in r1 or the default session is backfilled on r1
// when the default session's nodes are what a planned start counts on.
// Ranks 0-1 are the default session, rank 2 is r1's. Job 1 (3 cores)
// holds rank 0 and one core of rank 1 until 5060; job 2 (4 cores) is
// planned at 5060; job 3 (1 core, 300 s, r1 or default) would take rank
// 1's free core by first-fit and delay job 2: it runs on rank 2.
func TestMixedTargetsBackfill(t *testing.T) {
	h := newHarness(t, resource.FirstFit, resource.ConfigEntry{Hosts: "node[0-2]", Cores: "0-1"})
	h.s.def = QueuePolicy{Kind: EASY, Match: resource.FirstFit}
	h.run(do(sessions("r1=2", ""), alloc(1, cores(3, 60)), alloc(2, cores(4, 60)),
		alloc(3, targeting(cores(1, 300), "r1", jobspec.DefaultSession))),
		"1 SUCCESS rank0/core[0-1] rank1/core0",
		"2 ANNOTATE insufficient resources eta=5060",
		"3 SUCCESS rank2/core0",
	)
	h.run(do(at(5060), free(1)), "1 FREE", "2 SUCCESS rank[0-1]/core[0-1]")
}

// Whole nodes: 3 nodes x 2 cores, ranks 0-1 have property a. Job 1 (1
// core on a, 60 s) is on rank 0. Job 2 (2 nodes of a, exclusive) must
// wait for it: planned at 5060 on ranks 0-1. Job 3 (1 core on a, 300 s)
// would take rank 1 past 5060: it waits. Job 4 (1 core, anywhere, 300 s)
// runs on rank 2.
func TestNarrowExclusive(t *testing.T) {
	h := newHarness(t, resource.FirstFit,
		resource.ConfigEntry{Hosts: "node[0-1]", Cores: "0-1", Properties: []string{"a"}},
		resource.ConfigEntry{Hosts: "node2", Cores: "0-1"})
	h.s.def = QueuePolicy{Kind: EASY, Match: resource.FirstFit}
	a := withHosts(props("a"))
	h.run(do(alloc(1, a(cores(1, 60))), alloc(2, a(jobspec.Options{Nodes: 2, Duration: 60})), alloc(3, a(cores(1, 300))), alloc(4, cores(1, 300))),
		"1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient resources eta=5060",
		"3 ANNOTATE insufficient resources",
		"4 SUCCESS rank2/core0",
	)
	h.run(do(at(5060), free(1)), "1 FREE", "2 SUCCESS rank[0-1]/core[0-1]", "3 ANNOTATE insufficient resources eta=5120")
}

// A job without a time limit on a narrowed job's nodes could keep it from
// ever starting: once such a job gets no start time, nothing without a
// limit may start on its nodes, and elsewhere anything may. 3 nodes x 2
// cores, rank 0 has a. Job 1 (1 core on a, no limit) holds rank 0's core
// 0 forever, so job 2 (2 cores on a) has no start time. Job 3 (1 core,
// no limit) would take rank 0's other core by first-fit: it goes to rank
// 1. Job 4 (1 core, 10 s) may take it.
func TestNarrowStarved(t *testing.T) {
	h := newHarness(t, resource.FirstFit,
		resource.ConfigEntry{Hosts: "node0", Cores: "0-1", Properties: []string{"a"}},
		resource.ConfigEntry{Hosts: "node[1-2]", Cores: "0-1"})
	h.s.def = QueuePolicy{Kind: EASY, Match: resource.FirstFit}
	a := withHosts(props("a"))
	h.run(do(alloc(1, a(cores(1, 0))), alloc(2, a(cores(2, 10))), alloc(3, cores(1, 0)), alloc(4, cores(1, 10))),
		"1 SUCCESS rank0/core0",
		"2 ANNOTATE insufficient resources",
		"3 SUCCESS rank1/core0",
		"4 SUCCESS rank0/core1",
	)
}
