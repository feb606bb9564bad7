package resource

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
)

// summary parses the rlist_dumps form rset.R.String writes, such as
// "rank0/core[0-1],gpu0 rank[1-2]/core0", into an R without hostnames, so
// tests can name resource sets in a few characters.
func summary(t testing.TB, s string) *rset.R {
	t.Helper()
	var nodes []rset.Node
	for _, group := range strings.Fields(s) {
		ranksPart, kidsPart, ok := strings.Cut(group, "/")
		if !ok || !strings.HasPrefix(ranksPart, "rank") {
			t.Fatalf("bad summary %q", group)
		}
		ranks := mustIDs(t, strings.TrimPrefix(ranksPart, "rank"))
		var cores, gpus idset.Set
		for _, kid := range splitKids(kidsPart) {
			switch {
			case strings.HasPrefix(kid, "core"):
				cores = mustIDs(t, strings.TrimPrefix(kid, "core"))
			case strings.HasPrefix(kid, "gpu"):
				gpus = mustIDs(t, strings.TrimPrefix(kid, "gpu"))
			default:
				t.Fatalf("bad child %q in %q", kid, s)
			}
		}
		for rank := range ranks.All() {
			nodes = append(nodes, rset.Node{Rank: rank, Cores: cores, GPUs: gpus})
		}
	}
	return rset.New(nodes)
}

