package resource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/hostlist"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/rset"
)

// Paths Discover reads, relative to the root of the fs.FS it is given.
const (
	cpuDir          = "sys/devices/system/cpu"
	cpuOnlineFile   = cpuDir + "/online"
	nvidiaProcDir   = "proc/driver/nvidia/gpus"
	devDir          = "dev"
	nvidiaDevPrefix = "nvidia"
)

// maxSysfsFile bounds what Discover reads from one sysfs file: the online
// cpu list of the largest machines is a few hundred bytes.
const maxSysfsFile = 64 << 10

// Discover describes this machine as a one-rank inventory: rank 0 named
// hostname, with the online CPUs as cores and the NVIDIA GPUs, if any.
// fsys is the root filesystem (os.DirFS("/") in production).
//
// Cores are the kernel's logical CPU ids, so a job shell binds a task to
// the very ids R names; flux-core's hwloc counts physical cores instead,
// which fluxq has no way to read without hwloc. CPUs come from
// sys/devices/system/cpu/online, or, where that file is missing, from the
// cpuN directories whose cpuN/online does not say 0. GPUs are counted from
// proc/driver/nvidia/gpus (ids 0..n-1, the CUDA numbering) or else taken
// from the numbers of dev/nvidiaN.
func Discover(fsys fs.FS, hostname string) (*rset.R, error) {
	if _, err := hostlist.FromNames(hostname); err != nil || hostname == "" {
		return nil, fmt.Errorf("discover: invalid hostname %q", hostname)
	}
	cores, err := onlineCPUs(fsys)
	if err != nil {
		return nil, fmt.Errorf("discover: %w", err)
	}
	if cores.IsEmpty() {
		return nil, fmt.Errorf("discover: no online cpus found in /%s", cpuDir)
	}
	gpus := nvidiaGPUs(fsys)
	return rset.New([]rset.Node{{Rank: 0, Hostname: hostname, Cores: cores, GPUs: gpus}}), nil
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

// nvidiaGPUs returns the GPU ids the NVIDIA driver shows, empty when
// there is no driver.
func nvidiaGPUs(fsys fs.FS) idset.Set {
	if entries, err := fs.ReadDir(fsys, nvidiaProcDir); err == nil && len(entries) > 0 {
		return idset.FromRange(0, uint(len(entries)-1))
	}
	entries, err := fs.ReadDir(fsys, devDir)
	if err != nil {
		return idset.Set{}
	}
	var ids []uint
	for _, e := range entries {
		// nvidiactl, nvidia-uvm and friends are not GPUs: only nvidiaN is.
		if id, ok := numberAfter(e.Name(), nvidiaDevPrefix); ok {
			ids = append(ids, id)
		}
	}
	return idset.Of(ids...)
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
