package state

import (
	"errors"
	"fmt"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// ErrUnsatisfiable is a submission the instance's resources could never
// satisfy, whatever is drained, reserved or running now (`fluxq help
// constraints`): refused then, with why, rather than accepted to fail at
// once and drop out of `fluxq jobs`.
var ErrUnsatisfiable = errors.New("unsatisfiable request")

// feasibility judges submissions against everything the scheduler could
// ever place a job on: the inventory and the spare nodes, read at the
// first request judged (a replay's submissions are not judged, and read
// nothing). Requests of the same shape (the copies of a --cc submission)
// are judged once.
type feasibility struct {
	tx     *store.Tx
	loaded bool
	r      *rset.R // nil: fluxsched never ran, nothing is known yet
	pool   *resource.Pool
	judged map[string]error
}

func newFeasibility(tx *store.Tx) *feasibility {
	return &feasibility{tx: tx, judged: map[string]error{}}
}

// load reads the resources once.
func (f *feasibility) load() error {
	if f.loaded {
		return nil
	}
	f.loaded = true
	if f.tx.Inventory() == nil {
		return nil // the scheduler judges, once it knows
	}
	inv, err := Inventory(f.tx)
	if err != nil {
		return err
	}
	if f.r, err = Schedulable(f.tx, inv); err != nil {
		return err
	}
	f.pool = resource.NewPool(f.r)
	return nil
}

// check refuses js if no use of the resources could ever satisfy it.
func (f *feasibility) check(js *jobspec.Jobspec) error {
	if err := f.load(); err != nil || f.r == nil {
		return err
	}
	req, err := resource.RequestFromJobspec(js)
	if err != nil {
		return nil // malformed for the scheduler: it says so, as before
	}
	key := fmt.Sprintf("%d/%d/%d/%d/%d/%t/%s", req.NNodes, req.NSlots, req.CoresPerSlot, req.GPUsPerSlot, req.MemPerSlot, req.Exclusive, req.Constraint)
	if err, ok := f.judged[key]; ok {
		return err
	}
	err = f.explain(req, f.pool.Feasible(req))
	f.judged[key] = err
	return err
}

// explain turns Feasible's verdict (flux-core's words) into what a person
// needs: what was asked, and what the instance has.
func (f *feasibility) explain(req resource.Request, err error) error {
	if err == nil {
		return nil
	}
	nodes, cores, gpus := f.r.Counts()
	maxCores, maxGPUs := 0, 0
	var maxMem uint64
	for _, n := range f.r.Nodes() {
		maxCores = max(maxCores, n.Cores.Count())
		maxGPUs = max(maxGPUs, n.GPUs.Count())
		maxMem = max(maxMem, n.Memory)
	}
	mem := f.r.Memory()
	// What the job's slots need of memory: all of them, and those one
	// node must hold (its share with a node count, else one).
	perNode := uint64(max(req.PerNode(), 1))
	memAll, memNode := mulSat(uint64(req.NSlots), req.MemPerSlot), mulSat(perNode, req.MemPerSlot)
	has := fmt.Sprintf("the instance has %s, %s and %s", plural(nodes, "node"), plural(cores, "core"), plural(gpus, "GPU"))
	var why string
	switch {
	case errors.Is(err, resource.ErrNoMatch):
		why = fmt.Sprintf("no node satisfies its constraints (%s)", req.Constraint)
	case errors.Is(err, resource.ErrUnsatisfiableConstrained):
		why = fmt.Sprintf("the nodes that satisfy its constraints (%s) are too few or too small for it", req.Constraint)
	case req.NNodes > nodes:
		// Before the cores: -N 5 on one node asks for 5 nodes first of
		// all, whatever the cores it would take on them.
		why = fmt.Sprintf("it needs %s; %s", plural(req.NNodes, "node"), has)
	case req.NSlots*req.CoresPerSlot > cores:
		why = fmt.Sprintf("it needs %s in all; %s", plural(req.NSlots*req.CoresPerSlot, "core"), has)
	case req.NSlots*req.GPUsPerSlot > gpus:
		why = fmt.Sprintf("it needs %s in all; %s", plural(req.NSlots*req.GPUsPerSlot, "GPU"), has)
	case req.MemPerSlot > 0 && mem == 0:
		why = fmt.Sprintf("it asks for %s of memory per task, and no node's memory is known (give it in [[resource.config]] memory)", jobspec.FormatMemory(req.MemPerSlot))
	case memAll > mem:
		why = fmt.Sprintf("it needs %s of memory in all; the instance has %s", jobspec.FormatMemory(memAll), jobspec.FormatMemory(mem))
	case memNode > maxMem:
		why = fmt.Sprintf("%s %s of memory, and no node has more than %s", pluralTasks(perNode), jobspec.FormatMemory(memNode), jobspec.FormatMemory(maxMem))
	case req.CoresPerSlot > maxCores:
		why = fmt.Sprintf("a task needs %s, and no node has more than %d", plural(req.CoresPerSlot, "core"), maxCores)
	case req.GPUsPerSlot > maxGPUs:
		why = fmt.Sprintf("a task needs %s, and no node has more than %d", plural(req.GPUsPerSlot, "GPU"), maxGPUs)
	default:
		why = fmt.Sprintf("%s do not fit on %s; %s", plural(req.NSlots, "task"), plural(max(req.NNodes, 1), "node"), has)
	}
	return fmt.Errorf("%w: %s", ErrUnsatisfiable, why)
}

// mulSat is a x b, saturating: a request's memory can be named far
// beyond what a uint64 holds.
func mulSat(a, b uint64) uint64 {
	if b != 0 && a > ^uint64(0)/b {
		return ^uint64(0)
	}
	return a * b
}

// pluralTasks is the subject of a per-node memory refusal: "a task
// needs", "4 tasks on a node need".
func pluralTasks(n uint64) string {
	if n == 1 {
		return "a task needs"
	}
	return fmt.Sprintf("%d tasks on a node need", n)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
