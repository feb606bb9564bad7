// Package sim replays a workload trace in virtual time through the real
// job manager and scheduler, with the exec service replaced by a simulated
// one (RFC 32 allows the override): fluxsched sim. docs/simulation.md is the
// exact semantics; every rule below cites it.
//
// The job manager keeps its queues and job ids in a real store, in a
// temporary directory, its records of each job in a sink that keeps what
// it reads back (records.go), and sees the virtual clock; the scheduler is the same Engine
// fluxsched run drives, carried synchronously: at one instant the sim
// delivers the ends, then the submissions, then asks for exactly one pass.
// Many instants share a store transaction: nothing here needs to survive a
// crash, and a commit per instant would cost more than the scheduling.
package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/swf"
	"github.com/fluxq/fluxq/internal/wire"
)

// Config is one simulation.
type Config struct {
	Jobs      []swf.Job
	Inventory *rset.R // the machine
	// Policy schedules the one queue. docs/simulation.md: no queue-depth bound
	// unless one is given, so its QueueDepth is 0 unless the caller sets it.
	Policy sched.QueuePolicy
	// Queues are the queues of a config ([policy] and [queues]), nil
	// for the anonymous queue alone. The trace's jobs go to the default
	// queue, with its requires and defaults, and every queue is started;
	// Policy schedules them all.
	Queues *queue.Set
	// Memory asks each job for the memory of its trace's field 10
	// (docs/simulation.md, "Memory"): per processor, so per slot. Without
	// it field 10 is ignored and no job asks for memory.
	Memory bool
	// TempDir holds the store while the simulation runs ("" for the
	// system's temporary directory); it is removed afterwards.
	TempDir string
	// Samples asks for the machine's state over time (for the plot).
	Samples bool
	// Progress, when set, hears how far the replay is: done of total jobs
	// (those not skipped; a job is done once it has ended) at virtual time
	// now, in seconds from time zero. It is called every ProgressEvery
	// instants, and once at the end with done == total (denied jobs never
	// end, and are done then). It only watches: the schedule is the same
	// with or without it.
	Progress func(done, total int, now int64)
}

// ProgressEvery is how many instants pass between two calls of
// Config.Progress: a few hundred calls a second on a large trace, cheap
// beside an instant and plenty for a line redrawn ten times a second.
const ProgressEvery = 64

// Summary is docs/simulation.md's "--json" object.
type Summary struct {
	Jobs                int     `json:"jobs"`
	Skipped             int     `json:"skipped"`
	Denied              int     `json:"denied"`
	Makespan            int64   `json:"makespan"`
	Utilization         float64 `json:"utilization"`
	MeanWait            float64 `json:"mean_wait"`
	MaxWait             int64   `json:"max_wait"`
	MeanBoundedSlowdown float64 `json:"mean_bounded_slowdown"`
	MeanTurnaround      float64 `json:"mean_turnaround"`
}

// Entry is one started job of the schedule (--schedule-out), times from
// time zero.
type Entry struct {
	ID     int64 `json:"id"`
	Submit int64 `json:"submit"`
	Start  int64 `json:"start"`
	End    int64 `json:"end"`
	Cores  int64 `json:"cores"`
}

// Result is what a simulation produced.
type Result struct {
	Summary  Summary
	Schedule []Entry  // started jobs, in trace order
	Samples  []Sample // with Config.Samples
	// Skipped and Denied say why Summary.Skipped and Summary.Denied jobs
	// took no part: their counts add up to those.
	Skipped, Denied []Reason
}

// Machine is a machine of nodes hosts (node0, node1, ...) of cores cores
// and memory bytes (0: none known) each, as `fluxsched sim --nodes
// --cores-per-node [--memory]` describes it.
func Machine(nodes, cores int, memory uint64) (*rset.R, error) {
	if nodes < 1 || cores < 1 {
		return nil, fmt.Errorf("a machine needs at least one node and one core, not %d x %d", nodes, cores)
	}
	r, err := coresOnly(nodes, cores)
	if err != nil || memory == 0 {
		return r, err
	}
	all := r.Nodes()
	for i := range all {
		all[i].Memory = memory
	}
	return rset.New(all), nil
}

