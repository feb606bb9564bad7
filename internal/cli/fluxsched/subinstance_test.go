package fluxsched

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/rset"
)

// The sub-instance's inventory is the job's R: each host with the cores,
// GPUs and memory the job holds there, as the config loader reads it back.
func TestInventoryTOML(t *testing.T) {
	for _, tc := range []struct {
		name, r string
	}{
		{"one host, two cores", `{"version":1,"execution":{"R_lite":[{"rank":"1","children":{"core":"0-1"}}],"nodelist":["node1"]}}`},
		{"cores of two hosts", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"1"}},{"rank":"3","children":{"core":"0,2"}}],"nodelist":["a","d"]}}`},
		{"GPUs and memory", `{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0","gpu":"1"},"memory":2147483648}],"nodelist":["g0"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rset.Parse([]byte(tc.r))
			if err != nil {
				t.Fatalf("parse R: %v", err)
			}
			path := filepath.Join(t.TempDir(), SubinstanceConfig)
			if err := os.WriteFile(path, []byte(inventoryTOML(r)), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("config.Load of\n%s: %v", inventoryTOML(r), err)
			}
			var hosts []string
			for _, e := range cfg.Resource.Config {
				hosts = append(hosts, e.Hosts)
			}
			var want []string
			for _, n := range r.Nodes() {
				want = append(want, n.Hostname)
			}
			if !slices.Equal(hosts, want) {
				t.Errorf("hosts = %v, want %v", hosts, want)
			}
			for i, n := range r.Nodes() {
				e := cfg.Resource.Config[i]
				if e.Cores != n.Cores.String() {
					t.Errorf("%s: cores = %q, want %q", e.Hosts, e.Cores, n.Cores.String())
				}
				if n.GPUs.Count() > 0 && e.GPUs != n.GPUs.String() {
					t.Errorf("%s: gpus = %q, want %q", e.Hosts, e.GPUs, n.GPUs.String())
				}
				if n.Memory > 0 && e.Memory == "" {
					t.Errorf("%s: no memory, want %d bytes", e.Hosts, n.Memory)
				}
			}
		})
	}
}

// The program's environment names the sub-instance and claims no job of
// the parent's.
func TestAllocEnv(t *testing.T) {
	id := fluid.ID(1 << 30)
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"replaced and added", []string{"HOME=/h", "FLUXQ_STATE_DIR=/parent", "FLUXQ_JOB_ID=ƒx"},
			[]string{"HOME=/h", "FLUXQ_STATE_DIR=/sub", "FLUXQ_ALLOC_JOB=" + id.String(), "FLUXQ_ALLOC_PARENT=/parent"}},
		{"a nested allocation's own", []string{"FLUXQ_ALLOC_JOB=ƒy", "FLUXQ_ALLOC_PARENT=/p0", "PATH=/bin"},
			[]string{"PATH=/bin", "FLUXQ_STATE_DIR=/sub", "FLUXQ_ALLOC_JOB=" + id.String(), "FLUXQ_ALLOC_PARENT=/parent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := allocEnv(tc.environ, "/sub", "/parent", id); !slices.Equal(got, tc.want) {
				t.Errorf("allocEnv = %q, want %q", got, tc.want)
			}
		})
	}
}
