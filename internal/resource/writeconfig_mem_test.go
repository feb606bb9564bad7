package resource_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/resource"
)

// Issue 26: the snippet discover writes gives the host the memory
// discovery found (MemTotal less the reserve) in a memory key that
// configures the very R discovered, headed by a comment in --mem's units;
// a machine whose memory is unknown, or all reserved, gets no key.
func TestWriteConfigMemory(t *testing.T) {
	meminfo := func(kb string) fstest.MapFS {
		return fstest.MapFS{"proc/meminfo": file("MemTotal:       " + kb + " kB\nMemFree:  1024 kB\n")}
	}
	tests := []struct {
		name    string
		fs      fstest.MapFS
		reserve resource.MemoryReserve
		want    string
	}{
		{name: "16G less the default reserve", fs: with(eightCPUs, meminfo("16777216")), want: `# rank0/core[0-7]
# memory: 15.1G of 16G (MemTotal less the reserve)
[[resource.config]]
hosts = "node7"
cores = "0-7"
memory = "15564M"
`},
		{name: "a reserve of 1G", fs: with(eightCPUs, meminfo("16777216")), reserve: resource.MemoryReserve{Bytes: 1 << 30, Set: true}, want: `# rank0/core[0-7]
# memory: 15G of 16G (MemTotal less the reserve)
[[resource.config]]
hosts = "node7"
cores = "0-7"
memory = "15360M"
`},
		{name: "all of it reserved", fs: with(eightCPUs, meminfo("1048576")), reserve: resource.MemoryReserve{Bytes: 2 << 30, Set: true}, want: `# rank0/core[0-7]
# memory: none of 1G is left after the reserve
[[resource.config]]
hosts = "node7"
cores = "0-7"
`},
		{name: "no meminfo", fs: eightCPUs, want: `# rank0/core[0-7]
[[resource.config]]
hosts = "node7"
cores = "0-7"
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resource.DiscoverMachine(tc.fs, "node7", nil)
			if err != nil {
				t.Fatal(err)
			}
			m.Reserve(tc.reserve)
			var b bytes.Buffer
			if err := m.WriteConfig(&b); err != nil {
				t.Fatal(err)
			}
			// The comment names R's short form, which may say memory:
			// only the lines after it are this test's.
			got := b.String()
			if i := bytes.IndexByte(b.Bytes(), '\n'); i >= 0 {
				got = "# rank0/core[0-7]" + got[i:]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("snippet (-want +got):\n%s", diff)
			}

			// Read back, the snippet configures the R discovered.
			path := filepath.Join(t.TempDir(), "resource.toml")
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("config.Load of\n%s: %v", b.String(), err)
			}
			r, err := resource.FromConfig(cfg.Resource.Config)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := m.R().MarshalJSON()
			gotR, _ := r.MarshalJSON()
			if !bytes.Equal(want, gotR) {
				t.Errorf("R from the snippet:\n%s\nwant discover's:\n%s", gotR, want)
			}
		})
	}
}
