// An external test package: the round trip through config.Load needs
// internal/config, which imports this package.
package resource_test

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/config"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/resource"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
}

// with returns the union of fake trees, later ones winning.
func with(trees ...fstest.MapFS) fstest.MapFS {
	out := fstest.MapFS{}
	for _, t := range trees {
		maps.Copy(out, t)
	}
	return out
}

func pciDev(addr, vendor, class, numa string) fstest.MapFS {
	d := "sys/bus/pci/devices/" + addr + "/"
	return fstest.MapFS{
		d + "vendor":    file(vendor + "\n"),
		d + "class":     file(class + "\n"),
		d + "numa_node": file(numa + "\n"),
		d + "device":    file("0x20b0\n"),
	}
}

var (
	eightCPUs = fstest.MapFS{"sys/devices/system/cpu/online": file("0-7\n")}

	// Two NUMA domains of four CPUs, each CPU with an SMT sibling 4 away
	// in its domain, and a memory-only third domain (CXL, HBM).
	twoNUMA = fstest.MapFS{
		"sys/devices/system/node/online":         file("0-2\n"),
		"sys/devices/system/node/possible":       file("0-2\n"),
		"sys/devices/system/node/has_cpu":        file("0-1\n"),
		"sys/devices/system/node/node0/cpulist":  file("0-1,4-5\n"),
		"sys/devices/system/node/node0/meminfo":  file("Node 0 MemTotal:       32768000 kB\nNode 0 MemFree:        1000 kB\n"),
		"sys/devices/system/node/node1/cpulist":  file("2-3,6-7\n"),
		"sys/devices/system/node/node1/meminfo":  file("Node 1 MemTotal:       32768000 kB\n"),
		"sys/devices/system/node/node2/cpulist":  file("\n"),
		"sys/devices/system/node/node2/meminfo":  file("Node 2 MemTotal:       1048576 kB\n"),
		"sys/devices/system/node/node2/distance": file("10 20 20\n"),
	}
	smt = func() fstest.MapFS {
		m := fstest.MapFS{}
		for c, sib := range []string{"0,4", "1,5", "2,6", "3,7", "0,4", "1,5", "2,6", "3,7"} {
			m["sys/devices/system/cpu/cpu"+string(rune('0'+c))+"/topology/thread_siblings_list"] = file(sib + "\n")
		}
		return m
	}()

	// Two NVIDIA GPUs listed out of address order, and what must not be
	// taken for one: a BMC's display, an Intel GPU, the NVIDIA audio
	// function, an NVSwitch bridge and a GPU passed through to a VM.
	pciTwoGPUs = with(
		pciDev("0000:86:00.0", "0x10de", "0x030200", "1"),
		pciDev("0000:3b:00.0", "0x10de", "0x030000", "0"),
		fstest.MapFS{
			"sys/bus/pci/devices/0000:3b:00.0/driver": link("../../../../bus/pci/drivers/nvidia"),
		},
		pciDev("0000:02:00.0", "0x1a03", "0x030000", "-1"), // ASPEED VGA
		pciDev("0000:00:02.0", "0x8086", "0x030000", "0"),  // Intel
		pciDev("0000:3b:00.1", "0x10de", "0x040300", "0"),  // HDMI audio
		pciDev("0000:c1:00.0", "0x10de", "0x068000", "1"),  // NVSwitch
		pciDev("0000:d8:00.0", "0x10de", "0x030200", "1"),
		fstest.MapFS{
			"sys/bus/pci/devices/0000:d8:00.0/driver": link("../../../../bus/pci/drivers/vfio-pci"),
			"sys/bus/pci/drivers/nvidia/bind":         file(""),
		},
	)
	pciDisplayOnly = with(
		pciDev("0000:02:00.0", "0x1a03", "0x030000", "-1"),
		pciDev("0000:3b:00.1", "0x10de", "0x040300", "0"),
	)
)

func uintp(u uint) *uint { return &u }

// setCmp compares idsets by value: their fields are unexported.
var setCmp = cmp.Comparer(func(a, b idset.Set) bool { return a.Equal(b) })