// coresOnly is Machine without memory.
func coresOnly(nodes, cores int) (*rset.R, error) {
	hosts, ids := "node0", "0"
	if nodes > 1 {
		hosts = fmt.Sprintf("node[0-%d]", nodes-1)
	}
	if cores > 1 {
		ids = fmt.Sprintf("0-%d", cores-1)
	}
	return resource.FromConfig([]resource.ConfigEntry{{Hosts: hosts, Cores: ids}})
}

// Tau is the bounded slowdown's threshold (docs/simulation.md: tau = 10 s).
const Tau = 10

// epoch is virtual time zero on the job manager's clock: any fixed instant
// works, and a round one makes eventlogs easy to read.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// simJob is a trace job that takes part.
type simJob struct {
	pos       int // index in the trace
	number    int64
	submit    int64 // from time zero
	run       int64
	requested int64
	cores     int64
	mem       uint64 // bytes per processor (per slot), 0 for none
	id        fluid.ID
	started   bool
	start     int64
	denied    bool
	note      string // the scheduler's DENY note, once denied
	// refused: why it is denied without being submitted (so without a
	// DENY note): it asks for more memory than any jobspec can (over 1E
	// per processor or in all), or its queue's admission refused it.
	refused string
}

// Run simulates cfg.
func Run(cfg Config) (*Result, error) { return run(cfg, wiring{typed: true}) }

// wiring is how the job manager and the scheduler talk: typed messages
// (the replay's), or JSON as over a socket, and a tap that sees every
// message between them (tests hold the two ways equal).
type wiring struct {
	typed bool
	tap   func(toSched bool, m wire.Message)
}

func run(cfg Config, w wiring) (*Result, error) {
	if cfg.Inventory == nil {
		return nil, errors.New("no machine to simulate")
	}
	s := &simulation{cfg: cfg, wiring: w, byID: map[fluid.ID]*simJob{}, skips: tally{}, sink: newSink()}
	if err := s.load(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "fluxsched-sim-")
	if err != nil {
		return nil, fmt.Errorf("simulation store: %w", err)
	}
	defer os.RemoveAll(dir)
	s.st, err = store.Open(filepath.Join(dir, "sim.db"), store.Options{Now: func() time.Time { return epoch }, Scratch: true})
	if err != nil {
		return nil, fmt.Errorf("simulation store: %w", err)
	}
	defer s.st.Close()
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.result(), nil
}

type simulation struct {
	cfg      Config
	wiring   wiring
	jobs     []*simJob // in queue order: submit, job number, trace position
	skipped  int
	skips    tally
	byID     map[fluid.ID]*simJob
	st       *store.Store
	sink     *sink // the job manager's records (records.go)
	jm       *jobmgr.Manager
	eng      *sched.Engine
	now      int64 // virtual seconds from time zero
	ends     endHeap
	seq      int
	busy     int64 // cores running jobs, for the samples
	ended    int   // jobs that have ended, for Config.Progress
	instants int   // instants so far, for Config.Progress
	cores    int64
	samples  []Sample
	// queues and their states, as the submissions are admitted against
	// them (every queue started).
	queues      *queue.Set
	queueStates map[string]queue.State
	// submitQueues are the same as state.SubmitUnstored reads them from
	// the store, once.
	submitQueues state.Queues
}

// load applies docs/simulation.md's "Input" rules to the trace.
func (s *simulation) load() error {
	zero := int64(math.MaxInt64)
	for i, j := range s.cfg.Jobs {
		// "A job with cores <= 0 or submit < 0 is skipped"; "a job with
		// run time < 0 is skipped".
		if why := skipReason(j); why != "" {
			s.skipped++
			s.skips.add(why, j.Number)
			continue
		}
		sj := &simJob{pos: i, number: j.Number, submit: j.Submit, run: j.Run, requested: j.Requested(), cores: j.Cores()}
		if s.cfg.Memory {
			// "Memory": field 10 x 1024 bytes per processor; a job
			// asking more than 1E, per processor or in all, is denied.
			sj.mem = j.ReqMemoryBytes()
			if sj.mem > jobspec.MaxMemory || (sj.mem > 0 && uint64(sj.cores) > jobspec.MaxMemory/sj.mem) {
				sj.refused = DenyTooMuchMemory
			}
		}
		s.jobs = append(s.jobs, sj)
		// "time zero: the smallest submit time among the jobs that are
		// not skipped (denied jobs count)".
		zero = min(zero, j.Submit)
	}
	for _, j := range s.jobs {
		j.submit -= zero
	}
	// "Queue order: submit time, then job number, then position in the
	// trace." Submitting in this order gives job ids in this order too,
	// which is how the scheduler breaks ties of priority and submit time.
	slices.SortStableFunc(s.jobs, func(a, b *simJob) int {
		switch {
		case a.submit != b.submit:
			return cmp.Compare(a.submit, b.submit)
		case a.number != b.number:
			return cmp.Compare(a.number, b.number)
		}
		return a.pos - b.pos
	})
	_, cores, _ := s.cfg.Inventory.Counts()
	s.cores = int64(cores)
	return nil
}

