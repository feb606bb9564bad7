package state

import (
	"path"
	"strconv"
	"sync"
	"unique"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// Spec is what a job's record keeps of its jobspec once the jobspec is
// parsed: what a listing shows and what the job manager asks of an active
// job (its queue, its targets), and nothing else. The jobspec itself (the
// submitter's environment, most of its bytes) stays in the store, where
// whoever needs it whole reads it (Record.Raw, the job manager's alloc and
// start requests): an active job held in memory as a parsed jobspec and its
// canonical bytes cost fluxsched about 7 KB, so 100,000 pending jobs held
// more than a gigabyte (bench/rss_pending.sh).
type Spec struct {
	Name  string // attributes.system.job.name, else the command's base name
	Queue string // attributes.system.queue as admitted ("" is the anonymous queue)
	// Targets are the sessions the job may map onto; nil for the default
	// session, and for targets that do not parse (a stored jobspec was
	// admitted, so only a damaged one has such).
	Targets  []string
	Command  []string // the first task's command line
	Cwd      string
	Duration float64 // attributes.system.duration, seconds (0: unlimited)
	Retries  int     // attributes.system.retry: runs again after a FAILED end

	NTasks, NNodes, NCores, NGPUs int

	// Shape is what of the jobspec decides where the job may run, written
	// out (resource.RequestFromJobspec's inputs: the counts, memory,
	// exclusivity, duration, constraints and targets). Jobs of one shape
	// wait for the same drained nodes: a listing judges a shape once
	// (ExplainPending) without reading the jobspecs of the others.
	Shape string
}

// SpecOf is what a record keeps of js; the zero Spec for nil.
//
// Every string is copied out of js, and interned: the parser's strings
// share the memory of the whole jobspec they were read from, so keeping
// one (the cwd) would keep the jobspec's bytes too; and the jobs of one
// submission mostly share their cwd, queue, name and command, which are
// then held once.
func SpecOf(js *jobspec.Jobspec) Spec {
	if js == nil {
		return Spec{}
	}
	c := js.Counts()
	s := Spec{
		Queue:    intern(js.Attributes.System.Queue),
		Cwd:      intern(js.Attributes.System.Cwd),
		Duration: c.Duration,
		NTasks:   c.NTasks, NNodes: c.NNodes, NCores: c.NCores, NGPUs: c.NGPUs,
	}
	t, terr := js.Targets()
	if t != nil {
		s.Targets = internAll(t)
	}
	s.Shape = shapeOf(c, js.Attributes.System.Constraints, t, terr)
	s.Retries, _ = js.Retries() // checked at submission
	if len(js.Tasks) > 0 && js.Tasks[0].Command != nil {
		s.Command = internAll(js.Tasks[0].Command)
	}
	// Flux's job name: attributes.system.job.name, else the base name of
	// the command.
	switch {
	case js.Attributes.System.Job.Name != "":
		s.Name = intern(js.Attributes.System.Job.Name)
	case len(s.Command) > 0:
		s.Name = intern(path.Base(s.Command[0]))
	}
	return s
}

// specOfSummary is the Spec a stored summary carries, for a job never
// allocated (Summarize writes an allocated job's counts from its R, not
// its jobspec): every field of Spec is one of the summary's, written
// from the Spec at each save, in the transaction that changes the
// jobspec. ok is false for a summary stored before it carried the
// shape (and with it all of Spec), or of another job: its jobspec is
// parsed instead. A take-up of 100,000 pending jobs spent more than
// half its time parsing jobspecs to make what their summaries, decoded
// anyway, already held. TestSpecOfSummary holds the two to each other.
func specOfSummary(id fluid.ID, s *Summary) (Spec, bool) {
	if s == nil || s.Shape == "" || s.ID != id {
		return Spec{}, false
	}
	sp := Spec{
		Name:     intern(s.Name),
		Queue:    intern(s.Queue),
		Cwd:      intern(s.Cwd),
		Duration: s.Duration,
		Retries:  s.Retries,
		NTasks:   s.NTasks, NNodes: s.NNodes, NCores: s.NCores, NGPUs: s.NGPUs,
		Shape: shapes.of([]byte(s.Shape)),
	}
	if s.Targets != nil {
		sp.Targets = internAll(s.Targets)
	}
	if s.Command != nil {
		sp.Command = internAll(s.Command)
	}
	return sp, true
}

// intern returns a copy of s that shares its bytes with the other strings
// equal to it interned while one of them is still held (unique.Make
// copies the string it first sees).
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// internAll is a new slice of ss, interned.
func internAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = intern(s)
	}
	return out
}

// shapeOf is Spec.Shape: every input of the job's request written out,
// so that two jobs share a shape only when their requests are the same
// ("1 2 1 0 0 0 0" for one core; constraints and targets follow as
// given). Plain appends, no digest: it is made for every job submitted
// or taken up (a simulation makes a million), and is commonly a dozen
// bytes, interned.
func shapeOf(c jobspec.Counts, constraints []byte, targets []string, terr error) string {
	var buf [64]byte
	b := buf[:0]
	for _, n := range []int{c.NNodes, c.NSlots, c.CoresPerSlot, c.GPUsPerSlot} {
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendUint(b, c.MemPerSlot, 10)
	b = append(b, ' ')
	b = strconv.AppendBool(b, c.Exclusive)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, c.Duration, 'g', -1, 64)
	if len(constraints) > 0 {
		b = append(append(b, " c="...), constraints...)
	}
	for _, t := range targets {
		b = append(append(b, " t="...), t...)
	}
	if terr != nil {
		b = append(append(b, " targets: "...), terr.Error()...)
	}
	return shapes.of(b)
}

// shapes interns the shapes shapeOf makes. Not unique.Make: its entries
// live only while a Handle does, and a Spec keeps the string alone, so
// after every collection each shape was made and inserted again (in a
// replay, several allocations a job). A replay has a few hundred shapes;
// past maxShapes new ones are not kept, and each is then its own copy.
// Nor is a shape longer than maxShapeLen (constraints or targets a
// guest wrote): what the table keeps outlives the jobs, and its bound,
// maxShapes × maxShapeLen (8 MiB), must not be a guest's to fill with
// long texts.
var shapes = shapeTable{m: map[string]string{}}

const (
	maxShapes   = 1 << 16
	maxShapeLen = 128
)

type shapeTable struct {
	mu sync.RWMutex
	m  map[string]string
}

// of returns b as a string, the one kept if b is a shape seen before.
func (t *shapeTable) of(b []byte) string {
	if len(b) > maxShapeLen {
		return string(b)
	}
	t.mu.RLock()
	s, ok := t.m[string(b)] // no copy to look up
	t.mu.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	t.mu.Lock()
	if kept, ok := t.m[s]; ok {
		s = kept
	} else if len(t.m) < maxShapes {
		t.m[s] = s
	}
	t.mu.Unlock()
	return s
}
