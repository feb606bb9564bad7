package rset

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
)

// opResult summarises an R for set-algebra tables.
type opResult struct {
	Dump     string            // flux-core's rlist_dumps form
	Nodelist string            // compressed hostnames
	Props    map[string]string // property -> ranks
	Start    float64
	Exp      float64
	Sched    string
}

func summarise(r *R) opResult {
	res := opResult{Dump: r.String(), Nodelist: r.Nodelist().String(),
		Start: r.StartTime(), Exp: r.Expiration(), Sched: string(r.Scheduling())}
	for _, p := range r.Properties() {
		if res.Props == nil {
			res.Props = map[string]string{}
		}
		res.Props[p] = r.RanksWithProperty(p).String()
	}
	return res
}

const (
	schedA = `,"scheduling":{"a":1}`
	schedB = `,"scheduling":{"b":2}`
)

// rt builds an R with times, properties and scheduling for algebra tables.
func rt(entries, hosts, props, extra string) string {
	s := `{"version":1,"execution":{"R_lite":[` + entries + `]`
	if hosts != "" {
		s += `,"nodelist":["` + hosts + `"]`
	}
	if props != "" {
		s += `,"properties":` + props
	}
	return s + `}` + extra + `}`
}

func TestDifference(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want opResult
	}{
		// flux-core test/rlist.c diff_tests.
		{"same cores", rc("0", "0-3", "", "foo15", ""), rc("0", "0-3", "", "foo15", ""), opResult{}},
		{"same cores and gpus", rc("0", "0-3", "0-1", "foo15", ""), rc("0", "0-3", "0-1", "foo15", ""), opResult{}},
		{"some cores", rc("0", "0-3", "", "foo15", ""), rc("0", "0-1", "", "foo15", ""),
			opResult{Dump: "rank0/core[2-3]", Nodelist: "foo15"}},
		{"gpus left", rc("0", "0-3", "0", "foo15", ""), rc("0", "0-3", "", "foo15", ""),
			opResult{Dump: "rank0/gpu0", Nodelist: "foo15"}},
		// Ours: ranks, gpus and properties.
		{"whole ranks removed, properties follow", rt(`{"rank":"0-3","children":{"core":"0-3","gpu":"0-1"}}`,
			"n[0-3]", `{"big":"0,3","odd":"1,3"}`, ""),
			rc("1-2", "0-3", "0-1", "n[1-2]", ""),
			opResult{Dump: "rank[0,3]/core[0-3],gpu[0-1]", Nodelist: "n[0,3]",
				Props: map[string]string{"big": "0,3", "odd": "3"}}},
		{"gpus only removed", rc("0-1", "0-3", "0-1", "n[0-1]", ""), rc("1", "", "1", "n1", ""),
			opResult{Dump: "rank0/core[0-3],gpu[0-1] rank1/core[0-3],gpu0", Nodelist: "n[0-1]"}},
		{"ranks o lacks are kept", rc("0-1", "0-3", "", "n[0-1]", ""), rc("5", "0-3", "", "n5", ""),
			opResult{Dump: "rank[0-1]/core[0-3]", Nodelist: "n[0-1]"}},
		{"hostnames are not compared", rc("0", "0-3", "", "a", ""), rc("0", "0", "", "b", ""),
			opResult{Dump: "rank0/core[1-3]", Nodelist: "a"}},
		{"times and scheduling from the receiver",
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}}],"starttime":5,"expiration":9}` + schedA + `}`,
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"starttime":1,"expiration":2}` + schedB + `}`,
			opResult{Dump: "rank0/core[1-3]", Start: 5, Exp: 9, Sched: `{"a":1}`}},
		{"empty result keeps times, drops scheduling",
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"starttime":5}` + schedA + `}`,
			rc("0", "0", "", "", ""),
			opResult{Start: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			got := a.Difference(b)
			if diff := cmp.Diff(tt.want, summarise(got)); diff != "" {
				t.Errorf("a - b (-want +got):\n%s", diff)
			}
			roundTrip(t, got)
		})
	}
}

func TestUnion(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want opResult
	}{
		// flux-core test/rlist.c union_tests.
		{"same", rc("0", "0-3", "", "foo15", ""), rc("0", "0-3", "", "foo15", ""),
			opResult{Dump: "rank0/core[0-3]", Nodelist: "foo15"}},
		{"two ranks with gpus", rc("0", "0-3", "0-1", "foo15", ""), rc("1", "0-3", "0-1", "foo16", ""),
			opResult{Dump: "rank[0-1]/core[0-3],gpu[0-1]", Nodelist: "foo[15-16]"}},
		{"gpus join cores", rc("0", "0-3", "", "foo15", ""), rc("0", "", "0", "foo15", ""),
			opResult{Dump: "rank0/core[0-3],gpu0", Nodelist: "foo15"}},
		// flux-core test/rlist.c append_tests and add_tests.
		{"append keeps rank order", rc("1", "0-3", "", "foo15", ""), rc("0", "0-3", "", "foo16", ""),
			opResult{Dump: "rank[0-1]/core[0-3]", Nodelist: "foo[16,15]"}},
		{"append fills a gap", rc("0,2-3", "0-3", "", "foo[0,2-3]", ""), rc("1", "0-3", "", "foo1", ""),
			opResult{Dump: "rank[0-3]/core[0-3]", Nodelist: "foo[0-3]"}},
		{"disjoint cores on one rank", rc("0", "0-3", "", "foo0", ""), rc("0", "4-7", "", "foo0", ""),
			opResult{Dump: "rank0/core[0-7]", Nodelist: "foo0"}},
		{"overlapping cores on one rank", rc("0", "0-3", "", "foo0", ""), rc("0", "0-7", "", "foo0", ""),
			opResult{Dump: "rank0/core[0-7]", Nodelist: "foo0"}},
		{"large overlap", rc("[0-1023]", "0-3", "", "foo[0-1023]", ""), rc("[1000-1024]", "4-7", "", "foo[1000-1024]", ""),
			opResult{Dump: "rank[0-999]/core[0-3] rank[1000-1023]/core[0-7] rank1024/core[4-7]", Nodelist: "foo[0-1024]"}},
		// Ours.
		{"properties merge per rank", rc("0-1", "0", "", "n[0-1]", `{"a":"0","b":"1"}`),
			rc("1-2", "1", "", "n[1-2]", `{"a":"2","c":"1-2"}`),
			opResult{Dump: "rank0/core0 rank1/core[0-1] rank2/core1", Nodelist: "n[0-2]",
				Props: map[string]string{"a": "0,2", "b": "1", "c": "1-2"}}},
		{"hostname taken from o when r has none", rc("0", "0", "", "", ""), rc("0", "1", "", "h0", ""),
			opResult{Dump: "rank0/core[0-1]", Nodelist: "h0"}},
		{"times from the receiver",
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"starttime":5,"expiration":9}}`,
			`{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0"}}],"starttime":1,"expiration":20}` + schedB + `}`,
			opResult{Dump: "rank[0-1]/core0", Start: 5, Exp: 9, Sched: `{"b":2}`}},
		{"scheduling from the receiver first",
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}]}` + schedA + `}`,
			`{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0"}}]}` + schedB + `}`,
			opResult{Dump: "rank[0-1]/core0", Sched: `{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			got, err := a.Union(b)
			if err != nil {
				t.Fatalf("Union: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarise(got)); diff != "" {
				t.Errorf("a U b (-want +got):\n%s", diff)
			}
			roundTrip(t, got)
		})
	}
}

func TestUnionCounts(t *testing.T) {
	// flux-core test/rlist.c append_tests: total cores and nodes.
	a := mustParse(t, rc("[0-1023]", "0-3", "", "foo[0-1023]", ""))
	b := mustParse(t, rc("[1000-1024]", "4-7", "", "foo[1000-1024]", ""))
	u, err := a.Union(b)
	if err != nil {
		t.Fatal(err)
	}
	n, c, _ := u.Counts()
	if diff := cmp.Diff([]int{1025, 4196}, []int{n, c}); diff != "" {
		t.Errorf("nodes, cores (-want +got):\n%s", diff)
	}
}

func TestUnionHostnameConflict(t *testing.T) {
	a := mustParse(t, rc("0", "0-3", "", "foo15", ""))
	b := mustParse(t, rc("0", "4-7", "", "foo16", ""))
	_, err := a.Union(b)
	if err == nil {
		t.Fatal("Union accepted rank 0 with two hostnames")
	}
	if diff := cmp.Diff(`rank 0: hostname "foo15" differs from "foo16"`, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestIntersection(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want opResult
	}{
		// flux-core test/rlist.c intersect_tests.
		{"overlapping ranks", rc("0-10", "0-3", "", "foo[0-10]", ""), rc("9-15", "1", "", "foo[9-15]", ""),
			opResult{Dump: "rank[9-10]/core1", Nodelist: "foo[9-10]"}},
		{"disjoint ranks", rc("0", "0-3", "0-1", "foo15", ""), rc("1", "0-3", "0-1", "foo16", ""), opResult{}},
		// Ours.
		{"gpus intersect", rc("0-1", "0-3", "0-3", "n[0-1]", ""), rc("1", "2-5", "3-4", "n1", ""),
			opResult{Dump: "rank1/core[2-3],gpu3", Nodelist: "n1"}},
		{"gpus only on one side", rc("0", "0-3", "0-3", "n0", ""), rc("0", "0", "", "n0", ""),
			opResult{Dump: "rank0/core0", Nodelist: "n0"}},
		{"hostnames differ: not shared", rc("0", "0-3", "", "a", ""), rc("0", "0-3", "", "b", ""), opResult{}},
		{"hostname from o when r has none", rc("0", "0-3", "", "", ""), rc("0", "1", "", "h", ""),
			opResult{Dump: "rank0/core1", Nodelist: "h"}},
		{"properties from the receiver", rc("0-2", "0-1", "", "n[0-2]", `{"a":"0-1","b":"2"}`),
			rc("1-2", "1", "", "n[1-2]", `{"c":"1"}`),
			opResult{Dump: "rank[1-2]/core1", Nodelist: "n[1-2]", Props: map[string]string{"a": "1", "b": "2"}}},
		{"times and scheduling from the receiver",
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-3"}}],"starttime":5,"expiration":9}` + schedA + `}`,
			`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"3-4"}}],"starttime":1,"expiration":2}` + schedB + `}`,
			opResult{Dump: "rank0/core3", Start: 5, Exp: 9, Sched: `{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			got := a.Intersection(b)
			if diff := cmp.Diff(tt.want, summarise(got)); diff != "" {
				t.Errorf("a ∩ b (-want +got):\n%s", diff)
			}
			roundTrip(t, got)
		})
	}
}

func TestSelectRanks(t *testing.T) {
	r := mustParse(t, rc("0-5", "0-3", "0", "foo[0-5]", `{"odd":"1,3,5","zero":"0"}`))
	tests := []struct {
		name   string
		ranks  string
		want   opResult
		nnodes int
		ncores int
	}{
		// flux-core test/rlist.c test_copy_ranks.
		{"1,3,5", "1,3,5", opResult{Dump: "rank[1,3,5]/core[0-3],gpu0", Nodelist: "foo[1,3,5]",
			Props: map[string]string{"odd": "1,3,5"}}, 3, 12},
		{"5-9", "5-9", opResult{Dump: "rank5/core[0-3],gpu0", Nodelist: "foo5",
			Props: map[string]string{"odd": "5"}}, 1, 4},
		{"9,20", "9,20", opResult{}, 0, 0},
		{"huge idset", "0-4294967294", summarise(r), 6, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.SelectRanks(idset.MustParse(tt.ranks))
			if diff := cmp.Diff(tt.want, summarise(got)); diff != "" {
				t.Errorf("SelectRanks (-want +got):\n%s", diff)
			}
			n, c, _ := got.Counts()
			if diff := cmp.Diff([]int{tt.nnodes, tt.ncores}, []int{n, c}); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			roundTrip(t, got)
		})
	}
}

func TestRemoveRanks(t *testing.T) {
	// flux-core test/rlist.c test_remove_ranks, as r minus its own ranks.
	r := mustParse(t, rc("0-5", "0-3", "0", "foo[0-5]", ""))
	for _, tt := range []struct{ ranks, want string }{
		{"1,3,5", "rank[0,2,4]/core[0-3],gpu0"},
		{"5-9", "rank[0-4]/core[0-3],gpu0"},
		{"9,20", "rank[0-5]/core[0-3],gpu0"},
	} {
		got := r.Difference(r.SelectRanks(idset.MustParse(tt.ranks))).String()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("remove %s (-want +got):\n%s", tt.ranks, diff)
		}
	}
}

// Set identities that must hold for any a, b.
func TestAlgebraIdentities(t *testing.T) {
	inputs := []string{
		rc("0-3", "0-7", "0-1", "n[0-3]", `{"p":"0-1"}`),
		rc("2-5", "4-11", "1", "n[2-5]", `{"p":"5","q":"2"}`),
		`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}},{"rank":"3","children":{"gpu":"0-3"}}],"nodelist":["n0,n3"]}}`,
		rc("7", "0", "", "n7", ""),
	}
	for i, sa := range inputs {
		for j, sb := range inputs {
			a, b := mustParse(t, sa), mustParse(t, sb)
			u, err := a.Union(b)
			if err != nil {
				t.Fatalf("%d U %d: %v", i, j, err)
			}
			checks := []struct {
				what string
				ok   bool
			}{
				{"(a-b) U (a∩b) = a", mustUnion(t, a.Difference(b), a.Intersection(b)).String() == a.String()},
				{"(a U b) - b = a - b", u.Difference(b).String() == a.Difference(b).String()},
				{"a ∩ b = b ∩ a", a.Intersection(b).String() == b.Intersection(a).String()},
				{"a U b = b U a", u.String() == mustUnion(t, b, a).String()},
				{"a - a is empty", a.Difference(a).IsEmpty()},
				{"a ∩ a = a", a.Intersection(a).Equal(a)},
			}
			for _, c := range checks {
				if !c.ok {
					t.Errorf("inputs %d, %d: %s does not hold", i, j, c.what)
				}
			}
		}
	}
}

func mustUnion(t *testing.T, a, b *R) *R {
	t.Helper()
	u, err := a.Union(b)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestEqual(t *testing.T) {
	base := rc("0-1", "0-3", "0", "n[0-1]", `{"p":"0"}`)
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"same", base, base, true},
		{"different layout, same content", base,
			`{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"gpu":"0","core":"0-3"}},{"rank":"0","children":{"core":"0-3","gpu":"0"}}],"nodelist":["n0","n1"],"properties":{"p":"0"}}}`, true},
		{"hostname", base, rc("0-1", "0-3", "0", "m[0-1]", `{"p":"0"}`), false},
		{"cores", base, rc("0-1", "0-2", "0", "n[0-1]", `{"p":"0"}`), false},
		{"gpus", base, rc("0-1", "0-3", "", "n[0-1]", `{"p":"0"}`), false},
		{"property", base, rc("0-1", "0-3", "0", "n[0-1]", `{"p":"1"}`), false},
		{"no property", base, rc("0-1", "0-3", "0", "n[0-1]", ""), false},
		{"scheduling", base, base[:len(base)-1] + schedA + "}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustParse(t, tt.a), mustParse(t, tt.b)
			if got := a.Equal(b); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}