// duration is a requested time as a jobspec's duration. A jobspec cannot
// say zero seconds (0 means no limit), so the smallest positive duration
// stands for it: added to any time it leaves it as it was, so the job ends
// at its start, as docs/simulation.md has a job of requested time 0 do.
func duration(requested int64) float64 {
	if requested == 0 {
		return math.SmallestNonzeroFloat64
	}
	return float64(requested)
}

// simCommand is every trace job's command.
var simCommand = []string{"swf-job"}

// clock is the job manager's view of virtual time.
func (s *simulation) clock() time.Time { return epoch.Add(time.Duration(s.now) * time.Second) }

// stamp is virtual time as the scheduler and R see it.
func (s *simulation) stamp() float64 { return state.Timestamp(s.clock()) }

// instantsPerCommit bounds how much one store transaction holds.
const instantsPerCommit = 512

func (s *simulation) run() error {
	raw, err := s.cfg.Inventory.MarshalJSON()
	if err != nil {
		return err
	}
	set := s.cfg.Queues
	if set == nil {
		var err error
		if set, err = queue.Compile(queue.Tables{}); err != nil {
			return err
		}
	}
	s.jm = jobmgr.New(jobmgr.Config{Inventory: s.cfg.Inventory, Owner: uint32(os.Getuid()), ExecService: execService, Now: s.clock, Records: s.sink, Typed: s.wiring.typed})
	s.eng = sched.NewEngine(sched.Options{Default: s.cfg.Policy, Typed: s.wiring.typed})
	err = s.st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		states, err := state.StartQueues(tx, set)
		if err != nil {
			return err
		}
		// Named queues begin stopped (as Flux's do); a replay has no
		// administrator to start them.
		for name, st := range states {
			st.Start(true, "", false)
			states[name] = st
			if err := state.PutQueueState(tx, name, st); err != nil {
				return err
			}
		}
		s.jm.SetQueues(set, states)
		s.queues, s.queueStates = set, states
		// What each submission checks, read once: nothing changes the
		// queues' configuration or states after this transaction.
		qset, err := state.QueueSet(tx)
		if err != nil {
			return err
		}
		qstates, err := state.QueueStates(tx, qset)
		if err != nil {
			return err
		}
		s.submitQueues = state.Queues{Set: qset, States: qstates}
		if err := s.jm.Load(tx); err != nil {
			return err
		}
		return s.connect(tx)
	})
	if err != nil {
		return err
	}
	next := 0 // the next job to submit
	for next < len(s.jobs) || s.ends.Len() > 0 {
		err := s.st.Update(func(tx *store.Tx) error {
			for k := 0; k < instantsPerCommit && (next < len(s.jobs) || s.ends.Len() > 0); k++ {
				s.now = math.MaxInt64
				if next < len(s.jobs) {
					s.now = s.jobs[next].submit
				}
				if s.ends.Len() > 0 {
					s.now = min(s.now, s.ends[0].at)
				}
				var err error
				if next, err = s.instant(tx, next); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Every job has ended: one that never started was denied, unless
	// the scheduler still holds it (which would be a bug, said so).
	if n := s.eng.Scheduler().Pending(); n > 0 {
		return fmt.Errorf("simulation ended with %d jobs that never started", n)
	}
	for _, j := range s.jobs {
		j.denied = !j.started
	}
	if err := s.denyNotes(); err != nil {
		return err
	}
	if s.cfg.Progress != nil {
		s.cfg.Progress(len(s.jobs), len(s.jobs), s.now)
	}
	return nil
}

// instant is docs/simulation.md's "At one instant": first every job that ends
// then frees its cores, then every job submitted then is queued (in
// trace order), then the scheduler makes one pass; jobs of run time 0
// started by it end at once, and another pass follows. It returns the
// next job to submit.
func (s *simulation) instant(tx *store.Tx, next int) (int, error) {
	for first := true; ; first = false {
		if err := s.endJobs(tx); err != nil {
			return next, err
		}
		if first {
			var recs []state.SubmitRequest
			var batch []*simJob
			for next < len(s.jobs) && s.jobs[next].submit == s.now {
				j := s.jobs[next]
				if j.refused != "" {
					next++ // denied without a jobspec, which cannot say it
					continue
				}
				js, err := jobspec.FromOptions(jobspec.Options{
					NTasks: int(j.cores), CoresPerTask: 1, MemPerSlot: j.mem, Duration: duration(j.requested),
					// One command for every job, and no name of its own:
					// nothing reads them in a replay, and a string per job
					// would be made and interned for nothing.
					Command: simCommand,
				})
				if err != nil {
					return next, fmt.Errorf("job %d: %w", j.number, err)
				}
				next++
				if j.refused, err = s.admission(js); err != nil {
					return next, fmt.Errorf("job %d: %w", j.number, err)
				} else if j.refused != "" {
					continue
				}
				// Submitted as built: FromOptions has validated it, and
				// encoding it to be parsed again would cost more than
				// scheduling it.
				recs = append(recs, state.SubmitRequest{Parsed: js, UserID: uint32(os.Getuid()), Owner: true, Urgency: 16, Unjudged: true})
				batch = append(batch, j)
			}
			if len(recs) > 0 {
				ids, made, err := state.SubmitUnstored(tx, s.clock(), recs, s.jm.Reservations(), s.submitQueues)
				if err != nil {
					return next, fmt.Errorf("submitting: %w", err)
				}
				s.sink.submitted(made)
				for i, id := range ids {
					batch[i].id = id
					s.byID[id] = batch[i]
				}
				if err := s.jm.Submitted(tx, made); err != nil {
					return next, err
				}
			}
		}
		s.jm.Schedule(tx)
		if err := s.pump(tx); err != nil {
			return next, err
		}
		// One pass: the engine's Step with no bound finishes it.
		out, _, err := s.eng.Step(s.stamp(), 0)
		if err != nil {
			return next, err
		}
		if err := s.toJM(tx, out); err != nil {
			return next, err
		}
		if err := s.pump(tx); err != nil {
			return next, err
		}
		if !s.endsNow() {
			break
		}
	}
	s.sample()
	s.instants++
	if s.cfg.Progress != nil && s.instants%ProgressEvery == 0 {
		s.cfg.Progress(s.ended, len(s.jobs), s.now)
	}
	return next, nil
}

// admission is why the job's queue refuses js, "" when it admits it
// (docs/simulation.md, "With a config": a job its queue refuses is denied,
// and the other jobs of its instant are still submitted). state.Submit
// refuses a whole batch for one job, so each job is put to the queue's
// admission first, the one check Submit applies (queue.Set.Admit), with
// the same queues and states; what can refuse a trace job there is a
// limit (duration, job size, memory), and the refusal is counted by its
// rule. Without a config the one queue has no limits and no job is put
// to it twice. js is changed (admission applies the queue's defaults): the
// caller has marshalled what it submits. An error that is no refusal
// would fail the submission too, so it fails the replay.
func (s *simulation) admission(js *jobspec.Jobspec) (string, error) {
	if s.cfg.Queues == nil {
		return "", nil
	}
	// As the submission does: the trace's jobs are the owner's.
	err := s.queues.Admit(js, s.queueStates, queue.User{UID: uint32(os.Getuid()), Owner: true})
	if err != nil && !errors.Is(err, queue.ErrRejected) {
		return "", fmt.Errorf("admission: %w", err)
	}
	return queue.Rule(err), nil
}

// pump carries messages between the job manager, the scheduler and the
// simulated exec service until none is left. The scheduler does not make
// a pass here: instant decides when.
func (s *simulation) pump(tx *store.Tx) error {
	for {
		out := s.jm.Take()
		if len(out.Sched) == 0 && len(out.Exec) == 0 {
			s.jm.Recycle(out)
			return nil
		}
		for _, m := range out.Sched {
			if s.wiring.tap != nil {
				s.wiring.tap(true, m)
			}
			resps, err := s.eng.Handle(m)
			if err != nil {
				return fmt.Errorf("scheduler: %w", err)
			}
			if err := s.toJM(tx, resps); err != nil {
				return err
			}
		}
		for _, m := range out.Exec {
			if s.wiring.tap != nil {
				s.wiring.tap(true, m)
			}
			if err := s.exec(tx, m); err != nil {
				return err
			}
		}
		s.jm.Recycle(out)
	}
}

// toJM delivers the scheduler's messages to the job manager.
func (s *simulation) toJM(tx *store.Tx, msgs []wire.Message) error {
	for _, m := range msgs {
		if s.wiring.tap != nil {
			s.wiring.tap(false, m)
		}
		if err := s.jm.SchedMessage(tx, m); err != nil {
			return fmt.Errorf("job manager: %w", err)
		}
	}
	return nil
}

// connect opens both conversations: the scheduler's handshake and the
// simulated exec service's hello.
func (s *simulation) connect(tx *store.Tx) error {
	start, err := s.eng.Start()
	if err != nil {
		return err
	}
	if err := s.toJM(tx, start); err != nil {
		return err
	}
	hello, err := wire.NewRequest(execproto.TopicHello, execproto.Hello{Service: execService})
	if err != nil {
		return err
	}
	if err := s.jm.ExecMessage(tx, hello); err != nil {
		return fmt.Errorf("job manager: %w", err)
	}
	if err := s.pump(tx); err != nil {
		return err
	}
	if !s.eng.Serving() {
		return errors.New("scheduler handshake did not complete")
	}
	return nil
}

func (s *simulation) result() *Result {
	res := &Result{Samples: s.samples, Skipped: s.skips.list()}
	sum := &res.Summary
	sum.Skipped = s.skipped
	var used, waits, slow, turn float64
	inTrace := slices.Clone(s.jobs)
	slices.SortFunc(inTrace, func(a, b *simJob) int { return a.pos - b.pos })
	started := make([]*simJob, 0, len(s.jobs))
	denials := tally{}
	for _, j := range inTrace {
		switch {
		case j.denied:
			sum.Denied++
			denials.add(s.denyReason(j), j.number)
		case j.started:
			started = append(started, j)
		}
	}
	res.Denied = denials.list()
	for _, j := range started {
		end := j.start + min(j.run, j.requested)
		run := end - j.start
		wait := j.start - j.submit
		res.Schedule = append(res.Schedule, Entry{ID: j.number, Submit: j.submit, Start: j.start, End: end, Cores: j.cores})
		sum.Makespan = max(sum.Makespan, end)
		sum.MaxWait = max(sum.MaxWait, wait)
		used += float64(run) * float64(j.cores)
		waits += float64(wait)
		turn += float64(wait + run)
		slow += max(1, float64(wait+run)/float64(max(run, Tau)))
	}
	sum.Jobs = len(started)
	if n := float64(len(started)); n > 0 {
		sum.MeanWait = waits / n
		sum.MeanBoundedSlowdown = slow / n
		sum.MeanTurnaround = turn / n
		if sum.Makespan > 0 && s.cores > 0 {
			sum.Utilization = used / (float64(s.cores) * float64(sum.Makespan))
		}
	}
	return res
}

// An end is a started job's end, due at a virtual time.
type end struct {
	at  int64
	seq int // start order, so ends at one instant come in a fixed order
	job *simJob
}

// endHeap is a min-heap of ends by (at, seq), pushed and popped as its
// own type: container/heap's Push and Pop box each end, two allocations
// for every job a replay starts.
type endHeap []end

func (h endHeap) Len() int { return len(h) }

func (h endHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *endHeap) push(e end) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		up := (i - 1) / 2
		if !q.less(i, up) {
			break
		}
		q[i], q[up] = q[up], q[i]
		i = up
	}
}

// pop removes and returns the earliest end; h must not be empty.
func (h *endHeap) pop() end {
	q := *h
	n := len(q) - 1
	top := q[0]
	q[0] = q[n]
	q[n] = end{}
	q = q[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && q.less(r, c) {
			c = r
		}
		if !q.less(c, i) {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	*h = q
	return top
}
