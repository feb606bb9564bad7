package resource

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

const giB = 1 << 30

// memPool is node0 (4 cores, 4G) and node1 (4 cores, 8G).
func memPool() *Pool {
	return NewPool(rset.New([]rset.Node{
		{Rank: 0, Hostname: "node0", Cores: idset.FromRange(0, 3), Memory: 4 * giB},
		{Rank: 1, Hostname: "node1", Cores: idset.FromRange(0, 3), Memory: 8 * giB},
	}))
}

// memOf is the memory r grants on each rank, "rank:bytes" joined by
// spaces, for short comparisons.
func memOf(r *rset.R) string {
	var parts []string
	for _, n := range r.Nodes() {
		parts = append(parts, n.Hostname+":"+jobspec.FormatMemory(n.Memory))
	}
	return strings.Join(parts, " ")
}

// Match places only where memory fits and writes the grant, slots x
// MemPerSlot per host, into R; exclusive takes the node's memory too. The
// fast path (no node count) and the slow one must agree.
func TestMatchMemory(t *testing.T) {
	tests := []struct {
		name    string
		req     Request
		policy  Policy
		ok      bool
		summary string
		mem     string
	}{
		{"no memory asked: as before", Request{NSlots: 2, CoresPerSlot: 1}, FirstFit, true, "rank0/core[0-1]", "node0:0B"},
		{"fits the first node", Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 3 * giB}, FirstFit, true, "rank0/core0", "node0:3G"},
		{"memory sends it past the first node", Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 5 * giB}, FirstFit, true, "rank1/core0", "node1:5G"},
		{"memory bounds slots per node", Request{NSlots: 3, CoresPerSlot: 1, MemPerSlot: 3 * giB}, FirstFit, true, "rank0/core0 rank1/core[0-1]", "node0:3G node1:6G"},
		{"more than any node", Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 9 * giB}, FirstFit, false, "", ""},
		{"more than all free", Request{NSlots: 4, CoresPerSlot: 1, MemPerSlot: 3 * giB}, WorstFit, false, "", ""},
		{"with a node count", Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, MemPerSlot: 2 * giB}, FirstFit, true, "rank[0-1]/core0", "node0:2G node1:2G"},
		{"node count, memory too big for one", Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1, MemPerSlot: 3 * giB}, FirstFit, false, "", ""},
		{"exclusive takes all memory", Request{NNodes: 1, NSlots: 1, CoresPerSlot: 1, Exclusive: true}, FirstFit, true, "rank0/core[0-3]", "node0:4G"},
		{"worst-fit by cores, memory decides", Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 6 * giB}, WorstFit, true, "rank1/core0", "node1:6G"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := memPool()
			r, ok := p.Match(tc.req, tc.policy)
			slow, sok := p.matchSlow(tc.req, tc.policy, nil)
			if ok != tc.ok || sok != ok {
				t.Fatalf("Match ok = %v, matchSlow %v, want %v", ok, sok, tc.ok)
			}
			if !ok {
				return
			}
			if !r.Equal(slow) {
				t.Errorf("Match %v != matchSlow %v", r, slow)
			}
			if r.String() != tc.summary || memOf(r) != tc.mem {
				t.Errorf("Match = %s %s, want %s %s", r, memOf(r), tc.summary, tc.mem)
			}
			if err := p.Allocate(1, r); err != nil {
				t.Fatalf("Allocate: %v", err)
			}
		})
	}
}

