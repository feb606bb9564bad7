package reservation

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/fluid"
)

// The property test drives a State with random sequences of requests, job
// submissions, a toy scheduler, job ends, timer ticks and node changes, and
// checks the specification's conformance summary after every step.
const (
	propSeeds = 150
	propSteps = 300
)

type pjob struct {
	id        fluid.ID
	parent    fluid.ID
	submitter Requester
	sessions  []string // as Target returned them: nil is the default session
	into      []string
	eff       []string // the targets that keep it runnable (decision 8)
	alive     bool
	running   bool
	nodes     []string
}

type world struct {
	t      *testing.T
	seed   uint64
	step   int
	rng    *rand.Rand
	s      *State
	now    float64
	jobs   map[fluid.ID]*pjob
	order  []fluid.ID
	nextID fluid.ID
	onNode map[string]fluid.ID
	spareN int
	// warned is the expiry each reservation was last warned for.
	warned map[string]float64
	// endedJSON holds each ended reservation as it was when it ended.
	endedJSON map[string]string
	stats     map[string]int
}

func (w *world) Alive(id fluid.ID) bool {
	j := w.jobs[id]
	return j != nil && j.alive
}

func (w *world) fail(format string, a ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d step %d: %s", w.seed, w.step, fmt.Sprintf(format, a...))
}

// view is everything observable, for comparing before and after a step.
type view struct {
	nodes map[string]Node
	res   map[string]resPrint
	live  map[string]bool
	last  uint64
}

// resPrint stands for a reservation: its JSON while it lives; once ended,
// the JSON it ended with and the lengths of everything that could grow.
type resPrint struct {
	json                       string
	ended                      float64
	history, owners, kids, nds int
}

func (w *world) view() view {
	v := view{nodes: map[string]Node{}, res: map[string]resPrint{}, live: map[string]bool{}, last: w.s.Last()}
	for _, n := range w.s.Nodes() {
		v.nodes[n.Name] = n
	}
	for _, r := range w.s.All(true) {
		v.live[r.ID] = r.Live()
		p := resPrint{json: w.endedJSON[r.ID], ended: r.Ended, history: len(r.History), owners: len(r.Owners), kids: len(r.Children), nds: len(r.Nodes)}
		if r.Live() || p.json == "" {
			// History only grows: its length and last event stand for it.
			c := *r
			if n := len(r.History); n > 0 {
				c.History = r.History[n-1:]
			}
			b, err := json.Marshal(&c)
			if err != nil {
				w.fail("marshal %s: %v", r.ID, err)
			}
			p.json = string(b)
			if !r.Live() {
				w.endedJSON[r.ID] = p.json
			}
		}
		v.res[r.ID] = p
	}
	return v
}

func (a view) equal(b view) bool {
	return a.last == b.last && maps.Equal(a.nodes, b.nodes) && maps.Equal(a.res, b.res)
}

func (w *world) idle(rank uint) bool {
	for name, id := range w.onNode {
		if n, _ := w.s.Node(name); n.Rank == rank && w.jobs[id].running {
			return false
		}
	}
	return true
}

