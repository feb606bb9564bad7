package jobspec

// Counts summarises what a jobspec asks for, as flux-core's job-list and
// schedulers derive it (libjj): counts are job-wide totals.
type Counts struct {
	// NNodes is the node count, 0 when the jobspec has no node level (the
	// scheduler then picks the nodes).
	NNodes int
	// NSlots is the total number of task slots (slots per node × nodes).
	NSlots int
	// NCores and NGPUs are totals over all slots.
	NCores, NGPUs int
	// NTasks is the total task count: total, or per_slot × NSlots.
	NTasks int
	// CoresPerSlot and GPUsPerSlot describe one slot.
	CoresPerSlot, GPUsPerSlot int
	// MemPerSlot is the memory one slot asks for, in bytes: the slot's
	// memory vertex (MemoryType), 0 when it has none.
	MemPerSlot uint64
	// Exclusive is true when the node level asks for whole nodes.
	Exclusive bool
	// Duration is attributes.system.duration in seconds (0: unlimited).
	Duration float64
}

// levels returns the node vertex (nil without one) and the slot vertex of
// a V1 resource graph; for a malformed graph the slot is an empty vertex,
// so callers never dereference nil.
func (j *Jobspec) levels() (node, slot *Resource) {
	slot = &Resource{}
	if len(j.Resources) == 0 {
		return nil, slot
	}
	r := &j.Resources[0]
	if r.Type == "node" {
		node = r
		if len(r.With) == 0 {
			return node, slot
		}
		r = &r.With[0]
	}
	if r.Type == "slot" {
		slot = r
	}
	return node, slot
}

// Counts derives the job-wide counts. It is meaningful only for a jobspec
// that passed Validate; for others it returns what it can without failing.
func (j *Jobspec) Counts() Counts {
	var c Counts
	node, slot := j.levels()
	c.NSlots = slot.Count
	if node != nil {
		c.NNodes = node.Count
		c.Exclusive = node.IsExclusive()
		c.NSlots *= node.Count
	}
	for _, r := range slot.With {
		switch r.Type {
		case "core":
			c.CoresPerSlot = r.Count
		case "gpu":
			c.GPUsPerSlot = r.Count
		case MemoryType:
			c.MemPerSlot, _ = memoryBytes(&r)
		}
	}
	c.NCores = c.NSlots * c.CoresPerSlot
	c.NGPUs = c.NSlots * c.GPUsPerSlot
	if len(j.Tasks) > 0 {
		if t := j.Tasks[0].Count; t.Total > 0 {
			c.NTasks = t.Total
		} else {
			c.NTasks = t.PerSlot * c.NSlots
		}
	}
	c.Duration = j.Attributes.System.Duration
	return c
}
