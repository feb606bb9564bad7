package fluxq

import (
	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// jobMemory is a job's memory as fluxq info shows it side by side: what
// the jobspec asks (its slots' memory vertex, a queue's default included),
// what its R grants (rset.Node.Memory summed over its hosts) and the peak
// its processes used (max_rss: the largest resident set of any one).
type jobMemory struct {
	PerSlot uint64 // bytes per slot, 0 when none is asked
	Asked   uint64 // PerSlot x slots
	Granted uint64 // 0 until allocated, or when R records none
	Peak    int64  // -1 until the job's usage is known
}

// memoryOf reads a job's memory from its stored jobspec, R and usage. A
// jobspec or R that does not parse (a store from another version) counts
// as asking or granting none: info still shows the rest of the job.
func memoryOf(info *api.JobInfo) jobMemory {
	m := jobMemory{Peak: -1}
	if js, err := jobspec.Parse(info.Jobspec); err == nil {
		c := js.Counts()
		m.PerSlot = c.MemPerSlot
		m.Asked = uint64(c.NSlots) * c.MemPerSlot // Validate bounds it by 1E
	}
	if len(info.R) > 0 {
		if r, err := rset.Parse(info.R); err == nil {
			m.Granted = r.Memory()
		}
	}
	if u := info.Summary.Usage; u != nil {
		m.Peak = u.MaxRSS
	}
	return m
}

// shown reports whether the job has memory to show: asked, or granted (a
// grant without an ask is not made today, but R is the record).
func (m jobMemory) shown() bool { return m.Asked > 0 || m.Granted > 0 }

// line is info's memory row: "asked 4G (2G per slot), granted 4G,
// peak 1.2G", a dash for what is not known yet.
func (m jobMemory) line() string {
	asked, perSlot, granted, peak := "-", "-", "-", "-"
	if m.Asked > 0 {
		asked, perSlot = jobspec.FormatMemory(m.Asked), jobspec.FormatMemory(m.PerSlot)
	}
	if m.Granted > 0 {
		granted = jobspec.FormatMemory(m.Granted)
	}
	if m.Peak >= 0 {
		peak = jobspec.FormatMemory(uint64(m.Peak))
	}
	return "asked " + asked + " (" + perSlot + " per slot), granted " + granted + ", peak " + peak
}

// memoryJSON is the memory keys of info --json (and -o), in bytes, among
// the job's other keys; absent for a job that asks none. The peak is
// max_rss, beside them.
type memoryJSON struct {
	Asked   *uint64 `json:"memory_asked,omitempty"`
	PerSlot *uint64 `json:"memory_per_slot,omitempty"`
	Granted *uint64 `json:"memory_granted,omitempty"`
}

func (m jobMemory) json() memoryJSON {
	var j memoryJSON
	if m.Asked > 0 {
		j.Asked, j.PerSlot = &m.Asked, &m.PerSlot
	}
	if m.Granted > 0 {
		j.Granted = &m.Granted
	}
	return j
}
