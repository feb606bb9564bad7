package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// Why a job in SCHED waits, beyond what the scheduler's reason_pending can
// say (issue 16): the scheduler never hears of a stopped queue's jobs, and
// its "insufficient resources" does not tell busy nodes from drained ones,
// nor know why a node was drained. A listing works it out from the store
// in the same read, so the scheduler and the job manager are not involved.

// reasonInsufficient is sched.ReasonInsufficient, the reason a drained
// node may be behind.
const reasonInsufficient = "insufficient resources"

// maxDrainGroups bounds how many drain reasons one job's line names.
const maxDrainGroups = 3

// ExplainPending sets Waits of each job in SCHED that waits on a stopped
// queue, or on drained nodes it alone could run on. What cannot be read
// leaves Waits empty: an explanation never fails a listing.
func ExplainPending(tx *store.Tx, jobs []api.JobSummary) {
	var x *explainer
	for i := range jobs {
		s := &jobs[i]
		if s.State != job.Sched {
			continue
		}
		if x == nil {
			x = newExplainer(tx)
		}
		if w := x.queueStopped(s.Queue); w != "" {
			s.Waits = w
			continue
		}
		if x.mayBeDrained(s) {
			s.Waits = x.drainedFor(tx, s)
		}
	}
	// The shapes have served: the answer does not carry them.
	for i := range jobs {
		jobs[i].Shape = ""
	}
}

// explainer holds what the explanations read, each part read once per
// listing, when first needed.
type explainer struct {
	set    *queue.Set // nil: the queues could not be read
	states map[string]queue.State
	drains *drains
	read   bool // drains was read (nil: nothing is drained)
}

func newExplainer(tx *store.Tx) *explainer {
	x := &explainer{}
	if set, err := QueueSet(tx); err == nil {
		if states, err := QueueStates(tx, set); err == nil {
			x.set, x.states = set, states
		}
	}
	return x
}

// queueStopped says that the job's queue, or a queue above it, is stopped,
// with the reason given to fluxq queue stop -m: "queue batch is stopped:
// admin hold", "parent queue batch is stopped", "scheduling is stopped"
// for the anonymous queue.
func (x *explainer) queueStopped(name string) string {
	if x.set == nil {
		return ""
	}
	q, ok := x.set.Queue(name)
	if !ok {
		return ""
	}
	subject := "queue " + name
	if name == "" {
		subject = "scheduling"
	}
	// A configuration has no cycles; the bound only guards a broken store.
	for depth := 0; q != nil && depth <= len(x.set.Names()); depth++ {
		if st := x.set.StateOf(x.states, q.Name); !st.Started {
			w := subject + " is stopped"
			if st.StopReason != "" {
				w += ": " + st.StopReason
			}
			return w
		}
		if q.Parent == "" {
			break
		}
		subject = "parent queue " + q.Parent
		q, _ = x.set.Queue(q.Parent)
	}
	return ""
}

// mayBeDrained: the scheduler says only that resources are short (or has
// not looked yet), and has no planned start for the job.
func (x *explainer) mayBeDrained(s *api.JobSummary) bool {
	sched, _ := s.Annotations["sched"].(map[string]any)
	if _, ok := sched["t_estimate"]; ok && sched["t_estimate"] != nil {
		return false
	}
	r, ok := sched["reason_pending"].(string)
	return !ok || r == reasonInsufficient
}

// drains is the drained nodes, and the instance with and without them, its
// sessions applied as the scheduler applies them.
type drains struct {
	r       *rset.R // the inventory and the spare nodes
	records map[uint]DrainRecord
	ranks   idset.Set
	all, up *resource.Pool
	judged  map[string]string
	byShape map[string]string // answers by the summaries' Shape
	// The last jobspec judged (a copy) and its answer.
	lastRaw   []byte
	lastWaits string
}

func readDrains(tx *store.Tx) (*drains, error) {
	d := &drains{records: map[uint]DrainRecord{}, judged: map[string]string{}, byShape: map[string]string{}}
	var ranks []uint
	err := tx.ForEachDrain(func(rank uint64, raw []byte) error {
		var rec DrainRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("drain record of rank %d: %w", rank, err)
		}
		d.records[uint(rank)] = rec
		ranks = append(ranks, uint(rank))
		return nil
	})
	if err != nil || len(ranks) == 0 {
		return nil, err
	}
	d.ranks = idset.Of(ranks...)
	inv, err := Inventory(tx)
	if err != nil {
		return nil, err
	}
	if d.r, err = Schedulable(tx, inv); err != nil {
		return nil, err
	}
	res, err := ReservationsOrEmpty(tx)
	if err != nil {
		return nil, err
	}
	held, out := res.Sessions()
	reserved := make(map[string]idset.Set, len(held))
	for id, rs := range held {
		reserved[id] = idset.Of(rs...)
	}
	outside := idset.Of(out...)
	d.all = resource.NewPool(d.r)
	d.all.SetSessions(reserved, outside)
	d.up = resource.NewPool(d.r.SelectRanks(d.r.Ranks().Difference(d.ranks)))
	d.up.SetSessions(reserved, outside)
	return d, nil
}

