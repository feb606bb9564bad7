package resource

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// Paths Discover reads, relative to the root of the fs.FS it is given.
const (
	cpuDir          = "sys/devices/system/cpu"
	cpuOnlineFile   = cpuDir + "/online"
	nodeDir         = "sys/devices/system/node"
	pciDir          = "sys/bus/pci/devices"
	nvidiaProcDir   = "proc/driver/nvidia/gpus"
	meminfoFile     = "proc/meminfo"
	devDir          = "dev"
	nvidiaDevPrefix = "nvidia"
)

// PCI identities of an NVIDIA GPU: the vendor, and the class codes of a
// VGA controller (0x0300xx, GeForce, workstation boards) and of a 3D
// controller (0x0302xx, the data-centre boards without a display). The
// audio function and NVSwitch bridges of the same vendor have other
// classes and are no GPUs.
const (
	nvidiaVendor   = "0x10de"
	pciClassVGA    = "0x0300"
	pciClass3D     = "0x0302"
	nvidiaDriver   = "nvidia"
	pciNoNUMANode  = "-1"
	pciAddrPattern = "%x:%x:%x.%x"
)

// maxSysfsFile bounds what Discover reads from one sysfs file: the online
// cpu list of the largest machines is a few hundred bytes, a NUMA node's
// meminfo a few kilobytes.
const maxSysfsFile = 64 << 10

// Where a GPU's description came from, best first (GPU.Source).
const (
	SourceNVML = "nvml" // libnvidia-ml: names, UUIDs, memory
	SourcePCI  = "pci"  // /sys/bus/pci/devices
	SourceProc = "proc" // /proc/driver/nvidia/gpus
	SourceDev  = "dev"  // /dev/nvidiaN
)

// ErrNoGPULibrary is what a GPULister answers when its library (NVML) is
// not installed or no driver is loaded: DiscoverMachine then reads sysfs
// without a note, as on any machine without NVIDIA GPUs.
var ErrNoGPULibrary = errors.New("no GPU library")

// NVMLGPU is what the NVIDIA driver's library says about one GPU.
type NVMLGPU struct {
	Name        string
	UUID        string
	BusID       string // PCI address in any case and domain width, e.g. "00000000:3B:00.0"; "" if unknown
	MemoryBytes uint64 // 0 if unknown
}

// GPULister asks the NVIDIA driver for its GPUs, in its index order.
// fluxres implements it with NVML; tests fake it.
type GPULister interface {
	NVIDIAGPUs() ([]NVMLGPU, error)
}

// GPUListerFunc lets a function be a GPULister.
type GPUListerFunc func() ([]NVMLGPU, error)

// NVIDIAGPUs calls f.
func (f GPUListerFunc) NVIDIAGPUs() ([]NVMLGPU, error) { return f() }

// Machine is what DiscoverMachine found: what R is made of, and what R has
// no place for (NUMA domains, SMT siblings, which GPU is which).
type Machine struct {
	Hostname string    `json:"hostname"`
	Cores    idset.Set `json:"cores"`
	// SMT lists the groups of two or more online CPUs that are hardware
	// threads of one physical core; nil when sysfs does not say or no
	// core has siblings.
	SMT  []idset.Set `json:"smt,omitempty"`
	NUMA []NUMANode  `json:"numa,omitempty"`
	GPUs []GPU       `json:"gpus,omitempty"`
	// MemTotal is the machine's memory, /proc/meminfo's MemTotal, and
	// Memory what of it may be scheduled: MemTotal less the reserve
	// (Reserve; DefaultMemoryReserve until it is called). Both are 0 when
	// /proc/meminfo cannot be read.
	MemTotal uint64 `json:"memory_total,omitempty"`
	Memory   uint64 `json:"memory,omitempty"`
	// Notes are what went wrong without stopping discovery, such as NVML
	// failing on a machine that has it.
	Notes []string `json:"notes,omitempty"`
}

// MemoryReserve is [resource] memory-reserve: the memory of a discovered
// host left to the system (the kernel, fluxsched, a desktop), which jobs
// are never given. The zero value is the default, DefaultMemoryReserve.
type MemoryReserve struct {
	Bytes uint64
	Set   bool // Bytes was configured; false: the default
}