func TestDiscover(t *testing.T) {
	tests := []struct {
		name string
		fs   fstest.MapFS
		want string // rset summary
	}{
		{
			name: "online file",
			fs:   eightCPUs,
			want: "rank0/core[0-7]",
		},
		{
			name: "offline cpus are left out of the online file",
			fs:   fstest.MapFS{"sys/devices/system/cpu/online": file("0,2-3\n")},
			want: "rank0/core[0,2-3]",
		},
		{
			name: "no online file: count cpuN directories",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/cpu0/topology/core_id": file("0\n"),
				"sys/devices/system/cpu/cpu1/online":           file("1\n"),
				"sys/devices/system/cpu/cpu2/online":           file("0\n"), // offline
				"sys/devices/system/cpu/cpu3/online":           file("1\n"),
				"sys/devices/system/cpu/cpu10/online":          file("1\n"),
				"sys/devices/system/cpu/cpufreq/policy0":       file(""),
				"sys/devices/system/cpu/cpuidle/current":       file(""),
				"sys/devices/system/cpu/possible":              file("0-63\n"),
			},
			want: "rank0/core[0-1,3,10]",
		},
		{
			name: "nvidia gpus from pci, others ignored",
			fs:   with(eightCPUs, pciTwoGPUs),
			want: "rank0/core[0-7],gpu[0-1]",
		},
		{
			name: "a non-nvidia display is no gpu",
			fs:   with(eightCPUs, pciDisplayOnly),
			want: "rank0/core[0-7]",
		},
		{
			name: "nvidia gpus from proc",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online":                    file("0-3\n"),
				"proc/driver/nvidia/gpus/0000:3b:00.0/information": file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:86:00.0/information": file("Model: X\n"),
				"dev/nvidia0":                file(""),
				"dev/nvidia5":                file(""),
				"proc/driver/nvidia/version": file("NVRM\n"),
				"proc/driver/nvidia/gpus/0000:af:00.0/information":      file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:d8:00.0/information":      file("Model: X\n"),
				"proc/driver/nvidia/gpus/0000:d8:00.0/registry":         file(""),
				"proc/driver/nvidia/gpus/0000:af:00.0/power":            file(""),
				"proc/driver/nvidia/gpus/0000:3b:00.0/power":            file(""),
				"proc/driver/nvidia/gpus/0000:86:00.0/registry":         file(""),
				"proc/driver/nvidia/gpus/0000:86:00.0/information.orig": file(""),
			},
			want: "rank0/core[0-3],gpu[0-3]",
		},
		{
			name: "nvidia gpus from dev",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online": file("0-1\n"),
				"dev/nvidia0":                   file(""),
				"dev/nvidia1":                   file(""),
				"dev/nvidiactl":                 file(""),
				"dev/nvidia-uvm":                file(""),
				"dev/nvidia-caps/nvidia-cap1":   file(""),
				"dev/null":                      file(""),
			},
			want: "rank0/core[0-1],gpu[0-1]",
		},
		{
			name: "no gpus",
			fs: fstest.MapFS{
				"sys/devices/system/cpu/online": file("0\n"),
				"dev/nvidiactl":                 file(""),
				"dev/null":                      file(""),
			},
			want: "rank0/core0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := resource.Discover(tc.fs, "myhost", resource.MemoryReserve{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.String()); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got := r.Nodelist().String(); got != "myhost" {
				t.Errorf("nodelist = %q, want myhost", got)
			}
		})
	}
}

// fakeNVML answers as NVML would.
func fakeNVML(gpus []resource.NVMLGPU, err error) resource.GPULister {
	return resource.GPUListerFunc(func() ([]resource.NVMLGPU, error) { return gpus, err })
}

