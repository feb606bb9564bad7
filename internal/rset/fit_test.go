package rset

import (
	"testing"

	"github.com/fluxq/fluxq/internal/idset"
)

// Lacks names the first part of a job's R that an inventory does not
// hold, the way a refusal has to say it; SharedOn names what two Rs hold
// in common on a rank.
func TestLacks(t *testing.T) {
	inv := New([]Node{
		{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "node1", Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0")},
		{Rank: 2, Hostname: "node2", Cores: idset.MustParse("0-1"), Extra: map[string]idset.Set{"memory": idset.MustParse("0-3")}},
	})
	tests := []struct {
		name string
		r    *R
		want Lack
		ok   bool
	}{
		{"fits", New([]Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("1")}}), Lack{}, false},
		{"fits, no nodelist", New([]Node{{Rank: 1, Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0")}}), Lack{}, false},
		{"fits, extra kind", New([]Node{{Rank: 2, Extra: map[string]idset.Set{"memory": idset.MustParse("2-3")}}}), Lack{}, false},
		{"no such rank", New([]Node{{Rank: 0, Cores: idset.MustParse("0")}, {Rank: 7, Hostname: "node7", Cores: idset.MustParse("0")}}),
			Lack{Rank: 7, Missing: true, Host: "node7"}, true},
		{"other host", New([]Node{{Rank: 1, Hostname: "nosuch", Cores: idset.MustParse("0")}}),
			Lack{Rank: 1, Host: "nosuch", Have: "node1"}, true},
		{"cores beyond the node", New([]Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-5")}}),
			Lack{Rank: 0, Have: "node0", Kind: CoreKey, IDs: idset.MustParse("2-5")}, true},
		{"gpu on a node without", New([]Node{{Rank: 0, Cores: idset.MustParse("0"), GPUs: idset.MustParse("0")}}),
			Lack{Rank: 0, Have: "node0", Kind: GPUKey, IDs: idset.MustParse("0")}, true},
		{"memory beyond the node", New([]Node{{Rank: 2, Extra: map[string]idset.Set{"memory": idset.MustParse("3-4")}}}),
			Lack{Rank: 2, Have: "node2", Kind: "memory", IDs: idset.MustParse("4")}, true},
		{"kind the node has none of", New([]Node{{Rank: 0, Extra: map[string]idset.Set{"memory": idset.MustParse("0")}}}),
			Lack{Rank: 0, Have: "node0", Kind: "memory", IDs: idset.MustParse("0")}, true},
		{"empty", New(nil), Lack{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := inv.Lacks(tc.r)
			if ok != tc.ok || got.Rank != tc.want.Rank || got.Missing != tc.want.Missing || got.Host != tc.want.Host ||
				got.Have != tc.want.Have || got.Kind != tc.want.Kind || !got.IDs.Equal(tc.want.IDs) {
				t.Errorf("Lacks = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSharedOn(t *testing.T) {
	a := New([]Node{
		{Rank: 0, Cores: idset.MustParse("0-1")},
		{Rank: 1, Cores: idset.MustParse("0-3"), GPUs: idset.MustParse("0-1")},
	})
	tests := []struct {
		name string
		b    *R
		rank uint
		want string
	}{
		{"disjoint cores", New([]Node{{Rank: 0, Cores: idset.MustParse("2-3")}}), 0, ""},
		{"shared cores", New([]Node{{Rank: 0, Cores: idset.MustParse("1-2")}}), 0, "core 1"},
		{"cores and a gpu", New([]Node{{Rank: 1, Cores: idset.MustParse("2-5"), GPUs: idset.MustParse("1")}}), 1, "core 2-3, gpu 1"},
		{"rank only in one", New([]Node{{Rank: 2, Cores: idset.MustParse("0")}}), 2, ""},
		{"other rank asked", New([]Node{{Rank: 0, Cores: idset.MustParse("0")}}), 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.SharedOn(tc.b, tc.rank); got != tc.want {
				t.Errorf("SharedOn = %q, want %q", got, tc.want)
			}
		})
	}
}