// Default memory reserve: 5% of the host's memory, at least 512M (what a
// small machine's system needs to stay usable) and at most 4G (a big
// machine's system needs no more).
const (
	DefaultReservePercent = 5
	MinDefaultReserve     = 512 << 20
	MaxDefaultReserve     = 4 << 30
)

// DefaultMemoryReserve is the reserve of a host with total bytes of
// memory when none is configured: 5% of it clamped to [512M, 4G].
func DefaultMemoryReserve(total uint64) uint64 {
	return min(max(total/100*DefaultReservePercent, MinDefaultReserve), MaxDefaultReserve)
}

// Of is the reserve on a host of total bytes.
func (r MemoryReserve) Of(total uint64) uint64 {
	if r.Set {
		return r.Bytes
	}
	return DefaultMemoryReserve(total)
}

// Reserve sets the machine's schedulable memory to MemTotal less r's
// reserve, rounded down to a whole megabyte (so that a config entry can
// say it exactly), 0 when the reserve is all of it.
func (m *Machine) Reserve(r MemoryReserve) {
	m.Memory = (m.MemTotal - min(m.MemTotal, r.Of(m.MemTotal))) &^ (1<<20 - 1)
}

// NUMANode is one NUMA domain: its online CPUs (possibly none, for a
// memory-only node) and its memory.
type NUMANode struct {
	ID          uint      `json:"id"`
	Cores       idset.Set `json:"cores"`
	MemoryBytes uint64    `json:"memory_bytes,omitempty"`
}

// GPU is one NVIDIA GPU.
type GPU struct {
	ID          uint   `json:"id"` // its id in R
	Name        string `json:"name,omitempty"`
	UUID        string `json:"uuid,omitempty"`
	PCI         string `json:"pci,omitempty"`  // sysfs form, "0000:3b:00.0"
	NUMA        *uint  `json:"numa,omitempty"` // nil when the platform does not say
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	Source      string `json:"source"`
}

// Discover describes this machine as a one-rank inventory: rank 0 named
// hostname, with the online CPUs as cores, the NVIDIA GPUs, if any,
// found from sysfs alone (DiscoverMachine without a GPULister), and its
// memory less reserve. fsys is the root filesystem (os.DirFS("/") in
// production).
func Discover(fsys fs.FS, hostname string, reserve MemoryReserve) (*rset.R, error) {
	m, err := DiscoverMachine(fsys, hostname, nil)
	if err != nil {
		return nil, err
	}
	m.Reserve(reserve)
	return m.R(), nil
}

// DiscoverMachine describes this machine: cores, SMT siblings, NUMA
// domains and NVIDIA GPUs. fsys is the root filesystem; nvml, if not nil,
// is asked for GPUs first.
//
// Cores are the kernel's logical CPU ids, so a job shell binds a task to
// the very ids R names; flux-core's hwloc counts physical cores instead,
// which fluxq has no way to read without hwloc. CPUs come from
// sys/devices/system/cpu/online, or, where that file is missing, from the
// cpuN directories whose cpuN/online does not say 0.
//
// GPUs get ids 0..n-1 from the first source that knows of any: nvml, in
// its index order (that of nvidia-smi and of CUDA_DEVICE_ORDER=PCI_BUS_ID);
// else the PCI devices of sysfs that are NVIDIA GPUs, in PCI address
// order, leaving out those bound to another driver (vfio-pci for a
// virtual machine, nouveau for a display), which CUDA cannot use; else
// proc/driver/nvidia/gpus; else dev/nvidiaN, whose numbers are kept as
// the ids (a container given nvidia2 has that device only). A working
// nvml that finds none is believed: in a container it sees only the GPUs
// given to it, while sysfs shows the host's.
//
// Memory is proc/meminfo's MemTotal, less the default reserve (see
// Machine.Reserve). It is the host's memory, not a container's cgroup
// limit: a container's fluxsched should be given memory in its config.
//
// Only cores are required: NUMA, SMT, GPU and memory information that
// cannot be read is left out (with a note when it looks broken rather than
// absent).
func DiscoverMachine(fsys fs.FS, hostname string, nvml GPULister) (*Machine, error) {
	hl, err := hostlist.FromNames(hostname)
	if err != nil || hostname == "" {
		return nil, fmt.Errorf("discover: invalid hostname %q", hostname)
	}
	cores, err := onlineCPUs(fsys)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	if cores.IsEmpty() {
		return nil, fmt.Errorf("discover: no online cpus found in /%s", cpuDir)
	}
	m := &Machine{Hostname: hl.String(), Cores: cores}
	m.SMT = smtSiblings(fsys, cores)
	m.NUMA, err = numaNodes(fsys, cores)
	if err != nil {
		m.Notes = append(m.Notes, "numa: "+err.Error())
	}
	m.GPUs, err = nvidiaGPUs(fsys, nvml)
	if err != nil {
		m.Notes = append(m.Notes, err.Error())
	}
	if b, err := readSmall(fsys, meminfoFile); err == nil {
		if m.MemTotal = procMemTotal(string(b)); m.MemTotal == 0 {
			m.Notes = append(m.Notes, "memory: no MemTotal in /"+meminfoFile)
		}
	}
	m.Reserve(MemoryReserve{})
	return m, nil
}

