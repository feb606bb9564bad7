package shell

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/idset"
)

// cpuSetSize is the number of CPUs a unix.CPUSet can name.
const cpuSetSize = len(unix.CPUSet{}) * 64

// flatten turns an environment map into KEY=value strings, sorted so that
// a task's environment does not depend on map order. It is never nil: a
// nil Env would hand the task the shell's own environment.
func flatten(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// idList expands ids, refusing more than limit of them.
func idList(ids idset.Set, limit int) ([]uint, error) {
	n := ids.Count()
	if n > limit {
		return nil, fmt.Errorf("more than %d ids", limit)
	}
	out := make([]uint, 0, n)
	for id := range ids.All() {
		out = append(out, id)
	}
	return out, nil
}

// joinIDs writes ids as a comma-separated list, as flux-shell writes
// CUDA_VISIBLE_DEVICES (no ranges: CUDA does not read them).
func joinIDs(ids []uint) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, ",")
}

// share returns the part of ids that task local of ntasks gets: an equal
// block each, the remainder unused, as flux-shell's gpu-affinity per-task
// gives GPUs. With overlap, tasks that outnumber the ids share them round
// robin (as cpu-affinity per-task must, a task needing at least one CPU).
func share(ids []uint, ntasks, local int, overlap bool) []uint {
	if ntasks <= 0 || local < 0 || local >= ntasks {
		return nil
	}
	per := len(ids) / ntasks
	if per == 0 {
		if overlap && len(ids) > 0 {
			return ids[local%len(ids) : local%len(ids)+1]
		}
		return nil
	}
	return ids[local*per : (local+1)*per]
}

// cpuSet returns the CPUs to bind a task to: its rank's cores (or its share
// of them, perTask), or nil when any of those cores is not a CPU this
// process may use, in which case the task is not bound.
func cpuSet(cores idset.Set, allowed *unix.CPUSet, perTask bool, ntasks, local int) *unix.CPUSet {
	if cores.IsEmpty() {
		return nil
	}
	if last, _ := cores.Last(); last >= uint(cpuSetSize) {
		return nil
	}
	ids, err := idList(cores, cpuSetSize)
	if err != nil {
		return nil
	}
	for _, id := range ids {
		if !allowed.IsSet(int(id)) {
			return nil
		}
	}
	if perTask {
		ids = share(ids, ntasks, local, true)
	}
	var set unix.CPUSet
	for _, id := range ids {
		set.Set(int(id))
	}
	return &set
}
