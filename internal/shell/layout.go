package shell

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// MaxTasks bounds the tasks of one job. flux-shell has no such limit, but
// one box cannot run more processes than this usefully, and laying out a
// count of 2^31 tasks would take minutes before failing to fork them.
const MaxTasks = 1 << 16

// RankTasks is the part of a job that one rank of R runs.
type RankTasks struct {
	// NodeID is the rank's index in R (flux-shell's shell rank).
	NodeID   int
	Rank     uint
	Hostname string
	Cores    idset.Set
	GPUs     idset.Set
	// NTasks is the number of tasks on this rank; Basis is the global
	// rank of the first of them (tasks are numbered rank by rank).
	NTasks int
	Basis  int
}

// Layout lays the job's tasks out over R as flux-shell does: with the
// shell option per-resource {type: node|core, count} that many tasks per
// node or per core; otherwise the jobspec's task count (total, or per_slot
// times the slots), placed by flux-shell's rcalc heuristic.
func Layout(js *jobspec.Jobspec, r *rset.R) ([]RankTasks, error) {
	nodes := r.Nodes()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("R holds no resources")
	}
	ncores := make([]int, len(nodes))
	for i, n := range nodes {
		ncores[i] = n.Cores.Count()
	}
	var per []int
	var err error
	if typ, count, ok, perr := perResource(js); perr != nil {
		return nil, perr
	} else if ok {
		per, err = distributePerResource(ncores, typ, count)
		if err != nil {
			return nil, fmt.Errorf("error distributing %d tasks per-%s over R: %w", count, typ, err)
		}
	} else {
		c := js.Counts()
		per, err = distribute(ncores, c.NTasks, c.CoresPerSlot)
		if err != nil {
			return nil, fmt.Errorf("error distributing %d tasks over R: %w", c.NTasks, err)
		}
	}
	out := make([]RankTasks, len(nodes))
	basis := 0
	for i, n := range nodes {
		out[i] = RankTasks{NodeID: i, Rank: n.Rank, Hostname: n.Hostname, Cores: n.Cores, GPUs: n.GPUs, NTasks: per[i], Basis: basis}
		basis += per[i]
	}
	return out, nil
}

// perResource reads the per-resource shell option (flux submit
// --tasks-per-node and --tasks-per-core set it).
func perResource(js *jobspec.Jobspec) (typ string, count int, ok bool, err error) {
	v, present := js.Attributes.System.Shell.Options["per-resource"]
	if !present {
		return "", 0, false, nil
	}
	m, isMap := v.(map[string]any)
	typ, isStr := m["type"].(string)
	if !isMap || !isStr {
		return "", 0, false, fmt.Errorf("invalid per-resource spec: want {type, count}")
	}
	count = 1
	if c, has := m["count"]; has {
		n, isInt := intOption(c)
		if !isInt {
			return "", 0, false, fmt.Errorf("invalid per-resource spec: count must be an integer")
		}
		count = n
	}
	return typ, count, true, nil
}

// intOption reads an integer from a decoded jobspec value.
func intOption(v any) (int, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.Atoi(string(n))
		return i, err == nil
	case int:
		return n, true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

// distribute returns the number of tasks on each rank, given each rank's
// core count, as flux-shell's rcalc_distribute does: ranks are taken
// largest first, each takes a task of coresPerTask cores in turn while it
// has room, and when every rank is full they are refilled
// (oversubscription). coresPerTask <= 0 means total cores / ntasks.
func distribute(ncores []int, ntasks, coresPerTask int) ([]int, error) {
	total := 0
	for _, n := range ncores {
		total += n
	}
	switch {
	case len(ncores) == 0:
		return nil, fmt.Errorf("no ranks")
	case ntasks < 1:
		return nil, fmt.Errorf("task count %d is not positive", ntasks)
	case ntasks > MaxTasks:
		return nil, fmt.Errorf("more than %d tasks", MaxTasks)
	}
	if coresPerTask <= 0 {
		if coresPerTask = total / ntasks; coresPerTask == 0 {
			return nil, fmt.Errorf("more tasks than cores")
		}
	}
	avail := append([]int(nil), ncores...)
	ntasksOn := make([]int, len(ncores))
	queue := largestFirst(avail)
	// A task must fit on the smallest rank.
	if smallest := avail[queue[len(queue)-1]]; smallest < coresPerTask {
		coresPerTask = smallest
	}
	for assigned := 0; assigned < ntasks; {
		if len(queue) == 0 {
			copy(avail, ncores)
			queue = largestFirst(avail)
			continue
		}
		i := queue[0]
		queue = queue[1:]
		if avail[i] >= coresPerTask {
			ntasksOn[i]++
			avail[i] -= coresPerTask
			queue = append(queue, i)
			assigned++
		}
	}
	return ntasksOn, nil
}

// largestFirst orders rank indexes by available cores, largest first, with
// the comb sort flux-core's zlist_sort uses: it is not stable, and ranks of
// equal size land where flux-shell puts them only if sorted the same way.
func largestFirst(avail []int) []int {
	idx := make([]int, len(avail))
	for i := range idx {
		idx[i] = i
	}
	gap, swapped := len(idx), false
	for gap > 1 || swapped {
		if gap > 1 {
			gap = int(float64(gap) / 1.3)
		}
		swapped = false
		for i := 0; i+gap < len(idx); i++ {
			if avail[idx[i]] < avail[idx[i+gap]] {
				idx[i], idx[i+gap] = idx[i+gap], idx[i]
				swapped = true
			}
		}
	}
	return idx
}

// distributePerResource gives every rank count tasks ("node") or count
// tasks per core ("core"), as rcalc_distribute_per_resource does.
func distributePerResource(ncores []int, typ string, count int) ([]int, error) {
	switch {
	case count < 1:
		return nil, fmt.Errorf("count %d is not positive", count)
	case count > MaxTasks:
		return nil, fmt.Errorf("more than %d tasks", MaxTasks)
	}
	out := make([]int, len(ncores))
	total := 0
	for i, n := range ncores {
		switch typ {
		case "node":
			out[i] = count
		case "core":
			out[i] = n * count
		default:
			return nil, fmt.Errorf("unknown resource type %q", typ)
		}
		if total += out[i]; total > MaxTasks {
			return nil, fmt.Errorf("more than %d tasks", MaxTasks)
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("no tasks")
	}
	return out, nil
}
