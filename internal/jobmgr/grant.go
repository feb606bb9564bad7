package jobmgr

import (
	"fmt"
	"strconv"

	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/schedproto"
)

// A SUCCESS's R is checked here, where the job manager takes it, before
// anything of it is stored: flux-core's job manager trusts the scheduler,
// but a scheduler command (--sched-cmd) is a program of someone else's,
// and one R naming a rank, core or host the instance lacks, or cores
// another job holds, would otherwise run the job there and make fluxq's
// view of its resources (fluxres list, status, allocated) hold what does
// not exist. A SUCCESS that does not fit is refused (RFC 27 has no such
// move; see the "SUCCESS, refused" row of the alloc table): the scheduler
// gets an EINVAL error response on sched.alloc and must treat the
// allocation as not taken, and the job a fatal alloc exception naming
// what was wrong, which the loop logs.
//
// What is checked, against the scheduler's inventory (the instance and
// its spare nodes):
//   - every rank of R is in the inventory, and in the instance (not a
//     spare outside it);
//   - a hostname R names for a rank is the inventory's host for it;
//   - every core, GPU or other child id (memory, when the inventory has
//     some) is on that rank in the inventory;
//   - nothing of it is held by another job whose R has not been sent back
//     with sched.free (once it has, the scheduler may hand it out again
//     before it answers the free);
//   - starttime and expiration are no later than fsd.LatestTime (Parse
//     has refused negative times and an expiration before the start).
//
// Drained ranks are not refused: a drain says no new work should go
// there, which is the scheduler's to honour (it hears of it by
// resource.acquire), and a SUCCESS may cross a drain in flight; Flux's
// job manager does not check it either. The job runs, and fluxres shows
// the rank draining.

// refusalNote starts the note of the alloc exception a refused SUCCESS
// raises; the reason follows.
const refusalNote = "the scheduler's allocation was refused: "

// checkGrant parses a SUCCESS's R for job e (or takes it as it is, from
// a scheduler in process: schedproto.AllocResponse.Granted) and checks
// that it fits; it returns R, or why it does not fit.
func (m *Manager) checkGrant(e *entry, resp schedproto.AllocResponse) (*rset.R, string) {
	r := resp.Granted
	if r == nil {
		if len(resp.R) == 0 {
			return nil, "it carries no R"
		}
		var err error
		if r, err = rset.Parse(resp.R); err != nil {
			return nil, "R: " + err.Error()
		}
	}
	if r.IsEmpty() {
		return nil, "R holds no resources"
	}
	for _, t := range [...]struct {
		key string
		v   float64
	}{{"starttime", r.StartTime()}, {"expiration", r.Expiration()}} {
		// The time is written out only when it is refused: a SUCCESS
		// in bounds costs no formatting.
		if fsd.CheckTime("", t.v) != nil {
			return nil, "R's " + t.key + ": " + fsd.CheckTime(strconv.FormatFloat(t.v, 'f', -1, 64), t.v).Error()
		}
	}
	if l, ok := m.inv.Lacks(r); ok {
		return nil, lackText(l)
	}
	// Without spares every node is in the instance: no rank's host need
	// be looked up for it (a lookup by name for every rank of every grant).
	spares := m.res.HasSpares()
	for rank := range r.Ranks().All() {
		if spares {
			host, _ := m.inv.Hostname(rank)
			if n, ok := m.res.Node(host); ok && host != "" && !n.In {
				return nil, fmt.Sprintf("rank %d (%s) is a spare node outside the instance", rank, host)
			}
		}
		for _, o := range m.heldOn.at(rank) {
			if o == e || o.alloc == allocFreeing || o.alloc == allocStrayFreeing {
				continue
			}
			if shared := o.rec.R.SharedOn(r, rank); shared != "" {
				host, _ := m.inv.Hostname(rank)
				return nil, fmt.Sprintf("%s on rank %s is allocated to job %s", shared, rankName(rank, host), o.id())
			}
		}
	}
	return r, ""
}

// lackText says what a Lack is, in the words of a refusal.
func lackText(l rset.Lack) string {
	switch {
	case l.Missing:
		return fmt.Sprintf("rank %d is not in the instance", l.Rank)
	case l.Memory > 0:
		return fmt.Sprintf("rank %s has %s of memory, not %s", rankName(l.Rank, l.Have), jobspec.FormatMemory(l.HaveMemory), jobspec.FormatMemory(l.Memory))
	case l.Kind == "":
		return fmt.Sprintf("rank %d is host %s, not %s", l.Rank, l.Have, l.Host)
	}
	return fmt.Sprintf("rank %s has no %s %s", rankName(l.Rank, l.Have), l.Kind, l.IDs)
}

func rankName(rank uint, host string) string {
	if host == "" {
		return strconv.FormatUint(uint64(rank), 10)
	}
	return fmt.Sprintf("%d (%s)", rank, host)
}

// hold adds job e to heldOn (on) or takes it out, as its alloc state
// starts or stops holding its R.
func (m *Manager) hold(e *entry, on bool) {
	r := e.rec.R
	if r == nil {
		return
	}
	for rank := range r.Ranks().All() {
		es := m.heldOn.at(rank)
		if on {
			m.heldOn.set(rank, append(es, e))
			continue
		}
		for i, o := range es {
			if o == e {
				es[i] = es[len(es)-1]
				es[len(es)-1] = nil
				es = es[:len(es)-1]
				break
			}
		}
		m.heldOn.set(rank, es)
	}
}

// denseRanks bounds the ranks heldOn keeps in a slice: an instance's
// ranks are 0..n-1, and a rank past this (an R restored from a store
// whose instance was larger, say) goes to the map rather than growing
// the slice to it.
const denseRanks = 1 << 16

// rankJobs lists jobs by rank: a slice indexed by rank, with a map for
// the rare rank past denseRanks. A map alone cost a twentieth of a
// replay (a grant of n ranks is n lookups and n stores, each hashed).
type rankJobs struct {
	dense  [][]*entry
	sparse map[uint][]*entry
}

func (h *rankJobs) at(rank uint) []*entry {
	if rank < uint(len(h.dense)) {
		return h.dense[rank]
	}
	return h.sparse[rank]
}

// set keeps es as rank's list, an empty list as none.
func (h *rankJobs) set(rank uint, es []*entry) {
	switch {
	case rank < uint(len(h.dense)):
		h.dense[rank] = es
	case rank < denseRanks && len(es) > 0:
		h.dense = append(h.dense, make([][]*entry, int(rank)+1-len(h.dense))...)
		h.dense[rank] = es
	case len(es) > 0:
		if h.sparse == nil {
			h.sparse = map[uint][]*entry{}
		}
		h.sparse[rank] = es
	default:
		delete(h.sparse, rank)
	}
}

// all calls f with each rank that lists a job, and its list.
func (h *rankJobs) all(f func(rank uint, es []*entry)) {
	for rank, es := range h.dense {
		if len(es) > 0 {
			f(uint(rank), es)
		}
	}
	for rank, es := range h.sparse {
		f(rank, es)
	}
}

func (h *rankJobs) clear() {
	clear(h.dense)
	clear(h.sparse)
}

// rebuildHeld derives heldOn from the active jobs, when a failed turn has
// put their entries back.
func (m *Manager) rebuildHeld() {
	m.heldOn.clear()
	for _, e := range m.active {
		if e.alloc.holds() {
			m.hold(e, true)
		}
	}
}