// drainedFor says which drained nodes the job waits for: those it may use,
// when what it may use without them could never hold it. "" when drained
// nodes are not what it waits for.
//
// Jobs of one shape (their summary's Shape: --cc copies, a sweep) are
// judged once, from the first one's jobspec: a listing of 100,000 pending
// jobs read and decoded 100,000 jobspecs (their environments) for one
// answer, half of fluxsched's CPU for the listing.
func (x *explainer) drainedFor(tx *store.Tx, s *api.JobSummary) string {
	if !x.read {
		x.read = true
		x.drains, _ = readDrains(tx)
	}
	d := x.drains
	if d == nil {
		return ""
	}
	if w, ok := d.byShape[s.Shape]; ok && s.Shape != "" {
		return w
	}
	w := ""
	if tx.InJobValue(uint64(s.ID), store.JobJobspec, func(raw []byte) { w = d.judge(raw) }) != nil {
		return ""
	}
	if s.Shape != "" {
		d.byShape[s.Shape] = w
	}
	return w
}

// judge is drainedFor's answer for a jobspec, read in place. A job whose
// summary has no shape (stored before summaries had one) is judged by
// its jobspec: one equal to the last one judged, byte for byte, has its
// answer without a decode.
func (d *drains) judge(raw []byte) string {
	if d.lastRaw != nil && bytes.Equal(raw, d.lastRaw) {
		return d.lastWaits
	}
	w := d.judgeShape(raw)
	d.lastRaw, d.lastWaits = append(d.lastRaw[:0], raw...), w
	return w
}

// judgeShape judges a jobspec by what of it decides where the job may
// run: jobs of one shape (a sweep, whose commands differ) are judged
// once; the key is read without the environment and command, which a
// whole parse would cost for every job of a long listing.
func (d *drains) judgeShape(raw []byte) string {
	var shape jobShape
	if gojson.Unmarshal(raw, &shape) != nil {
		return ""
	}
	key := string(shape.Resources) + "\x00" + string(shape.Attributes.System.Constraints) + "\x00" + string(shape.Attributes.System.Targets)
	for _, t := range shape.Tasks {
		key += "\x00" + t.Slot + string(t.Count)
	}
	if w, ok := d.judged[key]; ok {
		return w
	}
	w := ""
	if js, err := jobspec.Parse(raw); err == nil {
		if req, err := resource.RequestFromJobspec(js); err == nil && d.all.FitsTargets(req) == nil && d.up.FitsTargets(req) != nil {
			w = d.describe(idset.Of(d.all.Usable(req)...).Intersection(d.ranks))
		}
	}
	d.judged[key] = w
	return w
}

// jobShape is what of a jobspec decides where the job may run.
type jobShape struct {
	Resources gojson.RawMessage `json:"resources"`
	Tasks     []struct {
		Slot  string            `json:"slot"`
		Count gojson.RawMessage `json:"count"`
	} `json:"tasks"`
	Attributes struct {
		System struct {
			Constraints gojson.RawMessage `json:"constraints"`
			Targets     gojson.RawMessage `json:"targets"`
		} `json:"system"`
	} `json:"attributes"`
}

// describe words drained ranks with their reasons, one hostlist per
// reason in rank order: "waiting for drained nodes: n1 (fan), n[2-3]".
func (d *drains) describe(ranks idset.Set) string {
	if ranks.IsEmpty() {
		return ""
	}
	var reasons []string
	byReason := map[string][]uint{}
	for r := range ranks.All() {
		why := d.records[r].Reason
		if _, ok := byReason[why]; !ok {
			reasons = append(reasons, why)
		}
		byReason[why] = append(byReason[why], r)
	}
	var parts []string
	for i, why := range reasons {
		if i == maxDrainGroups {
			parts = append(parts, fmt.Sprintf("and %d more", len(reasons)-i))
			break
		}
		p := d.r.SelectRanks(idset.Of(byReason[why]...)).Nodelist().String()
		if why != "" {
			p += " (" + why + ")"
		}
		parts = append(parts, p)
	}
	return "waiting for drained nodes: " + strings.Join(parts, ", ")
}
