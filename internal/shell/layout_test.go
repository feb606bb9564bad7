package shell

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// Tasks per rank, as flux-shell's rcalc_distribute places them.
func TestDistribute(t *testing.T) {
	tests := []struct {
		name        string
		ncores      []int
		ntasks, cpt int
		want        []int
		wantErr     string
	}{
		{"one rank", []int{4}, 4, 1, []int{4}, ""},
		{"two ranks, even", []int{2, 2}, 4, 1, []int{2, 2}, ""},
		// Largest rank first, then round robin while ranks have room.
		{"uneven ranks", []int{4, 2}, 3, 1, []int{2, 1}, ""},
		{"one task per whole node", []int{4, 4}, 2, 1, []int{1, 1}, ""},
		// cores_per_slot larger than the smallest rank shrinks to fit it.
		{"cores per task capped", []int{4, 2}, 2, 3, []int{1, 1}, ""},
		// Full ranks are refilled: oversubscription, as flux-shell allows.
		{"oversubscribed", []int{2}, 5, 1, []int{5}, ""},
		{"oversubscribed, two ranks", []int{1, 1}, 5, 1, []int{3, 2}, ""},
		// Without a cores-per-task, total cores / tasks.
		{"cores per task derived", []int{4, 4}, 2, 0, []int{1, 1}, ""},
		{"cores per task derived, too many tasks", []int{1}, 2, 0, nil, "more tasks than cores"},
		// zlist_sort is a comb sort, not stable: of two equal ranks the
		// later one comes first here, as in flux-shell.
		{"unstable sort", []int{2, 4, 4}, 1, 1, []int{0, 0, 1}, ""},
		{"no tasks", []int{1}, 0, 1, nil, "not positive"},
		{"too many tasks", []int{1}, MaxTasks + 1, 1, nil, "more than"},
		{"no ranks", nil, 1, 1, nil, "no ranks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := distribute(tc.ncores, tc.ntasks, tc.cpt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tasks per rank (-want +got):\n%s", diff)
			}
		})
	}
}

// The per-resource shell option (flux submit --tasks-per-node/-core).
func TestDistributePerResource(t *testing.T) {
	tests := []struct {
		name    string
		ncores  []int
		typ     string
		count   int
		want    []int
		wantErr string
	}{
		{"per node", []int{2, 4, 1}, "node", 2, []int{2, 2, 2}, ""},
		{"per core", []int{2, 4}, "core", 1, []int{2, 4}, ""},
		{"per core, twice", []int{2, 4}, "core", 2, []int{4, 8}, ""},
		{"unknown type", []int{1}, "gpu", 1, nil, `unknown resource type "gpu"`},
		{"zero", []int{1}, "node", 0, nil, "not positive"},
		{"too many", []int{MaxTasks}, "core", 2, nil, "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := distributePerResource(tc.ncores, tc.typ, tc.count)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tasks per rank (-want +got):\n%s", diff)
			}
		})
	}
}

func makeR(ranks int, cores string) *rset.R {
	var nodes []rset.Node
	for i := 0; i < ranks; i++ {
		nodes = append(nodes, rset.Node{Rank: uint(i), Hostname: "n" + string(rune('0'+i)), Cores: idset.MustParse(cores)})
	}
	return rset.New(nodes)
}

// Layout counts tasks from the jobspec (total, or per_slot x slots) and
// numbers them rank by rank, flux-shell's block task map.
func TestLayout(t *testing.T) {
	type rank struct{ NTasks, Basis int }
	tests := []struct {
		name string
		opts jobspec.Options
		r    *rset.R
		want []rank
	}{
		{"-n1", jobspec.Options{}, makeR(1, "0-3"), []rank{{1, 0}}},
		{"-N2 -n4", jobspec.Options{Nodes: 2, NTasks: 4}, makeR(2, "0-1"), []rank{{2, 0}, {2, 2}}},
		{"-N2 -n3 (total)", jobspec.Options{Nodes: 2, NTasks: 3}, makeR(2, "0-1"), []rank{{2, 0}, {1, 2}}},
		{"-N2 (exclusive, one per node)", jobspec.Options{Nodes: 2}, makeR(2, "0-7"), []rank{{1, 0}, {1, 1}}},
		{"-n2 -c2 on one rank", jobspec.Options{NTasks: 2, CoresPerTask: 2}, makeR(1, "0-3"), []rank{{2, 0}}},
		{"-n4 on a test cluster of four ranks", jobspec.Options{NTasks: 4}, makeR(4, "0"), []rank{{1, 0}, {1, 1}, {1, 2}, {1, 3}}},
		{"--tasks-per-node=3", jobspec.Options{Nodes: 2, Extra: map[string]any{"shell": map[string]any{"options": map[string]any{"per-resource": map[string]any{"type": "node", "count": 3}}}}},
			makeR(2, "0-1"), []rank{{3, 0}, {3, 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Command = []string{"true"}
			js, err := jobspec.FromOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Layout(js, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			var ranks []rank
			for i, rt := range got {
				if rt.NodeID != i || rt.Rank != uint(i) {
					t.Errorf("rank %d: node id %d, rank %d", i, rt.NodeID, rt.Rank)
				}
				ranks = append(ranks, rank{rt.NTasks, rt.Basis})
			}
			if diff := cmp.Diff(tc.want, ranks); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, NTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Layout(js, rset.New(nil)); err == nil || err.Error() != "R holds no resources" {
		t.Errorf("empty R: %v", err)
	}
	js.Attributes.System.Shell.Options = map[string]any{"per-resource": "node"}
	if _, err := Layout(js, makeR(1, "0")); err == nil || !strings.Contains(err.Error(), "invalid per-resource spec") {
		t.Errorf("bad per-resource: %v", err)
	}
}