func (w *world) pickJob(pred func(*pjob) bool) *pjob {
	var c []*pjob
	for _, id := range w.order {
		if j := w.jobs[id]; pred(j) {
			c = append(c, j)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[w.rng.IntN(len(c))]
}

func (w *world) randomRequester(allowApp bool) Requester {
	switch w.rng.IntN(5) {
	case 0:
		return alice
	case 1:
		return bob
	case 2:
		return scheduler
	}
	if allowApp {
		if j := w.pickJob(func(j *pjob) bool { return j.running }); j != nil {
			return app(j.id)
		}
	}
	return alice
}

// randomAllocID names a reservation, live or ended, or one never issued.
func (w *world) randomAllocID() string {
	all := w.s.All(true)
	if len(all) == 0 || w.rng.IntN(10) == 0 {
		return fmt.Sprintf("r%d", w.s.Last()+1+uint64(w.rng.IntN(3)))
	}
	if live := w.s.All(false); len(live) > 0 && w.rng.IntN(4) > 0 {
		return live[w.rng.IntN(len(live))].ID
	}
	return all[w.rng.IntN(len(all))].ID
}

func (w *world) descendants(of fluid.ID) []fluid.ID {
	var out []fluid.ID
	for _, id := range w.order {
		j := w.jobs[id]
		for p := j.parent; p != 0; p = w.jobs[p].parent {
			if p == of {
				if j.alive {
					out = append(out, id)
				}
				break
			}
		}
	}
	return out
}

// stepResult is what a step did, for the invariants to judge.
type stepResult struct {
	kind     string
	err      error
	changes  []Change
	removed  bool // a RemoveNodes step
	teardown bool
}

func TestProperty(t *testing.T) {
	start := time.Now()
	const groups = 4
	var parts [groups]map[string]int
	t.Run("seeds", func(t *testing.T) {
		for g := range groups {
			parts[g] = map[string]int{}
			t.Run(fmt.Sprint(g), func(t *testing.T) {
				t.Parallel()
				for seed := uint64(1 + g); seed <= propSeeds; seed += groups {
					runWorld(t, seed, parts[g])
				}
			})
		}
	})
	stats := map[string]int{}
	for _, p := range parts {
		for k, n := range p {
			stats[k] += n
		}
	}
	t.Logf("%d seeds x %d steps in %v", propSeeds, propSteps, time.Since(start))
	keys := slices.Sorted(maps.Keys(stats))
	for _, k := range keys {
		t.Logf("%-28s %d", k, stats[k])
	}
	// The walk must reach what it is meant to check.
	for _, k := range []string{"ok create", "ok extend", "ok release", "ok submit", "placed", "ended owner-exit", "ended drained", "ended expired", "ended released", "ended reclaimed", "ended teardown", "departed", "warning", "err create 23", "err create 29", "err create 47", "err extend 23", "err extend 27", "err extend 46", "err submit 23", "err submit 46", "err remove", "ok remove", "placed reserved"} {
		if stats[k] == 0 {
			t.Errorf("the random walk never reached %q", k)
		}
	}
}

func runWorld(t *testing.T, seed uint64, stats map[string]int) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	sup := Support{}
	if seed%4 == 0 { // a quarter of the worlds lack some attributes
		for _, a := range Attrs {
			if rng.IntN(2) == 0 {
				if sup.Unsupported == nil {
					sup.Unsupported = map[Attr]bool{}
				}
				sup.Unsupported[a] = true
			}
		}
	}
	startup := []string{"h0", "h1", "h2", "h3", "h4", "h5"}
	s, err := New(sup, startup, []Node{{Name: "s6", Rank: 6}, {Name: "s7", Rank: 7}, {Name: "s8", Rank: 8}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, seed: seed, rng: rng, s: s, now: 1000, jobs: map[fluid.ID]*pjob{}, nextID: 1, onNode: map[string]fluid.ID{}, spareN: 9, warned: map[string]float64{}, endedJSON: map[string]string{}, stats: stats}
	before := w.view()
	for w.step = 0; w.step < propSteps; w.step++ {
		beforeJSON := map[string]*Reservation{}
		for _, r := range s.All(true) {
			c := *r
			c.Owners, c.Children = slices.Clone(r.Owners), slices.Clone(r.Children)
			beforeJSON[r.ID] = &c
		}
		res := w.randomStep()
		before = w.check(before, beforeJSON, res)
		if res.err != nil {
			st := statusOf(res.err)
			if st == -1 {
				stats["err "+res.kind]++
			} else {
				stats[fmt.Sprintf("err %s %d", res.kind, st)]++
			}
		} else {
			stats["ok "+res.kind]++
		}
		for _, ch := range res.changes {
			for _, r := range ch.Ended {
				stats["ended "+r.EndReason]++
			}
			stats["departed"] += len(ch.Departed)
		}
	}
}

func (w *world) randomStep() stepResult {
	switch n := w.rng.IntN(1000); {
	case n < 180:
		return w.create()
	case n < 270:
		return w.extend()
	case n < 360:
		return w.release()
	case n < 560:
		return w.submit()
	case n < 720:
		return w.start()
	case n < 840:
		return w.end()
	case n < 940:
		return w.tick()
	case n < 997:
		return w.nodes()
	default:
		ch := w.s.Teardown(w.now)
		return stepResult{kind: "teardown", changes: w.depart(ch), teardown: true}
	}
}

func (w *world) create() stepResult {
	who := w.randomRequester(true)
	req := Request{Op: OpNew, Idle: w.idle}
	if w.rng.IntN(4) == 0 {
		names := []string{"h0", "h1", "h3", "s6", "s8", "nosuch"}
		for range 1 + w.rng.IntN(2) {
			req.Names = append(req.Names, names[w.rng.IntN(len(names))])
		}
	} else {
		req.Count = 1 + w.rng.IntN(3)
		if w.rng.IntN(10) == 0 {
			req.Count = 0
		}
	}
	if w.rng.IntN(3) == 0 {
		req.Share = ptr(w.rng.IntN(2) == 0)
	}
	if w.rng.IntN(3) == 0 {
		if j := w.pickJob(func(*pjob) bool { return true }); j != nil && w.rng.IntN(3) > 0 {
			req.Target = ptr(JobNS(j.id))
		} else {
			req.Target = ptr(ToolNS("carol"))
		}
	}
	if w.rng.IntN(3) > 0 {
		req.Inherit = ptr(Inheritance(w.rng.IntN(4)))
	}
	if w.rng.IntN(2) == 0 {
		req.Time = float64(10 + w.rng.IntN(200))
	}
	if w.rng.IntN(2) == 0 {
		req.Warn = ptr(uint32(1 + w.rng.IntN(60)))
	}
	if w.rng.IntN(2) == 0 {
		req.ReqID = fmt.Sprintf("q%d", w.rng.IntN(3))
	}
	req.TargetAlive = func(ns Namespace) (bool, bool) {
		j := w.jobs[ns.Job]
		return j != nil, j != nil && j.alive
	}
	owner := who.NS
	if req.Target != nil && w.s.Support.Has(AttrAllocTarget) {
		owner = *req.Target
	}
	if owner.IsJob() {
		req.Descendants = w.descendants(owner.Job)
	}
	ch, err := w.s.Allocate(req, who, w.now)
	// Decision 7's first two checks, as an oracle.
	badInherit := req.Inherit != nil && *req.Inherit != InheritDefault && !w.s.Support.Has(AttrAllocInheritance)
	switch {
	case badInherit && statusOf(err) != NotSupported:
		w.fail("create with unsupported inheritance: %v, want 47", err)
	case !badInherit && who.Class == Application && req.Target != nil && w.s.Support.Has(AttrAllocTarget) && statusOf(err) != NoPermissions:
		w.fail("application create with a target: %v, want 23", err)
	}
	if err == nil {
		r := ch.Reservation
		if r.Owner != owner || r.Requester != who.NS {
			w.fail("created %s owned by %v requested by %v; want %v, %v", r.ID, r.Owner, r.Requester, owner, who.NS)
		}
		if r.Share && !w.s.Support.Has(AttrAllocShare) {
			w.fail("shared %s without alloc-share", r.ID)
		}
	}
	return stepResult{kind: "create", err: err, changes: []Change{ch}}
}

// expectFind is the oracle for the allocation an extend or release names,
// and the status decision 7 gives before the node count.
func (w *world) expectFind(req Request, who Requester) (*Reservation, Status) {
	if req.ID == "" && req.ReqID == "" {
		return nil, BadParam
	}
	var r *Reservation
	if req.ID != "" {
		got, ok := w.s.Get(req.ID)
		if !ok || !got.Live() {
			return nil, NotFound
		}
		r = got
	} else {
		for _, c := range w.s.All(false) {
			if c.ReqID == req.ReqID && (r == nil || c.Requester == who.NS && r.Requester != who.NS) {
				r = c
			}
		}
		if r == nil {
			return nil, NotFound
		}
	}
	if req.Op == OpReclaim && who.Class != Scheduler {
		return r, NoPermissions
	}
	if who.Class != Scheduler && !r.Owns(who.NS) {
		return r, NoPermissions
	}
	return r, 0
}

func (w *world) extend() stepResult {
	var who Requester
	req := Request{Op: OpExtend, Idle: w.idle}
	live := w.s.All(false)
	if len(live) > 0 && w.rng.IntN(4) > 0 {
		r := live[w.rng.IntN(len(live))]
		req.ID = r.ID
		if w.rng.IntN(3) == 0 {
			req.ID, req.ReqID = "", r.ReqID
		}
		who = Requester{Class: Tool, NS: r.Owners[w.rng.IntN(len(r.Owners))]}
		if who.NS.IsJob() {
			who.Class = Application
		}
		if w.rng.IntN(4) == 0 {
			who = w.randomRequester(true)
		}
	} else {
		who = w.randomRequester(true)
		if w.rng.IntN(5) > 0 {
			req.ID = w.randomAllocID()
		}
	}
	req.Count = w.rng.IntN(3)
	if w.rng.IntN(2) == 0 {
		req.Time = float64(w.rng.IntN(100))
	}
	if w.rng.IntN(3) == 0 {
		req.Warn = ptr(uint32(w.rng.IntN(40)))
	}
	if w.rng.IntN(5) == 0 {
		req.Inherit = ptr(Inheritance(w.rng.IntN(4)))
	}
	_, want := w.expectFind(req, who)
	if req.Inherit != nil && *req.Inherit != InheritDefault && !w.s.Support.Has(AttrAllocInheritance) {
		want = NotSupported
	}
	ch, err := w.s.Allocate(req, who, w.now)
	if got := statusOf(err); got != want && !(want == 0 && got == OutOfResource) {
		w.fail("extend %+v by %v: %v, want %v", req, who.NS, err, want)
	}
	return stepResult{kind: "extend", err: err, changes: []Change{ch}}
}

func (w *world) release() stepResult {
	req := Request{Op: OpRelease, ID: w.randomAllocID()}
	if w.rng.IntN(3) == 0 {
		req.Op = OpReclaim
	}
	if w.rng.IntN(10) == 0 {
		req.ID, req.ReqID = "", fmt.Sprintf("q%d", w.rng.IntN(4))
	}
	if w.rng.IntN(4) == 0 {
		req.Inherit = ptr(InheritNone) // ignored on release
	}
	who := w.randomRequester(true)
	if r, ok := w.s.Get(req.ID); ok && w.rng.IntN(2) == 0 {
		who = Requester{Class: Tool, NS: r.Owners[w.rng.IntN(len(r.Owners))]}
		if who.NS.IsJob() {
			who.Class = Application
		}
	}
	r, want := w.expectFind(req, who)
	ch, err := w.s.Allocate(req, who, w.now)
	if got := statusOf(err); got != want {
		w.fail("%v %+v by %v: %v, want %v", req.Op, req, who.NS, err, want)
	}
	changes := []Change{ch}
	if err == nil {
		if r.Live() {
			w.fail("%s still live after %v", r.ID, req.Op)
		}
		changes = w.depart(ch)
	}
	return stepResult{kind: "release", err: err, changes: changes}
}

func (w *world) submit() stepResult {
	who := w.randomRequester(true)
	var targets []string
	if w.rng.IntN(3) > 0 {
		for range 1 + w.rng.IntN(3) {
			if w.rng.IntN(4) == 0 {
				targets = append(targets, DefaultSession)
			} else {
				targets = append(targets, w.randomAllocID())
			}
		}
		// Mostly ask for what the requester may have.
		if w.rng.IntN(2) == 0 {
			targets = slices.DeleteFunc(targets, func(t string) bool {
				r, ok := w.s.Get(t)
				return t != DefaultSession && (!ok || !r.Live() || (who.Class != Scheduler && !r.Owns(who.NS)))
			})
		}
	}
	var parent *pjob
	sp := Spawn{Targets: targets}
	if who.Class == Application {
		parent = w.jobs[who.NS.Job]
		sp.ParentTargets = parent.eff
	}
	// The oracle: left to right, 46 then 23 (decision 7).
	var want Status
	if w.s.Support.Has(AttrSpawnTarget) {
		for _, t := range targets {
			if t == DefaultSession {
				continue
			}
			r, ok := w.s.Get(t)
			if !ok || !r.Live() {
				want = NotFound
				break
			}
			if who.Class != Scheduler && !r.Owns(who.NS) {
				want = NoPermissions
				break
			}
		}
	}
	sessions, into, err := w.s.Target(sp, who)
	if got := statusOf(err); got != want {
		w.fail("Target(%v) by %v: %v, want %v", targets, who.NS, err, want)
	}
	if err != nil {
		return stepResult{kind: "submit", err: err}
	}
	j := &pjob{id: w.nextID, submitter: who, sessions: sessions, into: into, alive: true}
	w.nextID++
	if parent != nil {
		j.parent = parent.id
	}
	j.eff = slices.Clone(into)
	if sessions == nil || slices.Contains(sessions, DefaultSession) {
		j.eff = append(j.eff, DefaultSession)
	}
	owners := map[string][]Namespace{}
	for _, r := range w.s.All(false) {
		owners[r.ID] = slices.Clone(r.Owners)
	}
	w.jobs[j.id] = j
	w.order = append(w.order, j.id)
	w.s.Accepted(j.id, j.parent, into)
	// Spec "Ownership model": the job joins the owner set of what it was
	// spawned into, and of nothing else (not transitive).
	for id, was := range owners {
		r, _ := w.s.Get(id)
		want := was
		if slices.Contains(into, id) && !slices.Contains(was, JobNS(j.id)) {
			want = append(slices.Clone(was), JobNS(j.id))
		}
		if !slices.Equal(want, r.Owners) {
			w.fail("after accepting %v into %v, %s owners %v, want %v", j.id, into, id, r.Owners, want)
		}
	}
	return stepResult{kind: "submit"}
}

// start places a pending job with the toy scheduler: one or two free nodes
// of the union of the sessions it may target.
func (w *world) start() stepResult {
	j := w.pickJob(func(j *pjob) bool { return j.alive && !j.running })
	if j == nil {
		return stepResult{kind: "start"}
	}
	if w.s.TargetsLost(j.eff) {
		// Decision 8: it can never run.
		return stepResult{kind: "start", changes: w.kill([]fluid.ID{j.id})}
	}
	sessions := j.sessions
	if sessions == nil {
		sessions = []string{DefaultSession}
	}
	reserved, outside := w.s.Sessions()
	var free []Node
	for _, n := range w.s.Nodes() {
		if _, busy := w.onNode[n.Name]; n.In && !busy && slices.Contains(sessions, w.s.Session(n.Name)) {
			free = append(free, n)
		}
	}
	size := 1 + w.rng.IntN(2)
	if len(free) < size {
		return stepResult{kind: "start"}
	}
	for _, n := range free[:size] {
		// Conformance 1: "A job's candidate nodes are exactly the union of
		// the sessions it is permitted to target, and never include a
		// reserved node it does not own", checked against Sessions().
		in := false
		for _, sess := range sessions {
			if sess == DefaultSession {
				in = in || !slices.Contains(outside, n.Rank) && !slices.ContainsFunc(slices.Collect(maps.Values(reserved)), func(rs []uint) bool { return slices.Contains(rs, n.Rank) })
			} else {
				in = in || slices.Contains(reserved[sess], n.Rank)
			}
		}
		if !in {
			w.fail("job %v placed on %s, outside its sessions %v", j.id, n.Name, sessions)
		}
		if n.Holder != "" {
			r, _ := w.s.Get(n.Holder)
			if !r.Share && !r.Owns(JobNS(j.id)) {
				w.fail("job %v placed on %s reserved by %s, which it does not own", j.id, n.Name, r.ID)
			}
		}
		w.onNode[n.Name] = j.id
		j.nodes = append(j.nodes, n.Name)
		w.stats["placed"]++
		if w.s.Session(n.Name) != DefaultSession {
			w.stats["placed reserved"]++
		}
	}
	j.running = true
	return stepResult{kind: "start"}
}

// kill ends jobs and everything that follows: dispositions, and the jobs
// on nodes that depart.
func (w *world) kill(ids []fluid.ID) []Change {
	var out []Change
	for len(ids) > 0 {
		id := ids[0]
		ids = ids[1:]
		j := w.jobs[id]
		if !j.alive {
			continue
		}
		j.alive, j.running = false, false
		for _, n := range j.nodes {
			delete(w.onNode, n)
		}
		ch := w.s.JobEnded(id, w, w.now)
		out = append(out, ch)
		for _, n := range ch.Departed {
			if on, ok := w.onNode[n]; ok {
				ids = append(ids, on)
			}
		}
	}
	return out
}

// depart kills the jobs on nodes a change sent away (spec: "jobs and
// daemons on the departing nodes are terminated before the nodes leave").
func (w *world) depart(ch Change) []Change {
	var ids []fluid.ID
	for _, n := range ch.Departed {
		if on, ok := w.onNode[n]; ok {
			ids = append(ids, on)
		}
	}
	return append([]Change{ch}, w.kill(ids)...)
}

func (w *world) end() stepResult {
	// Owners end more often: that is where the dispositions are.
	j := w.pickJob(func(j *pjob) bool {
		if !j.alive {
			return false
		}
		for _, r := range w.s.All(false) {
			if r.Owner == JobNS(j.id) {
				return true
			}
		}
		return w.rng.IntN(3) == 0
	})
	if j == nil {
		return stepResult{kind: "end"}
	}
	return stepResult{kind: "end", changes: w.kill([]fluid.ID{j.id})}
}

func (w *world) tick() stepResult {
	w.now += float64(w.rng.IntN(30))
	if d := w.s.NextDeadline(); d > 0 && d < w.now && w.rng.IntN(2) == 0 {
		w.now = math.Max(d, w.now-30) // sometimes tick right at a deadline
	}
	type pre struct {
		expires  float64
		warn     uint32
		live     bool
		requeste Namespace
	}
	was := map[string]pre{}
	for _, r := range w.s.All(false) {
		was[r.ID] = pre{r.Expires, r.Warn, r.Live(), r.Requester}
	}
	warns, ch := w.s.Tick(w.now)
	for _, wn := range warns {
		p := was[wn.AllocID]
		r, _ := w.s.Get(wn.AllocID)
		// Conformance 6: "relayed only to the process that requested the
		// allocation, and is advisory".
		switch {
		case !w.s.Support.Has(AttrAllocWarnTimeout):
			w.fail("a warning without alloc-warn-timeout: %+v", wn)
		case wn.To != p.requeste:
			w.fail("warning for %s to %v, requester %v", wn.AllocID, wn.To, p.requeste)
		case p.warn == 0 || p.expires == 0 || p.expires-w.now > float64(p.warn):
			w.fail("warning for %s too early: expires %v warn %v now %v", wn.AllocID, p.expires, p.warn, w.now)
		case wn.TimeRemaining != uint32(math.Ceil(p.expires-w.now)):
			w.fail("warning for %s says %d s left, %v remain", wn.AllocID, wn.TimeRemaining, p.expires-w.now)
		case w.warned[wn.AllocID] == p.expires && p.expires != 0 && !r.Warned:
			w.fail("state lost the warning")
		case !r.Live():
			w.fail("the warning ended %s", r.ID)
		}
		w.warned[wn.AllocID] = p.expires
		w.stats["warning"]++
		w.s.Delivered(wn, w.rng.IntN(2) == 0)
	}
	for _, r := range ch.Ended {
		if r.EndReason != EndExpired || r.Expires > w.now {
			w.fail("Tick ended %s (%s) expiring at %v, now %v", r.ID, r.EndReason, r.Expires, w.now)
		}
	}
	// Nothing due remains undone.
	for _, r := range w.s.All(false) {
		if r.Expires != 0 && r.Expires <= w.now {
			w.fail("%s expired at %v and lives at %v", r.ID, r.Expires, w.now)
		}
	}
	return stepResult{kind: "tick", changes: w.depart(ch)}
}

func (w *world) nodes() stepResult {
	if w.rng.IntN(2) == 0 {
		var names []string
		for range 1 + w.rng.IntN(2) {
			if w.rng.IntN(2) == 0 {
				names = append(names, fmt.Sprintf("s%d", w.spareN))
				w.spareN++
			} else {
				names = append(names, fmt.Sprintf("s%d", 6+w.rng.IntN(w.spareN-6)))
			}
		}
		_, err := w.s.AddSpares(names)
		return stepResult{kind: "add", err: err}
	}
	var names []string
	for range 1 + w.rng.IntN(2) {
		if w.rng.IntN(5) == 0 {
			names = append(names, "h2")
		} else {
			names = append(names, fmt.Sprintf("s%d", 6+w.rng.IntN(w.spareN-6)))
		}
	}
	ch, err := w.s.RemoveNodes(names)
	if err != nil {
		return stepResult{kind: "remove", err: err, removed: true}
	}
	return stepResult{kind: "remove", changes: w.depart(ch), removed: true}
}

func (w *world) check(before view, was map[string]*Reservation, res stepResult) view {
	w.t.Helper()
	s := w.s
	after := w.view()
	dirtyRes, dirtySpares := s.Dirty()
	if err := checkConsistent(s); err != nil {
		w.fail("%s: %v", res.kind, err)
	}
	// Conformance 3: "Every rejection ... leaves no observable partial
	// effect."
	if res.err != nil {
		if !before.equal(after) {
			w.fail("rejected %s (%v) changed the state", res.kind, res.err)
		}
		if len(dirtyRes) != 0 || len(dirtySpares) != 0 {
			w.fail("rejected %s (%v) left things dirty", res.kind, res.err)
		}
		return after
	}
	// Every change is reported for the caller to persist.
	for id, j := range after.res {
		if before.res[id] != j && !slices.ContainsFunc(dirtyRes, func(r *Reservation) bool { return r.ID == id }) {
			w.fail("%s: %s changed but is not dirty", res.kind, id)
		}
	}
	for name, n := range after.nodes {
		if n.Origin == Spare && before.nodes[name] != n && !slices.ContainsFunc(dirtySpares, func(d Node) bool { return d.Name == name }) {
			w.fail("%s: spare %s changed but is not dirty", res.kind, name)
		}
	}
	// Ids are r1, r2, ... in order, never reused; only a create mints one
	// (conformance 2).
	all := s.All(true)
	if uint64(len(all)) != s.Last() {
		w.fail("%d reservations, last id %d", len(all), s.Last())
	}
	for i, r := range all {
		if r.ID != fmt.Sprintf("r%d", i+1) {
			w.fail("reservation %d is %s", i+1, r.ID)
		}
	}
	if after.last != before.last && (res.kind != "create" || after.last != before.last+1) {
		w.fail("%s minted %d reservations", res.kind, after.last-before.last)
	}
	var ended []*Reservation
	var joined, departed []string
	for _, ch := range res.changes {
		ended = append(ended, ch.Ended...)
		joined = append(joined, ch.Joined...)
		departed = append(departed, ch.Departed...)
	}
	// Owner sets and derived children only grow; the owner never changes.
	for id, r := range was {
		now, _ := s.Get(id)
		if now.Owner != r.Owner || !slices.Equal(now.Owners[:min(len(now.Owners), len(r.Owners))], r.Owners) || !slices.Equal(now.Children[:min(len(now.Children), len(r.Children))], r.Children) {
			w.fail("%s: %s owner/owners/children shrank or changed: %v %v -> %v %v", res.kind, id, r.Owners, r.Children, now.Owners, now.Children)
		}
		if !r.Live() && now.Live() {
			w.fail("%s came back to life", id)
		}
	}
	// Conformance 4: a reservation ends on an unconditional trigger or on
	// its disposition, and on no other event.
	for id, wasLive := range before.live {
		r, _ := s.Get(id)
		if !wasLive || r.Live() {
			continue
		}
		if !slices.Contains(ended, r) {
			w.fail("%s ended without being reported", id)
		}
		prev := was[id]
		ownerEnded := !prev.Owner.IsJob() && len(r.Children) > 0 || prev.Owner.IsJob() && !w.Alive(prev.Owner.Job)
		ok := false
		switch r.EndReason {
		case EndReleased, EndReclaimed:
			ok = res.kind == "release"
		case EndExpired:
			ok = res.kind == "tick"
		case EndTeardown:
			ok = res.kind == "teardown"
		case EndOwnerExit:
			ok = !r.Inheritance.AwaitsChildren() && prev.Owner.IsJob() && !w.Alive(prev.Owner.Job)
		case EndDrained:
			ok = r.Inheritance.AwaitsChildren() && ownerEnded && len(LiveChildren(r, w)) == 0
		}
		if !ok {
			w.fail("%s: %s ended as %q (inheritance %v, owner %v)", res.kind, id, r.EndReason, r.Inheritance, prev.Owner)
		}
	}
	// Conformance 5: nodes leave the instance only under NONE/CHILD, an
	// explicit release, a reclaim or expiry, or teardown (or the removal
	// of an unheld spare); a *_DEFAULT disposition only unreserves.
	for name, n := range after.nodes {
		b, existed := before.nodes[name]
		if existed && b.In && !n.In {
			if !slices.Contains(departed, name) {
				w.fail("%s: %s left the instance unreported", res.kind, name)
			}
			switch {
			case res.teardown:
			case b.Holder == "":
				if !res.removed {
					w.fail("%s: unheld %s left the instance", res.kind, name)
				}
			default:
				r, _ := s.Get(b.Holder)
				returned := r.EndReason == EndReleased || r.EndReason == EndReclaimed || r.EndReason == EndExpired || r.EndReason == EndTeardown ||
					(r.EndReason == EndOwnerExit || r.EndReason == EndDrained) && r.Inheritance.Returns()
				if r.Live() || !returned {
					w.fail("%s: %s left the instance though %s ended as %q with %v", res.kind, name, r.ID, r.EndReason, r.Inheritance)
				}
			}
			if w.onNode[name] != 0 {
				w.fail("a job still runs on departed %s", name)
			}
		}
		if (!existed || !b.In) && n.In && !slices.Contains(joined, name) {
			w.fail("%s: %s joined unreported", res.kind, name)
		}
	}
	for _, r := range ended {
		if (r.EndReason == EndOwnerExit || r.EndReason == EndDrained) && !r.Inheritance.Returns() {
			for _, name := range r.Nodes {
				if n, _ := s.Node(name); before.nodes[name].Holder == r.ID && !n.In {
					w.fail("%s ended %q (%v) and %s left", r.ID, r.EndReason, r.Inheritance, name)
				}
			}
		}
	}
	// Conformance 1 for jobs still running: a reserved node a job uses is
	// one of a reservation it owns (a running job's node is never taken).
	for name, id := range w.onNode {
		n, _ := s.Node(name)
		if !n.In {
			w.fail("job %v runs on %s, outside the instance", id, name)
		}
		if n.Holder == "" {
			continue
		}
		if r, _ := s.Get(n.Holder); !r.Share && !r.Owns(JobNS(id)) {
			w.fail("job %v runs on %s in %s, which it does not own (owners %v)", id, name, r.ID, r.Owners)
		}
	}
	return after
}