// The pool accounts memory per node: Allocate takes it (refusing more
// than is free), Release gives it back (refusing more than is held),
// State, FreeMemory, Available and AllocatedAll show it.
func TestPoolMemory(t *testing.T) {
	p := memPool()
	job := func(rank uint, core uint, mem uint64) *rset.R {
		return rset.New([]rset.Node{{Rank: rank, Cores: idset.Of(core), Memory: mem}})
	}
	if err := p.Allocate(1, job(0, 0, 3*giB)); err != nil {
		t.Fatal(err)
	}
	if err := p.Allocate(2, job(0, 1, 2*giB)); err == nil || err.Error() != "rank 0: memory 2G is more than the 1G free" {
		t.Errorf("over-allocating: %v", err)
	}
	if err := p.Allocate(2, job(1, 1, 8*giB)); err != nil {
		t.Fatal(err)
	}
	st, _ := p.State(0)
	if st.Memory != 4*giB || st.FreeMemory != 1*giB || p.FreeMemory() != 1*giB {
		t.Errorf("State = %+v, FreeMemory = %d", st, p.FreeMemory())
	}
	if got := memOf(p.Available()); got != "node0:1G node1:0B" {
		t.Errorf("Available memory = %s", got)
	}
	if got := memOf(p.AllocatedAll()); got != "node0:3G node1:8G" {
		t.Errorf("AllocatedAll memory = %s", got)
	}
	if got := p.Allocated(1).Memory(); got != 3*giB {
		t.Errorf("Allocated(1) memory = %d", got)
	}
	if err := p.Release(1, job(0, 0, 4*giB)); err == nil || !strings.HasSuffix(err.Error(), " holds 3G of memory on rank 0, not 4G") {
		t.Errorf("over-releasing: %v", err)
	}
	if err := p.Release(1, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.State(0); st.FreeMemory != 4*giB || p.Jobs() != 1 {
		t.Errorf("after release: %+v, %d jobs", st, p.Jobs())
	}
	if err := p.Release(2, job(1, 1, 8*giB)); err != nil || p.FreeMemory() != 12*giB {
		t.Errorf("release all: %v, free %d", err, p.FreeMemory())
	}
	// Releasing all of a rank's cores gives its memory back too.
	if err := p.Allocate(4, job(0, 2, 2*giB)); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(4, job(0, 2, 0)); err != nil || p.FreeMemory() != 12*giB || p.Jobs() != 0 {
		t.Errorf("release of the cores: %v, free %d, %d jobs", err, p.FreeMemory(), p.Jobs())
	}
	// Memory held on a node makes it busy for an exclusive request.
	if err := p.Allocate(fluid.ID(3), job(1, 0, 1*giB)); err != nil {
		t.Fatal(err)
	}
	if r, ok := p.Match(Request{NNodes: 2, NSlots: 2, CoresPerSlot: 1, Exclusive: true}, FirstFit); ok {
		t.Errorf("exclusive on a node with memory held: %v", r)
	}
}

// Feasible refuses what no node could ever hold, memory counted: per
// node, with no node count as many slots as cores, GPUs and memory allow.
func TestFeasibleMemory(t *testing.T) {
	none := NewPool(rset.New([]rset.Node{{Rank: 0, Cores: idset.FromRange(0, 3)}}))
	tests := []struct {
		name string
		p    *Pool
		req  Request
		err  error
	}{
		{"fits", memPool(), Request{NSlots: 3, CoresPerSlot: 1, MemPerSlot: 3 * giB}, nil},
		{"no memory asked", memPool(), Request{NSlots: 8, CoresPerSlot: 1}, nil},
		{"more than any node", memPool(), Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 9 * giB}, ErrUnsatisfiable},
		{"more than all", memPool(), Request{NSlots: 2, CoresPerSlot: 1, MemPerSlot: 7 * giB}, ErrUnsatisfiable},
		{"slots by memory too few", memPool(), Request{NSlots: 4, CoresPerSlot: 1, MemPerSlot: 3 * giB}, ErrUnsatisfiable},
		{"node count share too big", memPool(), Request{NNodes: 2, NSlots: 4, CoresPerSlot: 1, MemPerSlot: 3 * giB}, ErrUnsatisfiable},
		{"no memory known", none, Request{NSlots: 1, CoresPerSlot: 1, MemPerSlot: 1}, ErrUnsatisfiable},
		{"no memory known, none asked", none, Request{NSlots: 4, CoresPerSlot: 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Feasible(tc.req); !errors.Is(err, tc.err) && !(err == nil && tc.err == nil) {
				t.Errorf("Feasible = %v, want %v", err, tc.err)
			}
		})
	}
	if err := memPool().FitsTargets(Request{NSlots: 2, CoresPerSlot: 1, MemPerSlot: 7 * giB}); err == nil ||
		err.Error() != "target default has 12G of memory, needs 14G" {
		t.Errorf("FitsTargets = %v", err)
	}
}

