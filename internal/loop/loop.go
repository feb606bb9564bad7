// Package loop is fluxsched's foreground loop: it owns the open store and
// the job manager, and feeds the manager everything that happens — messages
// from the scheduler and the exec service, and users' requests — in turns.
// A turn handles every input that is waiting (up to a bound) inside one
// store transaction, commits it once, and only then sends what the turn
// produced: so 1,000 events cost one fsync, and no peer outside this
// process ever hears of a step that a crash could still undo. The
// scheduler of this process is the one peer told before the commit (see
// exchange): it dies with the process, and a new one learns the committed
// state from RFC 27's hello. A turn whose commit fails (a full filesystem)
// is refused whole and the loop goes on: see turn.
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/cycletrace"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
	"github.com/fluxq/fluxq/internal/writes"
)

// MaxBatch bounds the inputs of one turn, so one commit never grows
// without limit and replies keep flowing under a flood of submissions.
const MaxBatch = 1024

// Call is a user's operation, run inside a turn's transaction against
// the store and the job manager. Its result is delivered on Reply after
// the turn commits; a failed operation's writes are not kept.
type Call struct {
	Op    func(tx *store.Tx, jm *jobmgr.Manager) (any, error)
	Reply chan<- Result
}

// Result is what a Call's operation returned.
type Result struct {
	Value any
	Err   error
}

// Loop runs the job manager.
type Loop struct {
	st     *store.Store
	jm     *jobmgr.Manager
	sched  *Peer
	exec   *Peer
	log    *slog.Logger
	inputs chan input
	calls  chan Call

	mu       sync.Mutex
	changed  chan struct{}              // closed when a turn posts events
	jobWatch map[fluid.ID]chan struct{} // closed when that job gets events

	// What a turn whose commit failed leaves behind (see turn).
	saved   jobmgr.Checkpoint
	pending []input // peer inputs not yet committed, handled first next turn
	failing error   // the last commit failure, nil once a turn commits

	turns int // turns committed, for benchmarks

	// purged is told, after each committed turn, of the jobs retention
	// removed from the store in it (OnPurged).
	purged func([]fluid.ID)

	// The exchange with the scheduler of this process inside a turn:
	// syncSeq numbers the sync requests; exchanged says the turn told
	// the scheduler something before its commit; dropped is a scheduler
	// connection given up after a failed commit, whose messages are
	// void.
	syncSeq   uint64
	exchanged bool
	dropped   wire.Conn

	// restart is a scheduler connection whose ready was refused: once
	// the turn has committed and the refusal is sent, it is closed (its
	// process stopped) and a new scheduler started, after a pause that
	// grows while its successors do the same (Peer.breach).
	restart wire.Conn
}

type source int

const (
	fromSched source = iota
	fromExec
	fromTimer
	fromRetain // retention has jobs to purge (jobmgr.RetainDue)
)

type input struct {
	src  source
	conn wire.Conn // the connection it came on
	msg  wire.Message
	err  error // the connection failed or closed
}

// New prepares a loop over an open store, a job manager, and its peers:
// the scheduler and the exec service.
func New(st *store.Store, jm *jobmgr.Manager, sched, exec *Peer, log *slog.Logger) *Loop {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	jm.DeferSummaries()
	return &Loop{
		st: st, jm: jm, sched: sched, exec: exec, log: log,
		inputs:   make(chan input, MaxBatch),
		calls:    make(chan Call, MaxBatch),
		changed:  make(chan struct{}),
		jobWatch: map[fluid.ID]chan struct{}{},
	}
}

