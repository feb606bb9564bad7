package rset

import (
	"slices"
	"testing"

	"github.com/fluxq/fluxq/internal/idset"
)

const gib = 1 << 30

// memR is a two-rank R with hosts n0 and n1, cores 0-1 on each and the
// given memory on each rank (0 for none).
func memR(m0, m1 uint64) *R {
	return New([]Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1"), Memory: m0},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), Memory: m1},
	})
}

// The memory entry key: written only when not 0, ranks merged only when
// children and memory are both equal, and read back the same.
func TestMemoryEncoding(t *testing.T) {
	tests := []struct {
		name string
		r    *R
		want string
	}{
		{"no memory encodes as before", memR(0, 0),
			`{"execution":{"R_lite":[{"children":{"core":"0-1"},"rank":"0-1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}`},
		{"equal memory merges", memR(4*gib, 4*gib),
			`{"execution":{"R_lite":[{"children":{"core":"0-1"},"memory":4294967296,"rank":"0-1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}`},
		{"different memory splits", memR(4*gib, 2*gib),
			`{"execution":{"R_lite":[{"children":{"core":"0-1"},"memory":4294967296,"rank":"0"},{"children":{"core":"0-1"},"memory":2147483648,"rank":"1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}`},
		{"memory on one rank only", memR(0, 1024),
			`{"execution":{"R_lite":[{"children":{"core":"0-1"},"rank":"0"},{"children":{"core":"0-1"},"memory":1024,"rank":"1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustMarshal(t, tt.r); got != tt.want {
				t.Errorf("MarshalJSON:\n got %s\nwant %s", got, tt.want)
			}
			roundTrip(t, tt.r)
			if back := mustParse(t, tt.want); !back.Equal(tt.r) {
				t.Errorf("Parse(%s) = %v, not the R it came from", tt.want, back)
			}
		})
	}
}

func TestMemoryParse(t *testing.T) {
	tests := []struct {
		name  string
		input string
		mem   []uint64 // Node.Memory of each rank, in rank order
		str   string   // String(), which leaves memory out
	}{
		{"absent", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}]}}`, []uint64{0}, "rank0/core0"},
		{"per rank of the entry", `{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"},"memory":3}]}}`, []uint64{3, 3}, "rank[0-1]/core0"},
		{"summed over entries", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":3},{"rank":"0","children":{"core":"1"},"memory":4}]}}`, []uint64{7}, "rank0/core[0-1]"},
		{"joining another entry's children", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}},{"rank":"0","children":{},"memory":3}]}}`, []uint64{3}, "rank0/core0"},
		{"zero is none", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":0}]}}`, []uint64{0}, "rank0/core0"},
		{"the most", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"},"memory":1152921504606846976}]}}`, []uint64{MaxMemory}, "rank0/core0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, tt.input)
			var got []uint64
			for _, n := range r.Nodes() {
				got = append(got, n.Memory)
			}
			if !slices.Equal(got, tt.mem) {
				t.Errorf("memory = %v, want %v", got, tt.mem)
			}
			if r.String() != tt.str {
				t.Errorf("String = %q, want %q", r.String(), tt.str)
			}
			roundTrip(t, r)
		})
	}
}

func TestMemoryParseErrors(t *testing.T) {
	const pre = `{"version":1,"execution":{"R_lite":[`
	tests := []struct {
		name, input, want string
	}{
		{"string", pre + `{"rank":"0","children":{"core":"0"},"memory":"4G"}]}}`,
			"execution.R_lite[0].memory: expected integer, got string"},
		{"real", pre + `{"rank":"0","children":{"core":"0"},"memory":1.5}]}}`,
			"execution.R_lite[0].memory: expected integer, got real"},
		{"negative", pre + `{"rank":"0","children":{"core":"0"},"memory":-1}]}}`,
			"execution.R_lite[0].memory: invalid value -1: memory is bytes from 0 to 1152921504606846976"},
		{"too large", pre + `{"rank":"0","children":{"core":"0"},"memory":18446744073709551616}]}}`,
			"execution.R_lite[0].memory: invalid value 18446744073709551616: memory is bytes from 0 to 1152921504606846976"},
		{"sum too large", pre + `{"rank":"0","children":{"core":"0"},"memory":1152921504606846976},{"rank":"0","children":{"core":"1"},"memory":1}]}}`,
			"execution.R_lite: rank 0: memory summed over its entries is more than 1152921504606846976 bytes"},
		{"nothing at all", pre + `{"rank":"0","children":{},"memory":0}]}}`,
			"execution.R_lite: rank 0 has no resources"},
		{"memory alone", pre + `{"rank":"0","children":{"core":"0"}},{"rank":"1","children":{},"memory":3}]}}`,
			"execution.R_lite: rank 1 has no resources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.input))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Parse error = %v, want %q", err, tt.want)
			}
		})
	}
}