// procMemTotal finds "MemTotal:  16314020 kB" in /proc/meminfo and returns
// it in bytes; 0 if it is not there.
func procMemTotal(meminfo string) uint64 {
	for line := range strings.Lines(meminfo) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if n, err := strconv.ParseUint(f[1], 10, 64); err == nil && n <= rset.MaxMemory>>10 {
				return n << 10
			}
		}
	}
	return 0
}

// R is the one-rank inventory the machine makes.
func (m *Machine) R() *rset.R {
	return rset.New([]rset.Node{{Rank: 0, Hostname: m.Hostname, Cores: m.Cores, GPUs: m.gpuIDs(), Memory: m.Memory}})
}

func (m *Machine) gpuIDs() idset.Set {
	ids := make([]uint, 0, len(m.GPUs))
	for _, g := range m.GPUs {
		ids = append(ids, g.ID)
	}
	return idset.Of(ids...)
}

// ConfigEntry is the [[resource.config]] entry that gives FromConfig the
// same R as m.R().
func (m *Machine) ConfigEntry() ConfigEntry {
	e := ConfigEntry{Hosts: m.Hostname, Cores: m.Cores.String(), GPUs: m.gpuIDs().String()}
	if m.Memory > 0 {
		e.Memory = strconv.FormatUint(m.Memory>>20, 10) + "M" // Reserve keeps it whole megabytes
	}
	return e
}

// WriteConfig writes m as a TOML config snippet: the [[resource.config]]
// entry, headed by comments that say what R cannot (Flux's config has no
// NUMA or SMT key, and an unknown key is an error). The snippet is valid
// input to config.Load as it stands.
func (m *Machine) WriteConfig(w io.Writer) error { return m.WriteConfigFor(w, "") }