var a100s = []resource.NVMLGPU{
	{Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-86", BusID: "00000000:86:00.0", MemoryBytes: 80 << 30},
	{Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-3b", BusID: "00000000:3B:00.0", MemoryBytes: 80 << 30},
}

func TestDiscoverMachine(t *testing.T) {
	numa := []resource.NUMANode{
		{ID: 0, Cores: idset.MustParse("0-1,4-5"), MemoryBytes: 32768000 << 10},
		{ID: 1, Cores: idset.MustParse("2-3,6-7"), MemoryBytes: 32768000 << 10},
		{ID: 2, MemoryBytes: 1 << 30},
	}
	pciGPUs := []resource.GPU{
		{ID: 0, PCI: "0000:3b:00.0", NUMA: uintp(0), Source: "pci"},
		{ID: 1, PCI: "0000:86:00.0", NUMA: uintp(1), Source: "pci"},
	}
	tests := []struct {
		name string
		fs   fstest.MapFS
		nvml resource.GPULister
		want resource.Machine
	}{
		{
			name: "cores only",
			fs:   eightCPUs,
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7")},
		},
		{
			name: "numa and smt",
			fs:   with(eightCPUs, twoNUMA, smt),
			want: resource.Machine{
				Hostname: "h", Cores: idset.MustParse("0-7"), NUMA: numa,
				SMT: []idset.Set{idset.MustParse("0,4"), idset.MustParse("1,5"), idset.MustParse("2,6"), idset.MustParse("3,7")},
			},
		},
		{
			name: "offline cpus leave numa domains and smt groups",
			fs:   with(twoNUMA, smt, fstest.MapFS{"sys/devices/system/cpu/online": file("0-3,5\n")}),
			want: resource.Machine{
				Hostname: "h", Cores: idset.MustParse("0-3,5"),
				NUMA: []resource.NUMANode{
					{ID: 0, Cores: idset.MustParse("0-1,5"), MemoryBytes: 32768000 << 10},
					{ID: 1, Cores: idset.MustParse("2-3"), MemoryBytes: 32768000 << 10},
					{ID: 2, MemoryBytes: 1 << 30},
				},
				SMT: []idset.Set{idset.MustParse("1,5")},
			},
		},
		{
			name: "a broken numa node is a note, the others stay",
			fs: with(eightCPUs, fstest.MapFS{
				"sys/devices/system/node/node0/cpulist": file("0-7\n"),
				"sys/devices/system/node/node1/cpulist": file("seven\n"),
			}),
			want: resource.Machine{
				Hostname: "h", Cores: idset.MustParse("0-7"),
				NUMA:  []resource.NUMANode{{ID: 0, Cores: idset.MustParse("0-7")}},
				Notes: []string{"numa: /sys/devices/system/node/node1/cpulist: "},
			},
		},
		{
			name: "two gpus from pci, in address order",
			fs:   with(eightCPUs, pciTwoGPUs),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: pciGPUs},
		},
		{
			name: "no nvidia gpu among the display devices",
			fs:   with(eightCPUs, pciDisplayOnly),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7")},
		},
		{
			name: "nvml first, in its order, numa from sysfs",
			fs:   with(eightCPUs, pciTwoGPUs),
			nvml: fakeNVML(a100s, nil),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: []resource.GPU{
				{ID: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-86", PCI: "0000:86:00.0", NUMA: uintp(1), MemoryBytes: 80 << 30, Source: "nvml"},
				{ID: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-3b", PCI: "0000:3b:00.0", NUMA: uintp(0), MemoryBytes: 80 << 30, Source: "nvml"},
			}},
		},
		{
			name: "nvml without pci addresses",
			fs:   eightCPUs,
			nvml: fakeNVML([]resource.NVMLGPU{{Name: "Tesla T4", UUID: "GPU-1"}, {Name: "Tesla T4", UUID: "GPU-2", BusID: "bogus"}}, nil),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: []resource.GPU{
				{ID: 0, Name: "Tesla T4", UUID: "GPU-1", Source: "nvml"},
				{ID: 1, Name: "Tesla T4", UUID: "GPU-2", Source: "nvml"},
			}},
		},
		{
			name: "nvml finding no gpu is believed",
			fs:   with(eightCPUs, pciTwoGPUs),
			nvml: fakeNVML(nil, nil),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7")},
		},
		{
			name: "no nvml library: sysfs, silently",
			fs:   with(eightCPUs, pciTwoGPUs),
			nvml: fakeNVML(nil, resource.ErrNoGPULibrary),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: pciGPUs},
		},
		{
			name: "nvml failing: sysfs, with a note",
			fs:   with(eightCPUs, pciTwoGPUs),
			nvml: fakeNVML(nil, errors.New("nvml: nvmlInit_v2: Insufficient Permissions")),
			want: resource.Machine{
				Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: pciGPUs,
				Notes: []string{"nvml: nvmlInit_v2: Insufficient Permissions; GPUs read from sysfs instead"},
			},
		},
		{
			name: "no nvml, no gpu",
			fs:   with(eightCPUs, pciDisplayOnly),
			nvml: fakeNVML(nil, resource.ErrNoGPULibrary),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7")},
		},
		{
			name: "proc gpus get pci addresses and numa",
			fs: with(eightCPUs, pciDev("0000:3b:00.0", "0x10de", "0x030200", "0"), fstest.MapFS{
				"sys/bus/pci/devices/0000:3b:00.0/driver":          link("../../../../bus/pci/drivers/nouveau"),
				"proc/driver/nvidia/gpus/0000:3b:00.0/information": file("Model: X\n"),
			}),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: []resource.GPU{
				{ID: 0, PCI: "0000:3b:00.0", NUMA: uintp(0), Source: "proc"},
			}},
		},
		{
			name: "dev gpus keep their numbers",
			fs:   with(eightCPUs, fstest.MapFS{"dev/nvidia2": file(""), "dev/nvidia5": file("")}),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: []resource.GPU{
				{ID: 2, Source: "dev"}, {ID: 5, Source: "dev"},
			}},
		},
		{
			name: "pci address order is numeric",
			fs: with(eightCPUs,
				pciDev("10000:01:00.0", "0x10de", "0x030200", "-1"),
				pciDev("e000:01:00.0", "0x10de", "0x030200", "garbage"),
			),
			want: resource.Machine{Hostname: "h", Cores: idset.MustParse("0-7"), GPUs: []resource.GPU{
				{ID: 0, PCI: "e000:01:00.0", Source: "pci"},
				{ID: 1, PCI: "10000:01:00.0", Source: "pci"},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resource.DiscoverMachine(tc.fs, "h", tc.nvml)
			if err != nil {
				t.Fatal(err)
			}
			// A note's wording after the path is the idset parser's.
			for i, n := range m.Notes {
				if i < len(tc.want.Notes) && strings.HasPrefix(n, tc.want.Notes[i]) {
					m.Notes[i] = tc.want.Notes[i]
				}
			}
			if diff := cmp.Diff(tc.want, *m, setCmp); diff != "" {
				t.Errorf("machine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	tests := []struct {
		name, host string
		fs         fstest.MapFS
		want       string
	}{
		{"empty fs", "h", fstest.MapFS{}, "discover: no cpu information"},
		{"bad online file", "h", fstest.MapFS{"sys/devices/system/cpu/online": file("zero\n")}, "discover: /sys/devices/system/cpu/online:"},
		{"no cpus", "h", fstest.MapFS{"sys/devices/system/cpu/online": file("\n")}, "discover: no online cpus found"},
		{"bad hostname", "a b", fstest.MapFS{"sys/devices/system/cpu/online": file("0\n")}, `discover: invalid hostname "a b"`},
		{"empty hostname", "", fstest.MapFS{"sys/devices/system/cpu/online": file("0\n")}, `discover: invalid hostname ""`},
		{"huge online file", "h", fstest.MapFS{"sys/devices/system/cpu/online": file(strings.Repeat("0", 1<<20))}, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resource.Discover(tc.fs, tc.host, resource.MemoryReserve{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWriteConfig(t *testing.T) {
	tests := []struct {
		name string
		fs   fstest.MapFS
		nvml resource.GPULister
		want string
	}{
		{
			name: "cores only",
			fs:   eightCPUs,
			want: `# rank0/core[0-7]
[[resource.config]]
hosts = "node7"
cores = "0-7"
`,
		},
		{
			name: "numa, smt and nvml gpus",
			fs:   with(eightCPUs, twoNUMA, smt, pciTwoGPUs),
			nvml: fakeNVML(a100s, nil),
			want: `# rank0/core[0-7],gpu[0-1]
# numa0: cores 0-1,4-5, 31.2 GiB
# numa1: cores 2-3,6-7, 31.2 GiB
# numa2: no cores, 1.0 GiB
# smt: 8 cpus on 4 physical cores, 2 threads per core; siblings 0,4 1,5 2,6 3,7
# gpu0: NVIDIA A100-SXM4-80GB, GPU-86, pci 0000:86:00.0, numa1, 80.0 GiB (nvml)
# gpu1: NVIDIA A100-SXM4-80GB, GPU-3b, pci 0000:3b:00.0, numa0, 80.0 GiB (nvml)
[[resource.config]]
hosts = "node7"
cores = "0-7"
gpus = "0-1"
`,
		},
		{
			name: "sysfs gpus and a note",
			fs:   with(eightCPUs, pciTwoGPUs),
			nvml: fakeNVML(nil, errors.New("nvml: nvmlInit_v2: Unknown Error")),
			want: `# rank0/core[0-7],gpu[0-1]
# gpu0: NVIDIA GPU, pci 0000:3b:00.0, numa0 (pci)
# gpu1: NVIDIA GPU, pci 0000:86:00.0, numa1 (pci)
# note: nvml: nvmlInit_v2: Unknown Error; GPUs read from sysfs instead
[[resource.config]]
hosts = "node7"
cores = "0-7"
gpus = "0-1"
`,
		},
		{
			name: "hybrid cpu: some cores without siblings",
			fs: with(eightCPUs, fstest.MapFS{
				"sys/devices/system/cpu/cpu0/topology/thread_siblings_list": file("0-1\n"),
				"sys/devices/system/cpu/cpu1/topology/thread_siblings_list": file("0-1\n"),
				"sys/devices/system/cpu/cpu2/topology/thread_siblings_list": file("2\n"),
			}),
			want: `# rank0/core[0-7]
# smt: 8 cpus on 7 physical cores, 1-2 threads per core; siblings 0-1
[[resource.config]]
hosts = "node7"
cores = "0-7"
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resource.DiscoverMachine(tc.fs, "node7", tc.nvml)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := m.WriteConfig(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("snippet (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigRoundTrip feeds the printed snippet, comments and all, back
// through config.Load (which rejects unknown keys) and FromConfig: the
// instance it configures must be the R discover describes.
func TestConfigRoundTrip(t *testing.T) {
	evil := fakeNVML([]resource.NVMLGPU{{Name: "GPU\n[[resource.config]]\nhosts = \"x\"\r", UUID: "GPU-\x00"}}, nil)
	tests := []struct {
		name, host string
		fs         fstest.MapFS
		nvml       resource.GPULister
	}{
		{"cores", "node7", eightCPUs, nil},
		{"sparse cores", "n1", fstest.MapFS{"sys/devices/system/cpu/online": file("0,2-5,9\n")}, nil},
		{"everything", "compute-12.cluster", with(eightCPUs, twoNUMA, smt, pciTwoGPUs), fakeNVML(a100s, nil)},
		{"pci gpus and a note", "h", with(eightCPUs, pciTwoGPUs), fakeNVML(nil, errors.New("boom\nboom"))},
		{"dev gpu ids", "h", with(eightCPUs, fstest.MapFS{"dev/nvidia2": file(""), "dev/nvidia5": file("")}), nil},
		{"a gpu name that tries to be toml", "h", eightCPUs, evil},
		{"quotes in a host name", `we"ird\host`, eightCPUs, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := resource.DiscoverMachine(tc.fs, tc.host, tc.nvml)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := m.WriteConfig(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "resource.toml")
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("config.Load of\n%s: %v", b.String(), err)
			}
			if diff := cmp.Diff([]resource.ConfigEntry{m.ConfigEntry()}, cfg.Resource.Config); diff != "" {
				t.Errorf("config entries (-want +got):\n%s", diff)
			}
			got, err := resource.FromConfig(cfg.Resource.Config)
			if err != nil {
				t.Fatal(err)
			}
			want := m.R()
			wantJSON, _ := want.MarshalJSON()
			gotJSON, _ := got.MarshalJSON()
			if !got.Equal(want) || !bytes.Equal(wantJSON, gotJSON) {
				t.Errorf("R from the snippet:\n%s\nwant discover's:\n%s", gotJSON, wantJSON)
			}
		})
	}
}

// FuzzDiscoverMachine feeds arbitrary sysfs contents and NVML answers to
// discovery: it must never panic, and whatever it finds must print as a
// snippet that configures the same R.
func FuzzDiscoverMachine(f *testing.F) {
	f.Add("0-7", "0-3", "Node 0 MemTotal: 1024 kB", "0,4", "0", "00000000:3B:00.0", "A100")
	f.Add("0,2-5", "", "", "", "-1", "", "")
	f.Add("0", "9-1", "Node 0 MemTotal: 99999999999999999999 kB", "0-", "x", "0000:3b:00.0junk", "a\nb")
	f.Fuzz(func(t *testing.T, online, nodeCPUs, meminfo, siblings, numa, busID, name string) {
		fsys := with(pciTwoGPUs, fstest.MapFS{
			"sys/devices/system/cpu/online":                             file(online),
			"sys/devices/system/cpu/cpu0/topology/thread_siblings_list": file(siblings),
			"sys/devices/system/node/node0/cpulist":                     file(nodeCPUs),
			"sys/devices/system/node/node0/meminfo":                     file(meminfo),
			"sys/bus/pci/devices/0000:3b:00.0/numa_node":                file(numa),
		})
		var nvml resource.GPULister
		if busID != "" {
			nvml = fakeNVML([]resource.NVMLGPU{{Name: name, UUID: name, BusID: busID}}, nil)
		}
		m, err := resource.DiscoverMachine(fsys, "h", nvml)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := m.WriteConfig(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "r.toml")
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatalf("config.Load of\n%s: %v", b.String(), err)
		}
		r, err := resource.FromConfig(cfg.Resource.Config)
		if err != nil || !r.Equal(m.R()) {
			t.Fatalf("FromConfig of\n%s = %v, %v; want %v", b.String(), r, err, m.R())
		}
	})
}