// Memory is a quantity: Union adds it, Difference subtracts it down to 0
// (dropping a rank left with no children, memory and all), Intersection
// takes the lesser; memory alone is no resource.
func TestMemoryOps(t *testing.T) {
	inv := memR(8*gib, 4*gib)
	job := New([]Node{{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0"), Memory: 3 * gib}})
	whole := New([]Node{{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), Memory: 1 * gib}})
	u := mustUnion(t, job, job)
	tests := []struct {
		name string
		got  *R
		want []Node
	}{
		{"difference subtracts", inv.Difference(job), []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("1"), Memory: 5 * gib},
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), Memory: 4 * gib}}},
		{"difference drops a rank with no children left", inv.Difference(whole), []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1"), Memory: 8 * gib}}},
		{"difference floors at 0", job.Difference(New([]Node{{Rank: 0, Cores: idset.MustParse("1"), Memory: 9 * gib}})), []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0")}}},
		{"union sums", u, []Node{{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0"), Memory: 6 * gib}}},
		{"union of disjoint ranks", mustUnion(t, job, whole), []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0"), Memory: 3 * gib},
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), Memory: 1 * gib}}},
		{"intersection takes the min", inv.Intersection(job), []Node{
			{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0"), Memory: 3 * gib}}},
		{"intersection where memory is more", New([]Node{{Rank: 1, Cores: idset.MustParse("1-2"), Memory: 9 * gib}}).Intersection(inv), []Node{
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("1"), Memory: 4 * gib}}},
		{"new drops memory alone", New([]Node{{Rank: 1, Memory: 9 * gib}}), nil},
		{"new joins memory to a rank's children", New([]Node{{Rank: 1, Memory: 9}, {Rank: 1, Cores: idset.MustParse("0")}}), []Node{
			{Rank: 1, Cores: idset.MustParse("0"), Memory: 9}}},
		{"new merges a rank by summing", New([]Node{{Rank: 0, Cores: idset.MustParse("0"), Memory: 1}, {Rank: 0, Cores: idset.MustParse("1"), Memory: 2}}), []Node{
			{Rank: 0, Cores: idset.MustParse("0-1"), Memory: 3}}},
		{"select keeps memory", inv.SelectRanks(idset.MustParse("1")), []Node{
			{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1"), Memory: 4 * gib}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if want := New(tt.want); !tt.got.Equal(want) {
				t.Errorf("got %s, want %s", mustMarshal(t, tt.got), mustMarshal(t, want))
			}
		})
	}
	if inv.Memory() != 12*gib || memR(0, 0).Memory() != 0 {
		t.Errorf("Memory() = %d, %d", inv.Memory(), memR(0, 0).Memory())
	}
	if inv.Equal(memR(8*gib, 3*gib)) {
		t.Error("Equal ignores memory")
	}
	if d := job.Difference(job); !d.IsEmpty() {
		t.Errorf("job - job = %v", d)
	}
}

func TestMemoryLacks(t *testing.T) {
	inv := memR(4*gib, 0)
	tests := []struct {
		name string
		r    *R
		want Lack
		ok   bool
	}{
		{"fits", New([]Node{{Rank: 0, Cores: idset.MustParse("0"), Memory: 4 * gib}}), Lack{}, false},
		{"more than the rank has", New([]Node{{Rank: 0, Cores: idset.MustParse("0"), Memory: 5 * gib}}),
			Lack{Rank: 0, Have: "n0", Memory: 5 * gib, HaveMemory: 4 * gib}, true},
		{"a rank with none", New([]Node{{Rank: 1, Cores: idset.MustParse("0"), Memory: 1}}),
			Lack{Rank: 1, Have: "n1", Memory: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := inv.Lacks(tt.r)
			if ok != tt.ok || got.Rank != tt.want.Rank || got.Have != tt.want.Have || got.Memory != tt.want.Memory ||
				got.HaveMemory != tt.want.HaveMemory || got.Kind != "" {
				t.Errorf("Lacks = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
