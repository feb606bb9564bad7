package resource

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nodeLines renders each rank of the R FromConfig builds compactly for table comparisons.
func nodeLines(t *testing.T, entries []ConfigEntry) []string {
	t.Helper()
	r, err := FromConfig(entries)
	if err != nil {
		t.Fatalf("FromConfig: %v", err)
	}
	var out []string
	for _, n := range r.Nodes() {
		line := fmt.Sprintf("%s rank%d core=%s", n.Hostname, n.Rank, n.Cores)
		if !n.GPUs.IsEmpty() {
			line += " gpu=" + n.GPUs.String()
		}
		for _, p := range n.Properties {
			line += " " + p
		}
		out = append(out, line)
	}
	return out
}

func TestFromConfig(t *testing.T) {
	tests := []struct {
		name    string
		entries []ConfigEntry
		want    []string
	}{
		{
			name:    "one host",
			entries: []ConfigEntry{{Hosts: "node0", Cores: "0-1"}},
			want:    []string{"node0 rank0 core=0-1"},
		},
		{
			// Ranks follow the order hosts are first named, not their sort order.
			name:    "ranks in host order",
			entries: []ConfigEntry{{Hosts: "b,a,c[2,1]", Cores: "0"}},
			want:    []string{"b rank0 core=0", "a rank1 core=0", "c2 rank2 core=0", "c1 rank3 core=0"},
		},
		{
			// flux-config-resource(5): "It is not an error to list a host
			// multiple times, instead each entry updates hosts."
			name: "host named twice accumulates",
			entries: []ConfigEntry{
				{Hosts: "n[0-1]", Cores: "0-3"},
				{Hosts: "n1", GPUs: "0-1", Properties: []string{"gpu"}},
				{Hosts: "n[0-1]", Properties: []string{"big", "gpu"}},
				{Hosts: "n2", Cores: "0-1"},
				{Hosts: "n2", Cores: "2-3"},
			},
			want: []string{"n0 rank0 core=0-3 big gpu", "n1 rank1 core=0-3 gpu=0-1 big gpu", "n2 rank2 core=0-3"},
		},
		{
			// Properties are collected per property and handed out at the
			// end (issue 13); a host still gets each once, in name order.
			name: "properties repeated and out of order",
			entries: []ConfigEntry{
				{Hosts: "n[0-2]", Cores: "0", Properties: []string{"z", "a", "z"}},
				{Hosts: "n[2,0]", Properties: []string{"m"}},
				{Hosts: "n0,n0", Properties: []string{"a", "b"}},
			},
			want: []string{"n0 rank0 core=0 a b m z", "n1 rank1 core=0 a z", "n2 rank2 core=0 a m z"},
		},
		{
			name:    "gpus only is a resource",
			entries: []ConfigEntry{{Hosts: "g0", GPUs: "0"}},
			want:    []string{"g0 rank0 core= gpu=0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nodeLines(t, tc.entries)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// The example of flux-config-resource(5), whole.
func TestFromConfigManPageExample(t *testing.T) {
	r, err := FromConfig([]ConfigEntry{
		{Hosts: "test[1-100]", Cores: "0-7"},
		{Hosts: "test[1,2]", GPUs: "0-1"},
		{Hosts: "test[1-89]", Properties: []string{"batch"}},
		{Hosts: "test[90-100]", Properties: []string{"debug"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	nnodes, ncores, ngpus := r.Counts()
	if nnodes != 100 || ncores != 800 || ngpus != 4 {
		t.Errorf("counts = %d nodes, %d cores, %d gpus; want 100, 800, 4", nnodes, ncores, ngpus)
	}
	got := map[string]string{
		"nodelist": r.Nodelist().String(),
		"summary":  r.String(),
		"batch":    r.RanksWithProperty("batch").String(),
		"debug":    r.RanksWithProperty("debug").String(),
	}
	want := map[string]string{
		"nodelist": "test[1-100]",
		"summary":  "rank[0-1]/core[0-7],gpu[0-1] rank[2-99]/core[0-7]",
		"batch":    "0-88",
		"debug":    "89-99",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFromConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		entries []ConfigEntry
		want    string
	}{
		{"no entries", nil, "resource.config: no hosts configured"},
		{"bad hostlist", []ConfigEntry{{Hosts: "a", Cores: "0"}, {Hosts: "x[", Cores: "0"}}, `resource.config[1]: invalid hostlist "x["`},
		{"empty hostlist", []ConfigEntry{{Hosts: "", Cores: "0"}}, "resource.config[0]: empty hostlist specified"},
		{"bad cores", []ConfigEntry{{Hosts: "a", Cores: "3-1"}}, `resource.config[0]: invalid idset cores="3-1"`},
		{"bad gpus", []ConfigEntry{{Hosts: "a", Cores: "0", GPUs: "x"}}, `resource.config[0]: invalid idset gpus="x"`},
		{"bad property", []ConfigEntry{{Hosts: "a", Cores: "0", Properties: []string{"a|b"}}}, `resource.config[0]: invalid property "a|b"`},
		{"empty property", []ConfigEntry{{Hosts: "a", Cores: "0", Properties: []string{""}}}, `resource.config[0]: invalid property ""`},
		// rnode_add refuses the same core twice (EEXIST).
		{"core twice", []ConfigEntry{{Hosts: "a[0-3]", Cores: "0-3"}, {Hosts: "a2", Cores: "3-4"}}, "resource.config[1]: host a2: core 3 configured twice"},
		{"gpu twice", []ConfigEntry{{Hosts: "a", Cores: "0", GPUs: "0-1"}, {Hosts: "a", GPUs: "1"}}, "resource.config[1]: host a: gpu 1 configured twice"},
		// rlist_config_check: every host must get something.
		{"host without resources", []ConfigEntry{{Hosts: "a[0-1]", Cores: "0"}, {Hosts: "b[1-3]", Properties: []string{"x"}}}, "resource.config: b[1-3] assigned no resources"},
		{"too many hosts", []ConfigEntry{{Hosts: "n[0-9999999]", Cores: "0"}}, "resource.config[0]: more than 1000000 hosts configured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := FromConfig(tc.entries)
			if err == nil {
				t.Fatalf("FromConfig = %v, want error %q", r, tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