func TestFromConfigMemory(t *testing.T) {
	tests := []struct {
		name    string
		entries []ConfigEntry
		want    []uint64 // per rank
		err     string
	}{
		{"none", []ConfigEntry{{Hosts: "n[0-1]", Cores: "0"}}, []uint64{0, 0}, ""},
		{"per host of the entry", []ConfigEntry{{Hosts: "n[0-1]", Cores: "0", Memory: "4G"}}, []uint64{4 * giB, 4 * giB}, ""},
		{"bare number is megabytes", []ConfigEntry{{Hosts: "n0", Cores: "0", Memory: "1024"}}, []uint64{giB}, ""},
		{"summed over entries", []ConfigEntry{{Hosts: "n[0-1]", Cores: "0", Memory: "2G"}, {Hosts: "n1", Memory: "1G"}}, []uint64{2 * giB, 3 * giB}, ""},
		{"bad size", []ConfigEntry{{Hosts: "n0", Cores: "0", Memory: "lots"}}, nil,
			`resource.config[0]: memory: invalid memory size "lots" (want a size such as 512M, 4G or 1.5T)`},
		{"memory alone is no resource", []ConfigEntry{{Hosts: "n0", Memory: "4G"}}, nil, "resource.config: n0 assigned no resources"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := FromConfig(tc.entries)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("FromConfig error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, n := range r.Nodes() {
				got = append(got, n.Memory)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("memory = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("memory = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestMemoryReserve(t *testing.T) {
	tests := []struct {
		name      string
		total     uint64
		reserve   MemoryReserve
		wantBytes uint64 // schedulable
	}{
		{"small host: 512M at least", 4 * giB, MemoryReserve{}, 4*giB - 512<<20},
		{"5% between the bounds", 40 * giB, MemoryReserve{}, 38 * giB},
		{"big host: 4G at most", 512 * giB, MemoryReserve{}, 508 * giB},
		{"configured", 16 * giB, MemoryReserve{Bytes: 1 * giB, Set: true}, 15 * giB},
		{"configured 0", 16 * giB, MemoryReserve{Set: true}, 16 * giB},
		{"reserve beyond the host", 256 << 20, MemoryReserve{}, 0},
		{"rounded down to a megabyte", 16*giB + 1000, MemoryReserve{Bytes: 1 * giB, Set: true}, 15 * giB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Machine{MemTotal: tc.total}
			m.Reserve(tc.reserve)
			if m.Memory != tc.wantBytes {
				t.Errorf("Memory = %d, want %d", m.Memory, tc.wantBytes)
			}
		})
	}
}

// Discovery reads MemTotal from proc/meminfo; the R it makes, and the
// config entry that makes the same R, carry what the reserve leaves.
func TestDiscoverMemory(t *testing.T) {
	fs := fstest.MapFS{
		"sys/devices/system/cpu/online": &fstest.MapFile{Data: []byte("0-1\n")},
		"proc/meminfo":                  &fstest.MapFile{Data: []byte("MemTotal:        8388608 kB\nMemFree:         1000 kB\n")},
	}
	m, err := DiscoverMachine(fs, "myhost", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.MemTotal != 8*giB || m.Memory != 8*giB-512<<20 {
		t.Errorf("MemTotal %d, Memory %d", m.MemTotal, m.Memory)
	}
	r, err := Discover(fs, "myhost", MemoryReserve{Bytes: 2 * giB, Set: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Memory() != 6*giB {
		t.Errorf("Discover memory = %d", r.Memory())
	}
	back, err := FromConfig([]ConfigEntry{m.ConfigEntry()})
	if err != nil || !back.Equal(m.R()) {
		t.Errorf("FromConfig(ConfigEntry()) = %v, %v; want %s", back, err, m.R())
	}
	delete(fs, "proc/meminfo")
	if m, err := DiscoverMachine(fs, "myhost", nil); err != nil || m.Memory != 0 || m.ConfigEntry().Memory != "" {
		t.Errorf("without meminfo: %+v, %v", m, err)
	}
}