// WriteConfigFor is WriteConfig with the entry's hosts the given
// hostlist, each taken to be like this machine (the nodes of a Slurm
// allocation, as `fluxres discover` reads them); "" is this machine.
func (m *Machine) WriteConfigFor(w io.Writer, hosts string) error {
	var b strings.Builder
	comment := func(format string, args ...any) {
		b.WriteString("# ")
		b.WriteString(commentSafe(fmt.Sprintf(format, args...)))
		b.WriteByte('\n')
	}
	comment("%s", m.R().String())
	for _, n := range m.NUMA {
		cores := "no cores"
		if !n.Cores.IsEmpty() {
			cores = "cores " + n.Cores.String()
		}
		if n.MemoryBytes > 0 {
			comment("numa%d: %s, %s", n.ID, cores, gib(n.MemoryBytes))
		} else {
			comment("numa%d: %s", n.ID, cores)
		}
	}
	if len(m.SMT) > 0 {
		comment("smt: %s", smtSummary(m.Cores, m.SMT))
	}
	for _, g := range m.GPUs {
		comment("gpu%d: %s", g.ID, g.describe())
	}
	// What memory the entry gives, and why it is less than the machine
	// has; the entry itself says it exactly, the comment for people.
	switch {
	case m.Memory > 0:
		comment("memory: %s of %s (MemTotal less the reserve)", jobspec.FormatMemory(m.Memory), jobspec.FormatMemory(m.MemTotal))
	case m.MemTotal > 0:
		comment("memory: none of %s is left after the reserve", jobspec.FormatMemory(m.MemTotal))
	}
	for _, n := range m.Notes {
		comment("note: %s", n)
	}
	e := m.ConfigEntry()
	if hosts != "" {
		e.Hosts = hosts
	}
	b.WriteString("[[resource.config]]\n")
	fmt.Fprintf(&b, "hosts = %s\n", tomlString(e.Hosts))
	fmt.Fprintf(&b, "cores = %s\n", tomlString(e.Cores))
	if e.GPUs != "" {
		fmt.Fprintf(&b, "gpus = %s\n", tomlString(e.GPUs))
	}
	if e.Memory != "" {
		fmt.Fprintf(&b, "memory = %s\n", tomlString(e.Memory))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is the GPU's comment line after "gpuN: ".
func (g GPU) describe() string {
	var parts []string
	if g.Name != "" {
		parts = append(parts, g.Name)
	} else {
		parts = append(parts, "NVIDIA GPU")
	}
	if g.UUID != "" {
		parts = append(parts, g.UUID)
	}
	if g.PCI != "" {
		parts = append(parts, "pci "+g.PCI)
	}
	if g.NUMA != nil {
		parts = append(parts, fmt.Sprintf("numa%d", *g.NUMA))
	}
	if g.MemoryBytes > 0 {
		parts = append(parts, gib(g.MemoryBytes))
	}
	return strings.Join(parts, ", ") + " (" + g.Source + ")"
}

// smtSummary says how many threads share a core, and which, briefly: a
// 256-CPU machine would otherwise write a line of 128 pairs.
func smtSummary(cores idset.Set, groups []idset.Set) string {
	lo, hi := groups[0].Count(), groups[0].Count()
	inGroups := 0
	for _, g := range groups {
		lo, hi = min(lo, g.Count()), max(hi, g.Count())
		inGroups += g.Count()
	}
	physical := len(groups) + cores.Count() - inGroups
	threads := strconv.Itoa(hi) + " threads"
	if inGroups < cores.Count() {
		threads = "1-" + threads // some cores run one thread (hybrid CPUs)
	} else if lo != hi {
		threads = strconv.Itoa(lo) + "-" + threads
	}
	const shown = 8
	names := make([]string, 0, shown)
	for _, g := range groups[:min(len(groups), shown)] {
		names = append(names, g.String())
	}
	more := ""
	if len(groups) > shown {
		more = " ..."
	}
	return fmt.Sprintf("%d cpus on %d physical cores, %s per core; siblings %s%s",
		cores.Count(), physical, threads, strings.Join(names, " "), more)
}

func gib(bytes uint64) string {
	return strconv.FormatFloat(float64(bytes)/(1<<30), 'f', 1, 64) + " GiB"
}

// commentSafe keeps a comment on its line: a GPU name is the driver's
// text, and a newline in it would end the comment and start TOML.
func commentSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// tomlString quotes s as a TOML basic string. Host names and idsets are
// printable ASCII, but a host name may hold '"' or '\'.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// onlineCPUs reads the online CPU list, falling back to the cpuN
// directories (some containers hide the online file).
func onlineCPUs(fsys fs.FS) (idset.Set, error) {
	b, err := readSmall(fsys, cpuOnlineFile)
	switch {
	case err == nil:
		s, err := idset.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			return idset.Set{}, fmt.Errorf("/%s: %w", cpuOnlineFile, err)
		}
		return s, nil
	case !errors.Is(err, fs.ErrNotExist):
		return idset.Set{}, err
	}
	entries, err := fs.ReadDir(fsys, cpuDir)
	if err != nil {
		return idset.Set{}, fmt.Errorf("no cpu information: %w", err)
	}
	var ids []uint
	for _, e := range entries {
		id, ok := numberAfter(e.Name(), "cpu")
		if !ok {
			continue
		}
		// cpuN/online is "0" for an offline CPU and absent for cpu0 on
		// kernels where it cannot be taken offline.
		if b, err := readSmall(fsys, cpuDir+"/"+e.Name()+"/online"); err == nil && strings.TrimSpace(string(b)) == "0" {
			continue
		}
		ids = append(ids, id)
	}
	return idset.Of(ids...), nil
}

// smtSiblings groups the online CPUs that share a physical core, from
// cpuN/topology/thread_siblings_list: one small read per CPU.
func smtSiblings(fsys fs.FS, cores idset.Set) []idset.Set {
	var groups []idset.Set
	for c := range cores.All() {
		b, err := readSmall(fsys, fmt.Sprintf("%s/cpu%d/topology/thread_siblings_list", cpuDir, c))
		if err != nil {
			continue
		}
		s, err := idset.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			continue
		}
		s = s.Intersection(cores)
		// Every sibling names the same group: keep it once, from its
		// lowest CPU.
		if first, ok := s.First(); ok && first == c && s.Count() > 1 {
			groups = append(groups, s)
		}
	}
	return groups
}