// splitKids splits "core[0-1],gpu0" at the commas outside brackets.
func splitKids(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func mustIDs(t testing.TB, s string) idset.Set {
	t.Helper()
	ids, err := idset.Parse(s)
	if err != nil {
		t.Fatalf("idset %q: %v", s, err)
	}
	return ids
}

// testInventory is four nodes: node[0-3], four cores each, GPUs on
// node[2-3], properties to constrain on.
func testInventory(t testing.TB) *rset.R {
	t.Helper()
	r, err := FromConfig([]ConfigEntry{
		{Hosts: "node[0-3]", Cores: "0-3", Properties: []string{"batch"}},
		{Hosts: "node[2-3]", GPUs: "0-1", Properties: []string{"gpu"}},
		{Hosts: "node3", Properties: []string{"debug"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPoolAllocateRelease(t *testing.T) {
	p := NewPool(testInventory(t))
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check := func(what, wantAvail, wantAll string) {
		t.Helper()
		got := []string{p.Available().String(), p.AllocatedAll().String()}
		if diff := cmp.Diff([]string{wantAvail, wantAll}, got); diff != "" {
			t.Errorf("%s: [available, allocated] (-want +got):\n%s", what, diff)
		}
	}
	check("start", "rank[0-1]/core[0-3] rank[2-3]/core[0-3],gpu[0-1]", "")

	step("allocate 1", p.Allocate(1, summary(t, "rank0/core[0-1] rank2/core0,gpu1")))
	check("after 1", "rank0/core[2-3] rank1/core[0-3] rank2/core[1-3],gpu0 rank3/core[0-3],gpu[0-1]", "rank0/core[0-1] rank2/core0,gpu1")
	if got := p.Allocated(1).String(); got != "rank0/core[0-1] rank2/core0,gpu1" {
		t.Errorf("Allocated(1) = %q", got)
	}

	// RFC 16: "no two jobs SHALL be allocated the same resource unit".
	if err := p.Allocate(2, summary(t, "rank0/core[1-2]")); err == nil || err.Error() != "rank 0: core 1 is already allocated" {
		t.Errorf("double allocation: err = %v", err)
	}
	if err := p.Allocate(2, summary(t, "rank3/core0 rank2/gpu1")); err == nil || err.Error() != "rank 2: gpu 1 is already allocated" {
		t.Errorf("double gpu allocation: err = %v", err)
	}
	check("refused allocations change nothing", "rank0/core[2-3] rank1/core[0-3] rank2/core[1-3],gpu0 rank3/core[0-3],gpu[0-1]", "rank0/core[0-1] rank2/core0,gpu1")
	if err := p.Allocate(2, summary(t, "rank7/core0")); err == nil || err.Error() != "rank 7 is not in the inventory" {
		t.Errorf("unknown rank: err = %v", err)
	}
	if err := p.Allocate(2, summary(t, "rank1/core[3-4]")); err == nil || err.Error() != "rank 1: core 4 is not in the inventory" {
		t.Errorf("unknown core: err = %v", err)
	}
	if err := p.Allocate(2, summary(t, "rank1/gpu0")); err == nil || err.Error() != "rank 1: gpu 0 is not in the inventory" {
		t.Errorf("unknown gpu: err = %v", err)
	}

	// A job may grow; its allocation is the union.
	step("grow 1", p.Allocate(1, summary(t, "rank1/core3")))
	if got := p.Allocated(1).String(); got != "rank0/core[0-1] rank1/core3 rank2/core0,gpu1" {
		t.Errorf("Allocated(1) after growing = %q", got)
	}
	step("allocate 2", p.Allocate(2, summary(t, "rank3/core[0-3],gpu[0-1]")))
	if p.Jobs() != 2 {
		t.Errorf("Jobs() = %d, want 2", p.Jobs())
	}

	// Partial release keeps the rest held.
	step("release part of 1", p.Release(1, summary(t, "rank0/core1 rank2/gpu1")))
	if got := p.Allocated(1).String(); got != "rank[0,2]/core0 rank1/core3" {
		t.Errorf("Allocated(1) after partial release = %q", got)
	}
	if err := p.Release(1, summary(t, "rank0/core1")); err == nil || !strings.Contains(err.Error(), "does not hold rank 0 core 1") {
		t.Errorf("releasing what was released: err = %v", err)
	}
	if err := p.Release(1, summary(t, "rank3/core0")); err == nil || !strings.Contains(err.Error(), "holds nothing on rank 3") {
		t.Errorf("releasing another job's node: err = %v", err)
	}
	if err := p.Release(9, summary(t, "rank3/core0")); err == nil || !strings.Contains(err.Error(), "holds no resources") {
		t.Errorf("releasing for an unknown job: err = %v", err)
	}
	step("release rest of 1", p.Release(1, nil))
	step("release 2", p.Release(2, nil))
	step("release unknown job, all", p.Release(3, nil))
	check("all free again", "rank[0-1]/core[0-3] rank[2-3]/core[0-3],gpu[0-1]", "")
	if !p.Allocated(1).IsEmpty() || p.Jobs() != 0 {
		t.Errorf("after release: Allocated(1) = %v, Jobs() = %d", p.Allocated(1), p.Jobs())
	}
}

func TestPoolDown(t *testing.T) {
	p := NewPool(testInventory(t))
	if err := p.Allocate(1, summary(t, "rank1/core0")); err != nil {
		t.Fatal(err)
	}
	p.SetDown(idset.MustParse("1-2,9"))
	if got := p.Down().String(); got != "1-2" {
		t.Errorf("Down() = %q, want 1-2 (unknown ranks ignored)", got)
	}
	if got := p.Available().String(); got != "rank0/core[0-3] rank3/core[0-3],gpu[0-1]" {
		t.Errorf("Available() with ranks 1-2 down = %q", got)
	}
	// A drained node keeps its running jobs.
	if got := p.AllocatedAll().String(); got != "rank1/core0" {
		t.Errorf("AllocatedAll() = %q", got)
	}
	// Replaying a job onto a down node (hello after restart) is allowed.
	if err := p.Allocate(2, summary(t, "rank2/core0")); err != nil {
		t.Errorf("allocate on a down rank: %v", err)
	}
	if r, ok := p.Match(Request{NSlots: 3, CoresPerSlot: 3}, FirstFit); ok {
		t.Errorf("Match placed on down ranks: %v", r)
	}
	p.SetUp(idset.MustParse("2"))
	if got := p.Down().String(); got != "1" {
		t.Errorf("Down() after SetUp = %q", got)
	}
	r, ok := p.Match(Request{NSlots: 3, CoresPerSlot: 3}, FirstFit)
	if !ok || r.String() != "rank[0,3]/core[0-2] rank2/core[1-3]" {
		t.Errorf("Match after SetUp = %v, %v", r, ok)
	}
	if p.Inventory().String() != testInventory(t).String() {
		t.Errorf("Inventory() changed: %v", p.Inventory())
	}
}

func TestPoolFind(t *testing.T) {
	p := NewPool(testInventory(t))
	tests := []struct {
		query string // RFC 35 query; "" is the empty constraint
		want  string // nodelist
	}{
		{"", "node[0-3]"},
		{"gpu", "node[2-3]"},
		{"batch", "node[0-3]"},
		{"^gpu", "node[0-1]"},
		{"gpu and ^debug", "node2"},
		{"debug or host:node0", "node[0,3]"},
		{"rank:1-2", "node[1-2]"},
		// As in flux's rnode match, a hostname counts as a property.
		{"node1", "node1"},
		{"nosuch", ""},
	}
	for _, tc := range tests {
		var c constraint.Constraint
		if tc.query != "" {
			var err error
			if c, err = constraint.ParseQuery(tc.query); err != nil {
				t.Fatalf("%q: %v", tc.query, err)
			}
		}
		got := p.Find(c)
		if got.Nodelist().String() != tc.want {
			t.Errorf("Find(%q) = %q, want %q", tc.query, got.Nodelist(), tc.want)
		}
		// Find returns whole nodes with their properties.
		for _, n := range got.Nodes() {
			if n.Cores.Count() != 4 || len(n.Properties) == 0 {
				t.Errorf("Find(%q): node %+v is not whole", tc.query, n)
			}
		}
	}
}