// Enqueue hands a call to the loop; it never blocks for long, because the
// loop drains calls every turn.
func (l *Loop) Enqueue(ctx context.Context, r Call) error {
	select {
	case l.calls <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do runs op in the loop and waits for its result.
func (l *Loop) Do(ctx context.Context, op func(tx *store.Tx, jm *jobmgr.Manager) (any, error)) (any, error) {
	reply := make(chan Result, 1)
	if err := l.Enqueue(ctx, Call{Op: op, Reply: reply}); err != nil {
		return nil, err
	}
	select {
	case r := <-reply:
		return r.Value, r.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// OnPurged sets fn to be told, after each committed turn, of the jobs
// that retention purged in it, so their folders can go; fn must not
// block the loop for long. Call it before Run.
func (l *Loop) OnPurged(fn func([]fluid.ID)) { l.purged = fn }

// Run loads the active jobs and runs turns until ctx ends. Losing the
// scheduler or the exec service suspends them (RFC 27/32); it does not end
// the loop.
func (l *Loop) Run(ctx context.Context) error {
	err := l.st.Update(func(tx *store.Tx) error {
		if err := l.jm.Load(tx); err != nil {
			return err
		}
		return l.jm.SaveSummaries(tx)
	})
	if err != nil {
		return fmt.Errorf("loading jobs: %w", err)
	}
	l.log.Info("jobs loaded", "active", l.jm.Active())
	l.flush()
	done := make(chan struct{})
	defer close(done)
	go l.read(fromSched, l.sched, done)
	go l.read(fromExec, l.exec, done)
	// A timer wakes the loop when a begin-time dependency falls due.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var timerC <-chan time.Time
	rearm := func() {
		timerC = nil
		if w := l.jm.NextWake(); !w.IsZero() {
			timer.Reset(max(time.Until(w), 0))
			timerC = timer.C
		}
	}
	rearm()
	// Retention has a timer of its own: a purge's backlog takes a
	// bounded batch per turn, one turn after another, with whatever
	// else comes between them, and a Tick (which walks every active
	// job) is not paid for each batch.
	retain := time.NewTimer(time.Hour)
	retain.Stop()
	defer retain.Stop()
	var retainC <-chan time.Time
	rearmRetain := func() {
		retainC = nil
		// Not while commits fail: the retries of the failed turn come
		// at their own pace, and a purge would only fail with them.
		if w := l.jm.RetainDue(); !w.IsZero() && l.failing == nil {
			retain.Reset(max(time.Until(w), 0))
			retainC = retain.C
		}
	}
	rearmRetain()
	// While a commit keeps failing, the inputs it could not keep are
	// tried again now and then, as well as with every new input.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	retryPause := retryMin
	for {
		var retryC <-chan time.Time
		if len(l.pending) > 0 {
			retry.Reset(retryPause)
			retryC = retry.C
		}
		batch := l.pending
		l.pending = nil
		var calls []Call
		select {
		case <-ctx.Done():
			l.log.Debug("loop ends", "turns", l.turns)
			return nil
		case in := <-l.inputs:
			batch = append(batch, in)
		case r := <-l.calls:
			calls = append(calls, r)
		case <-timerC:
			batch = append(batch, input{src: fromTimer})
		case <-retainC:
			batch = append(batch, input{src: fromRetain})
		case <-retryC:
		}
		retry.Stop()
		batch, calls = l.drain(batch, calls)
		if err := l.turn(batch, calls); err != nil {
			return err
		}
		if l.failing != nil {
			retryPause = min(2*retryPause, retryMax)
		} else {
			retryPause = retryMin
		}
		rearm()
		rearmRetain()
	}
}

// drain adds the inputs and requests waiting now, up to MaxBatch in all.
func (l *Loop) drain(batch []input, calls []Call) ([]input, []Call) {
	for len(batch)+len(calls) < MaxBatch {
		select {
		case in := <-l.inputs:
			batch = append(batch, in)
		case r := <-l.calls:
			calls = append(calls, r)
		default:
			return batch, calls
		}
	}
	return batch, calls
}

// Bounds of the pause before a turn whose commit failed is tried again.
const (
	retryMin = 250 * time.Millisecond
	retryMax = 5 * time.Second
)

// read feeds a peer's messages to the loop until the loop ends. When the
// connection ends, the job manager hears of it (and suspends the peer),
// and the peer is connected again after a pause that grows while it keeps
// failing.
func (l *Loop) read(src source, p *Peer, done <-chan struct{}) {
	if p == nil {
		return
	}
	pause := reconnectMin
	for {
		c, err := p.connect()
		if errors.Is(err, ErrNoReconnect) {
			return
		}
		if err == nil {
			for {
				msg, rerr := c.Recv()
				select {
				case l.inputs <- input{src: src, conn: c, msg: msg, err: rerr}:
				case <-done:
					return
				}
				var bad *wire.BadMessageError
				if errors.As(rerr, &bad) {
					continue // answered by handle; the line framing holds
				}
				if rerr != nil {
					break
				}
				pause = reconnectMin // it spoke: it was up
			}
			// Whatever ended it, the old connection is let go before
			// a new one is made: a command's stdin is closed and the
			// process reaped (or killed), never left beside the next.
			c.Close()
		} else {
			l.log.Warn("connecting", "peer", src.String(), "err", err)
		}
		wait := pause
		if d, ok := p.pauseAfter(c); ok {
			// It spoke, but only to break the protocol: the pause
			// grows with each such peer in a row.
			wait = d
		}
		select {
		case <-done:
			return
		case <-time.After(wait):
		}
		pause = min(2*pause, reconnectMax)
	}
}

// Bounds of the pause before a lost peer is connected again.
const (
	reconnectMin = 100 * time.Millisecond
	reconnectMax = 5 * time.Second
)

func (s source) String() string {
	switch s {
	case fromSched:
		return "scheduler"
	case fromExec:
		return "exec service"
	}
	if s == fromRetain {
		return "retention"
	}
	return "timer"
}

// turn handles a batch in one transaction and commits it once. Requests
// operations must check everything before they write (as internal/state
// and the job manager's user methods do), so a refused request leaves
// nothing behind and the rest of the turn still commits.
//
// A commit can fail: the store's filesystem is full, or cannot be
// written. Then the turn is refused as a whole: the store kept nothing of
// it, and the job manager's memory is put back as it was before the turn
// (jobmgr.Checkpoint), so nothing is half applied and nothing is sent.
// The requests are answered with the store's error; the messages from the
// scheduler and the exec service are kept, in order, and handled again at
// the next turn, until one commits: none is lost, none is applied twice.
// While commits fail, requests get a turn of their own, so that those
// needing no write (counts, waits) are still answered. Only a failure to
// put memory back ends the loop.
func (l *Loop) turn(batch []input, calls []Call) error {
	if l.failing != nil && len(batch) > 0 && len(calls) > 0 {
		wrote, err := l.attempt(nil, calls, true, false)
		if err != nil {
			return err
		}
		_, err = l.attempt(batch, nil, false, wrote)
		return err
	}
	_, err := l.attempt(batch, calls, false, false)
	return err
}

// attempt runs one turn; held says that peer inputs still wait beside it,
// and wroteBefore that the requests' own turn, just before it, wrote and
// committed. It reports whether this turn wrote and committed.
func (l *Loop) attempt(batch []input, calls []Call, held, wroteBefore bool) (bool, error) {
	batch, calls, results, wrote, err := l.try(batch, calls)
	if err == nil {
		l.turns++
		// A turn that wrote nothing committed nothing (store.Update), so
		// it says nothing of the store: the failure stands until a turn
		// that wrote has committed, and is logged as over once, then,
		// once the peer inputs held beside the requests have committed
		// too. Those may write nothing: the requests' write, just before
		// them, then counts (else a failure outlived the full disk, and
		// retention, which waits for it, never ran again).
		if l.failing != nil && !held && (wrote || wroteBefore) {
			l.log.Warn("the store can be written again")
			l.failing = nil
		}
		for i, r := range calls {
			if r.Reply != nil {
				r.Reply <- results[i]
			}
		}
		l.flush()
		l.restartSched()
		return wrote, nil
	}
	l.restart = nil // the ready is handled again with the turn's inputs
	var werr *store.WriteError
	if !errors.As(err, &werr) {
		return false, fmt.Errorf("committing a turn: %w", err)
	}
	if err := l.st.View(func(tx *store.Tx) error { return l.jm.Restore(tx, &l.saved) }); err != nil {
		return false, fmt.Errorf("restoring the job manager after a failed commit: %w", err)
	}
	if l.exchanged {
		// The scheduler heard of what the store did not keep: a new one
		// is started, and learns the committed state from hello.
		batch = l.dropSched(batch)
	}
	if l.failing == nil || l.failing.Error() != err.Error() {
		l.log.Error("cannot commit: refusing work until the store can be written", "err", err)
	}
	l.failing = err
	l.pending = append(l.pending, batch...)
	for i, r := range calls {
		if r.Reply == nil {
			continue
		}
		// Its own refusal is the better answer; else the store's.
		if results[i].Err == nil {
			results[i].Err = err
		}
		r.Reply <- Result{Err: results[i].Err}
	}
	return false, nil
}

// try runs a turn in one transaction, first saving the job manager's
// memory so that a failed commit can be undone. It returns the inputs
// and requests the turn took: more than it was given when it lingered,
// and whether it wrote anything (a turn that did not commits nothing).
//
// A turn that has nothing to send and no one to answer does not commit
// at once: it waits up to linger for more input and handles that in the
// same transaction. A job's start, for one, is such a turn, and its
// finish follows within a millisecond or two: so one commit (and its
// fdatasyncs) covers both, and no one waits for the first meanwhile. A
// turn stops lingering as soon as it has something to send or to answer.
func (l *Loop) try(batch []input, calls []Call) ([]input, []Call, []Result, bool, error) {
	l.jm.Save(&l.saved)
	l.exchanged = false
	var results []Result
	wrote := false
	seq := uint64(l.turns + 1)
	err := l.st.Update(func(tx *store.Tx) error {
		defer func() { wrote = tx.Wrote() }()
		defer cycletrace.At(cycletrace.TurnCommit, seq)
		results = l.apply(tx, batch, calls, results)
		batch, results = l.exchange(tx, batch, results)
		if l.failing != nil || len(calls) > 0 || !l.jm.Quiet() {
			return nil
		}
		deadline := time.NewTimer(linger)
		defer deadline.Stop()
		for len(calls) == 0 && len(batch) < MaxBatch && l.jm.Quiet() {
			n, m := len(batch), len(calls)
			select {
			case in := <-l.inputs:
				batch = append(batch, in)
			case r := <-l.calls:
				calls = append(calls, r)
			case <-deadline.C:
				return nil
			}
			// And whatever else has come meanwhile.
			batch, calls = l.drain(batch, calls)
			results = l.apply(tx, batch[n:], calls[m:], results)
			batch, results = l.exchange(tx, batch, results)
		}
		return nil
	})
	cycletrace.At(cycletrace.TurnCommitted, seq)
	return batch, calls, results, wrote, err
}

// exchange sends the scheduler of this process what the turn has for it
// so far, and handles its answers in the same turn, so that one commit
// covers a job's end, the free of its resources, the allocation the free
// allows and the next job's start. A sync request follows the messages;
// the scheduler answers it once it has handled them and finished the
// pass they started. What else arrives meanwhile (the exec service's
// messages) joins the turn too. The exchange stops at the first answer
// that does not come within syncWait (a long pass: its allocations come
// in a later turn), after maxExchanges rounds, or when the batch is full.
// A burst (more than maxExchangeMsgs messages, as from a submission of
// many jobs) is not exchanged: its answers would double the size of the
// turn's transaction, for one commit saved; they come in the next turn.
//
// Not while commits fail: then the scheduler hears only of what was
// committed, and a failed commit has nothing to undo there.
func (l *Loop) exchange(tx *store.Tx, batch []input, results []Result) ([]input, []Result) {
	defer cycletrace.At(cycletrace.TurnExchanged, uint64(l.turns+1))
	if l.failing != nil || l.sched == nil || !l.sched.Local {
		return batch, results
	}
	c := l.sched.currentConn()
	if c == nil || c == l.dropped {
		return batch, results
	}
	for round := 0; round < maxExchanges && len(batch) < MaxBatch; round++ {
		if n := l.jm.SchedQueued(); n == 0 || n > maxExchangeMsgs {
			return batch, results
		}
		msgs := l.jm.TakeSched()
		l.syncSeq++
		seq := l.syncSeq
		sync, err := schedproto.NewSync(seq)
		if err != nil {
			l.log.Error("sync request", "err", err)
			return batch, results
		}
		l.exchanged = true
		for _, m := range append(msgs, sync) {
			if err := c.Send(m); err != nil {
				// The connection is going: the loop hears of it, and
				// the next scheduler's hello replays what it needs.
				l.log.Warn("sending to the scheduler", "topic", m.Topic, "err", err)
				return batch, results
			}
		}
		if !l.awaitSync(tx, c, seq, &batch, &results) {
			return batch, results
		}
	}
	return batch, results
}

// awaitSync handles the inputs that arrive until the scheduler answers
// sync request seq on c, and reports whether it did in time.
func (l *Loop) awaitSync(tx *store.Tx, c wire.Conn, seq uint64, batch *[]input, results *[]Result) bool {
	deadline := time.NewTimer(syncWait)
	defer deadline.Stop()
	for len(*batch) < MaxBatch {
		select {
		case in := <-l.inputs:
			if in.src == fromSched && in.conn == c && in.err == nil && schedproto.IsSyncAnswer(in.msg, seq) {
				return true
			}
			*batch = append(*batch, in)
			*results = l.apply(tx, []input{in}, nil, *results)
		case <-deadline.C:
			return false
		}
	}
	return false
}

// Bounds of one turn's exchange with the scheduler of this process.
const (
	syncWait        = 5 * time.Millisecond
	maxExchanges    = 8
	maxExchangeMsgs = 64
)

// dropSched gives up the scheduler connection after a failed commit that
// it heard of before the commit: its memory is ahead of the store. The job
// manager suspends scheduling (RFC 27), the connection is closed so that
// a new scheduler starts and is told the committed state by hello, and
// the messages of the old one, in batch or still to come, are void.
func (l *Loop) dropSched(batch []input) []input {
	c := l.sched.currentConn()
	if c == nil {
		return batch
	}
	l.dropped = c
	l.jm.SchedDisconnected()
	c.Close()
	kept := batch[:0]
	for _, in := range batch {
		if in.src != fromSched || in.conn != c {
			kept = append(kept, in)
		}
	}
	return kept
}

// restartSched stops the scheduler whose ready the committed turn
// refused, once the refusal is sent, so that a new one is started (RFC 27
// gives it a fresh hello). Its messages meanwhile are void, as a dropped
// one's. Closing a command's connection waits for the process to end, so
// it is done beside the loop.
func (l *Loop) restartSched() {
	c := l.restart
	l.restart = nil
	if c == nil || c != l.sched.currentConn() {
		return
	}
	l.dropped = c
	l.sched.breach(c)
	go c.Close()
}

// linger bounds the wait of a turn with nothing to send for more input
// (see try). On a loaded machine a short job's finish comes a few
// milliseconds after its start: at 2 ms one turn in ten committed the
// starts alone (1.26 fdatasyncs per job of 1,000 `true` jobs), at 5 ms
// their finishes join them (1.14). Nothing waits on such a commit: the
// job runs meanwhile, and a turn with anything to send or answer ends
// the wait at once.
const linger = 5 * time.Millisecond

// apply handles inputs and runs requests in the turn's transaction, then
// lets the job manager schedule; results gets the requests' results.
func (l *Loop) apply(tx *store.Tx, batch []input, calls []Call, results []Result) []Result {
	for _, in := range batch {
		l.handle(tx, in)
	}
	for _, r := range calls {
		// An operation reads the summaries as the turn has left them.
		l.saveSummaries(tx)
		v, err := r.Op(tx, l.jm)
		results = append(results, Result{Value: v, Err: err})
	}
	l.jm.Schedule(tx)
	l.saveSummaries(tx)
	return results
}

// saveSummaries stores the listing summaries of the jobs the turn has
// changed so far: once each, however many events they got (see
// jobmgr.DeferSummaries).
func (l *Loop) saveSummaries(tx *store.Tx) {
	if err := l.jm.SaveSummaries(tx); err != nil {
		l.log.Error("saving job summaries", "err", err)
	}
}

func (l *Loop) handle(tx *store.Tx, in input) {
	switch in.src {
	case fromSched:
		if in.conn != nil && in.conn == l.dropped && in.err == nil {
			return // void: see dropSched
		}
		if in.err == nil && in.msg.Topic == schedproto.TopicSync {
			return // the answer to a sync that was not awaited in time
		}
		var bad *wire.BadMessageError
		if errors.As(in.err, &bad) {
			if in.conn != nil && in.conn == l.dropped {
				return
			}
			// A line that does not read: answered on its topic when it
			// has one, and the scheduler suspended until its next hello.
			l.jm.SchedUnreadable(bad.Topic, bad.Err)
			l.log.Error("scheduler broke the protocol; suspended until its next hello", "err", bad.Err, "message", bad.Line)
			return
		}
		if in.err != nil {
			if in.conn == nil || in.conn != l.dropped {
				// A dropped connection's end was brought about, and
				// said, by the loop.
				l.log.Warn("scheduler disconnected", "err", in.err)
			}
			l.jm.SchedDisconnected()
			return
		}
		err := l.jm.SchedMessage(tx, in.msg)
		switch {
		case err == nil:
		case errors.Is(err, jobmgr.ErrUnknownMethod):
			l.log.Warn("scheduler asked for an unknown method; answered ENOSYS", "err", err, "message", logLine(in.msg))
		case in.msg.Type == wire.Request && in.msg.Topic == schedproto.TopicReady:
			// A scheduler whose ready is refused cannot be served (it
			// has not said how it wants its requests), and left alone
			// it would wait for ever: it is answered, then stopped and
			// started again, to begin anew with a fresh hello.
			l.log.Error("scheduler's ready refused; restarting it", "err", err, "message", logLine(in.msg))
			l.restart = in.conn
		default:
			l.log.Error("scheduler broke the protocol; suspended until its next hello", "err", err, "message", logLine(in.msg))
		}
	case fromTimer:
		if err := l.jm.Tick(tx); err != nil {
			l.log.Error("dependencies", "err", err)
		}
	case fromRetain:
		if err := l.jm.Retain(tx); err != nil {
			l.log.Error("retention", "err", err)
		}
	case fromExec:
		if in.err != nil {
			l.log.Warn("exec service disconnected", "err", in.err)
			l.jm.ExecDisconnected()
			return
		}
		if cycletrace.Enabled {
			traceExec(cycletrace.LoopEndIn, in.msg, "release")
		}
		if in.msg.Topic == execproto.TopicHostDrain && in.msg.Type == wire.Request {
			// A host the exec service cannot reach, or reaches again:
			// drained or undrained in this turn, by the drain write.
			var d execproto.HostDrain
			m, err := in.msg.Encoded()
			if err == nil {
				err = json.Unmarshal(m.Payload, &d)
			}
			if err != nil {
				l.log.Error("exec service: a host drain that does not read", "err", err)
				return
			}
			if err := writes.HostDrain(&writes.Turn{Tx: tx, JM: l.jm}, d); err != nil {
				l.log.Error("exec service: host drain", "host", d.Host, "drain", d.Drain, "err", err)
			}
			return
		}
		if err := l.jm.ExecMessage(tx, in.msg); err != nil {
			l.log.Error("exec service", "err", err)
		}
	}
}

// logLine is a scheduler's message as it came, short enough for one log
// line.
func logLine(m wire.Message) string {
	if e, err := m.Encoded(); err == nil {
		m = e // a typed message (the built-in scheduler's) shows its payload
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m.Topic
	}
	const most = 300
	if len(b) > most {
		return string(b[:most]) + "..."
	}
	return string(b)
}

// Changed returns a channel that is closed after the next committed turn
// that posts job events: followers wait on it, then read the store.
func (l *Loop) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// JobChanged returns a channel that is closed after the next committed
// turn that posts events of job id, so a follower of one job among
// thousands wakes only for its own.
func (l *Loop) JobChanged(id fluid.ID) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.jobWatch[id]
	if !ok {
		ch = make(chan struct{})
		l.jobWatch[id] = ch
	}
	return ch
}

// flush sends what the committed turn produced. The exec service's
// messages go first: a job's start is the one thing on the way from an end
// to the next fork, and the followers woken last (wait, eventlog --follow)
// would take the processor from it.
// exceptionLogMax is how many of one turn's exceptions are logged a line
// each; the rest are counted in one line.
const exceptionLogMax = 100

func (l *Loop) flush() {
	out := l.jm.Take()
	for _, m := range out.Exec {
		if c := l.exec.currentConn(); c != nil {
			if cycletrace.Enabled {
				traceExec(cycletrace.LoopStartOut, m, "")
			}
			if err := c.Send(m); err != nil {
				l.log.Warn("sending to the exec service", "topic", m.Topic, "err", err)
			}
		}
	}
	for _, m := range out.Sched {
		if c := l.sched.currentConn(); c != nil {
			if err := c.Send(m); err != nil {
				l.log.Warn("sending to the scheduler", "topic", m.Topic, "err", err)
			}
		}
	}
	if len(out.Purged) > 0 && l.purged != nil {
		l.purged(out.Purged)
	}
	if r := out.SchedReady; r != nil {
		mode := r.Mode
		if r.Mode == schedproto.ModeLimited {
			mode += "=" + strconv.Itoa(r.Limit)
		}
		l.log.Info("scheduler ready", "mode", mode)
		l.sched.healthy()
	}
	for i, x := range out.Exceptions {
		if i == exceptionLogMax {
			// The rest of a turn that raised many (a cancel of every
			// job): each is in its job's eventlog, and a line each
			// was a fifth of a 100,000-job cancel's CPU and 15 MB of log.
			rest := out.Exceptions[i:]
			l.log.Info("job exceptions", "more", len(rest), "first", rest[0].ID.String(), "last", rest[len(rest)-1].ID.String())
			break
		}
		l.log.Info("job exception", "id", x.ID.String(), "type", x.Type, "severity", x.Severity, "note", x.Note)
	}
	if len(out.Changed) > 0 || out.Reservations {
		l.mu.Lock()
		close(l.changed)
		l.changed = make(chan struct{})
		for _, id := range out.Changed {
			if ch, ok := l.jobWatch[id]; ok {
				close(ch)
				delete(l.jobWatch, id)
			}
		}
		l.mu.Unlock()
	}
}

// traceExec marks step s of the job an exec message is about: a start
// request (typ "") or a start response of type typ. Only in a build that
// marks the cycle (internal/cycletrace).
func traceExec(s cycletrace.Step, m wire.Message, typ string) {
	var p struct {
		ID   fluid.ID `json:"id"`
		Type string   `json:"type"`
	}
	if json.Unmarshal(m.Payload, &p) == nil && p.Type == typ {
		cycletrace.At(s, uint64(p.ID))
	}
}