// numaNodes reads the NUMA domains: nodeN/cpulist (limited to the online
// cores) and nodeN/meminfo's MemTotal. A machine or container without
// sys/devices/system/node has none; a node whose files are unreadable is
// an error, for a note, and the others are still returned.
func numaNodes(fsys fs.FS, cores idset.Set) ([]NUMANode, error) {
	entries, err := fs.ReadDir(fsys, nodeDir)
	if err != nil {
		return nil, nil
	}
	var nodes []NUMANode
	var errs []error
	for _, e := range entries {
		id, ok := numberAfter(e.Name(), "node")
		if !ok {
			continue
		}
		dir := nodeDir + "/" + e.Name()
		b, err := readSmall(fsys, dir+"/cpulist")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cpus, err := idset.Parse(strings.TrimSpace(string(b)))
		if err != nil {
			errs = append(errs, fmt.Errorf("/%s/cpulist: %w", dir, err))
			continue
		}
		n := NUMANode{ID: id, Cores: cpus.Intersection(cores)}
		if b, err := readSmall(fsys, dir+"/meminfo"); err == nil {
			n.MemoryBytes = memTotal(string(b))
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b NUMANode) int { return cmp.Compare(a.ID, b.ID) })
	return nodes, errors.Join(errs...)
}

// memTotal finds "Node 0 MemTotal:  5859532 kB" in a node's meminfo and
// returns it in bytes, 0 when absent.
func memTotal(meminfo string) uint64 {
	for line := range strings.Lines(meminfo) {
		f := strings.Fields(line)
		if len(f) == 5 && f[2] == "MemTotal:" && f[4] == "kB" {
			if kb, err := strconv.ParseUint(f[3], 10, 64); err == nil && kb <= 1<<53 {
				return kb << 10
			}
		}
	}
	return 0
}

// nvidiaGPUs finds the NVIDIA GPUs from the first source that has any.
// The error is a note: nvml failed where it is installed.
func nvidiaGPUs(fsys fs.FS, nvml GPULister) ([]GPU, error) {
	var note error
	if nvml != nil {
		devs, err := nvml.NVIDIAGPUs()
		switch {
		case err == nil:
			return fromNVML(fsys, devs), nil
		case !errors.Is(err, ErrNoGPULibrary):
			note = fmt.Errorf("%w; GPUs read from sysfs instead", err)
		}
	}
	if gpus := pciGPUs(fsys); len(gpus) > 0 {
		return gpus, note
	}
	if gpus := procGPUs(fsys); len(gpus) > 0 {
		return gpus, note
	}
	return devGPUs(fsys), note
}

