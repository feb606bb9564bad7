package jobspec

import "slices"

// DefaultMemPerSlot gives every slot n bytes of memory when the jobspec
// asks for none: a queue's jobspec.defaults.system.memory, applied where
// the queue's other defaults are. The vertex is the one --mem writes, so
// the scheduler, the limits and fluxq info see a default exactly as they
// see memory the user asked for. A slot that already asks memory, n == 0,
// or a graph without a slot (refused by Validate) is left alone; changed
// reports that the vertex was added. A default that, times the slots,
// would pass MaxMemory is an error, as such a request is.
func (j *Jobspec) DefaultMemPerSlot(n uint64) (changed bool, err error) {
	if n == 0 {
		return false, nil
	}
	_, slot := j.levels()
	if slot.Type != "slot" {
		return false, nil
	}
	for i := range slot.With {
		if slot.With[i].Type == MemoryType {
			return false, nil
		}
	}
	if ns := j.Counts().NSlots; ns > 0 && uint64(ns) > MaxMemory/n {
		return false, errorf("resources", "total memory must be at most 1E")
	}
	m, err := memoryVertex(n)
	if err != nil {
		return false, errorf("", "%v", err)
	}
	// Clipped: a parsed jobspec's slices may share arrays with another's.
	slot.With = append(slices.Clip(slot.With), m)
	return true, nil
}