func fromNVML(fsys fs.FS, devs []NVMLGPU) []GPU {
	var gpus []GPU
	for i, d := range devs {
		g := GPU{ID: uint(i), Name: d.Name, UUID: d.UUID, MemoryBytes: d.MemoryBytes, Source: SourceNVML}
		if addr, ok := pciAddress(d.BusID); ok {
			g.PCI = addr
			g.NUMA = pciNUMANode(fsys, addr)
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// pciGPUs lists the PCI devices that are NVIDIA GPUs, in address order.
func pciGPUs(fsys fs.FS) []GPU {
	entries, err := fs.ReadDir(fsys, pciDir)
	if err != nil {
		return nil
	}
	var addrs []string
	for _, e := range entries {
		addr, ok := pciAddress(e.Name())
		if !ok || addr != e.Name() {
			continue
		}
		dir := pciDir + "/" + addr
		if readTrim(fsys, dir+"/vendor") != nvidiaVendor {
			continue
		}
		if class := readTrim(fsys, dir+"/class"); !strings.HasPrefix(class, pciClassVGA) && !strings.HasPrefix(class, pciClass3D) {
			continue
		}
		// No driver link: the nvidia module is not loaded (yet), and the
		// GPU is still this machine's. Another driver: not for CUDA.
		if target, err := fs.ReadLink(fsys, dir+"/driver"); err == nil && path.Base(target) != nvidiaDriver {
			continue
		}
		addrs = append(addrs, addr)
	}
	return gpusAt(fsys, addrs, SourcePCI)
}

// procGPUs lists the GPUs the NVIDIA driver shows in /proc, whose entries
// are named by PCI address.
func procGPUs(fsys fs.FS) []GPU {
	entries, err := fs.ReadDir(fsys, nvidiaProcDir)
	if err != nil {
		return nil
	}
	addrs := make([]string, 0, len(entries))
	for _, e := range entries {
		addrs = append(addrs, e.Name())
	}
	return gpusAt(fsys, addrs, SourceProc)
}

// gpusAt numbers GPUs in PCI address order; an address sysfs does not
// know is kept, without a NUMA domain.
func gpusAt(fsys fs.FS, addrs []string, source string) []GPU {
	slices.SortFunc(addrs, comparePCI)
	var gpus []GPU
	for i, a := range addrs {
		g := GPU{ID: uint(i), Source: source}
		if addr, ok := pciAddress(a); ok {
			g.PCI = addr
			g.NUMA = pciNUMANode(fsys, addr)
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// devGPUs takes the GPUs from the numbers of dev/nvidiaN, for containers
// given the device files but not the driver's /proc.
func devGPUs(fsys fs.FS) []GPU {
	entries, err := fs.ReadDir(fsys, devDir)
	if err != nil {
		return nil
	}
	var ids []uint
	for _, e := range entries {
		// nvidiactl, nvidia-uvm and friends are not GPUs: only nvidiaN is.
		if id, ok := numberAfter(e.Name(), nvidiaDevPrefix); ok {
			ids = append(ids, id)
		}
	}
	// The ids stay as the device files have them: a container given
	// nvidia2 and nvidia5 must bind those.
	set := idset.Of(ids...)
	var gpus []GPU
	for id := range set.All() {
		gpus = append(gpus, GPU{ID: id, Source: SourceDev})
	}
	return gpus
}

// pciAddress parses a PCI address ("0000:3b:00.0", or NVML's
// "00000000:3B:00.0") into sysfs form.
func pciAddress(s string) (string, bool) {
	var dom, bus, dev, fn uint32
	n, err := fmt.Sscanf(s, pciAddrPattern, &dom, &bus, &dev, &fn)
	if err != nil || n != 4 || bus > 0xff || dev > 0x1f || fn > 7 {
		return "", false
	}
	addr := fmt.Sprintf("%04x:%02x:%02x.%x", dom, bus, dev, fn)
	if !strings.EqualFold(strings.TrimLeft(addr, "0"), strings.TrimLeft(s, "0")) {
		return "", false // trailing text, or a short field
	}
	return addr, true
}

// comparePCI orders PCI addresses numerically: domains may be wider than
// four digits (VMD puts devices in 10000:…), so text order is not enough.
func comparePCI(a, b string) int {
	key := func(s string) [4]uint32 {
		var k [4]uint32
		fmt.Sscanf(s, pciAddrPattern, &k[0], &k[1], &k[2], &k[3])
		return k
	}
	ka, kb := key(a), key(b)
	return cmp.Or(slices.Compare(ka[:], kb[:]), strings.Compare(a, b))
}

// pciNUMANode reads a PCI device's NUMA domain; nil when sysfs says -1
// (one-domain machines, many virtual machines) or nothing.
func pciNUMANode(fsys fs.FS, addr string) *uint {
	s := readTrim(fsys, pciDir+"/"+addr+"/numa_node")
	if s == "" || s == pciNoNUMANode {
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return nil
	}
	u := uint(n)
	return &u
}

// readTrim reads a one-value sysfs file, "" when it cannot.
func readTrim(fsys fs.FS, name string) string {
	b, err := readSmall(fsys, name)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

// numberAfter parses name as prefix followed by a decimal id.
func numberAfter(name, prefix string) (uint, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 32)
	if err != nil || uint(n) > idset.MaxID {
		return 0, false
	}
	return uint(n), true
}

// readSmall reads a file of at most maxSysfsFile bytes.
func readSmall(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSysfsFile {
		return nil, fmt.Errorf("/%s: larger than %d bytes", name, maxSysfsFile)
	}
	return b, nil
}
