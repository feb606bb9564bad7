package agent

// Tests of the agent's side of agentproto, over the real socket and the
// real journal, with a runner whose jobs end when the test says: what
// each conversation must look like, whatever the jobs do. agent_test.go
// runs real jobs with the real runner.

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/runner"
	"github.com/fluxq/fluxq/internal/wire"
)

// scripted is a runner whose jobs run until the test ends them; Terminate
// ends one with SIGTERM's status.
type scripted struct {
	mu       sync.Mutex
	events   func(runner.Event)
	launches map[fluid.ID]int
	adopted  []fluid.ID
	signals  map[fluid.ID][]syscall.Signal
	// onLaunch, if set, runs inside Launch (events sent before it
	// returns).
	onLaunch func(id fluid.ID)
	failPrep error
	// strays are the cgroups Strays finds holding processes; limits, the
	// strays given a limit.
	strays []runner.Record
	limits map[fluid.ID]runner.Spec
	// onPrepare, if set, makes a job's record (or panics) in Prepare;
	// discarded counts Discard's calls.
	onPrepare func(sp runner.Spec) *runner.Record
	discarded map[fluid.ID]int
	shared    string // the last SetSharedCPUs
}

func useScripted(t *testing.T) *scripted {
	s := &scripted{launches: map[fluid.ID]int{}, signals: map[fluid.ID][]syscall.Signal{}}
	old := newRunner
	newRunner = func(opts runner.Options) (jobRunner, error) {
		s.mu.Lock()
		s.events = opts.Events
		s.mu.Unlock()
		return s, nil
	}
	t.Cleanup(func() { newRunner = old })
	return s
}

func (s *scripted) SetSharedCPUs(cpus idset.Set) {
	s.mu.Lock()
	s.shared = cpus.String()
	s.mu.Unlock()
}

func (s *scripted) Containment() string          { return "scripted" }
func (s *scripted) Memory() (how, whyNot string) { return "", "scripted" }
func (s *scripted) Prepare(sp runner.Spec) (*runner.Record, error) {
	if s.failPrep != nil {
		return nil, s.failPrep
	}
	if s.onPrepare != nil {
		if rec := s.onPrepare(sp); rec != nil {
			return rec, nil
		}
	}
	return &runner.Record{ID: sp.ID, UserID: sp.UserID, KillGrace: sp.KillGrace}, nil
}
func (s *scripted) Discard(id fluid.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.discarded == nil {
		s.discarded = map[fluid.ID]int{}
	}
	s.discarded[id]++
}
func (s *scripted) Launch(rec *runner.Record, sp runner.Spec) error {
	s.mu.Lock()
	s.launches[rec.ID]++
	f := s.onLaunch
	s.mu.Unlock()
	if f != nil {
		f(rec.ID)
	}
	return nil
}
func (s *scripted) Adopt(rec runner.Record) {
	s.mu.Lock()
	s.adopted = append(s.adopted, rec.ID)
	s.mu.Unlock()
}
func (s *scripted) Strays(held func(fluid.ID) bool, named bool) []runner.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []runner.Record
	for _, r := range s.strays {
		if !held(r.ID) {
			out = append(out, r)
		}
	}
	return out
}
func (s *scripted) SetExpiration(fluid.ID, time.Time) (runner.Record, bool) {
	return runner.Record{}, false
}
func (s *scripted) Limit(id fluid.ID, sp runner.Spec) (runner.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.strays {
		if r.ID == id {
			if s.limits == nil {
				s.limits = map[fluid.ID]runner.Spec{}
			}
			s.limits[id] = sp
			r.Expiration = time.Unix(1<<31, 0)
			return r, true
		}
	}
	return runner.Record{}, false
}
func (s *scripted) Signal(id fluid.ID, sig syscall.Signal) {
	s.mu.Lock()
	s.signals[id] = append(s.signals[id], sig)
	s.mu.Unlock()
}
func (s *scripted) Terminate(id fluid.ID) {
	s.Signal(id, syscall.SIGTERM)
	go s.end(id, runner.End{Status: int(syscall.SIGTERM), Known: true})
}
func (s *scripted) Close() {}

func (s *scripted) end(id fluid.ID, e runner.End) {
	s.mu.Lock()
	ev := s.events
	s.mu.Unlock()
	ev(runner.Event{ID: id, End: &e})
}

func (s *scripted) exception(id fluid.ID, typ, note string) {
	s.mu.Lock()
	ev := s.events
	s.mu.Unlock()
	ev(runner.Event{ID: id, Exception: &execproto.Exception{Type: typ, Note: note}})
}

func (s *scripted) launched(id fluid.ID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launches[id]
}

func TestStartFinishAck(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	h := p.hello()
	if h.Build != "b1" || h.PID != os.Getpid() || h.Containment != "scripted" || len(h.Running)+len(h.Ended) != 0 {
		t.Errorf("hello = %+v", h)
	}
	p.start(1, false, makeJobspec(t, "true"), makeR(t))
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	s.exception(1, "test", "something happened")
	s.end(1, runner.End{Status: 256, Known: true, Usage: agentproto.Usage{UserCPU: 1.5, SysCPU: 0.25, MaxRSS: 1 << 20}})
	rs := p.released(1, 5*time.Second)
	if diff := cmp.Diff([]string{"start", "exception", "finish", "release"}, types(rs)); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	f := finish(t, rs)
	if f.Status != 256 || f.Usage == nil || *f.Usage != (agentproto.Usage{UserCPU: 1.5, SysCPU: 0.25, MaxRSS: 1 << 20}) {
		t.Errorf("finish = %+v %+v", f, f.Usage)
	}
	if h := p.hello(); !slices.Equal(h.Ended, []fluid.ID{1}) || len(h.Running) != 0 {
		t.Errorf("hello before the ack = %+v, want job 1 ended", h)
	}
	p.send(agentproto.TopicAck, agentproto.Ack{IDs: []fluid.ID{1}})
	p.wait("the ack", 5*time.Second, func() bool { return true })
	deadline := time.Now().Add(5 * time.Second)
	for a.holds(1) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if h := p.hello(); len(h.Ended)+len(h.Running) != 0 {
		t.Errorf("hello after the ack = %+v, want nothing held", h)
	}
	if s.launched(1) != 1 {
		t.Errorf("launched %d times", s.launched(1))
	}
}

// Events the runner sends while Launch runs (a task that failed to start)
// follow the start response.
func TestEarlyEventsFollowStart(t *testing.T) {
	s := useScripted(t)
	s.onLaunch = func(id fluid.ID) {
		s.exception(id, "exec", "task 0: cannot run: no such file")
		s.end(id, runner.End{Status: 127 << 8, Known: true})
	}
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(5, false, makeJobspec(t, "nope"), makeR(t))
	rs := p.released(5, 5*time.Second)
	if diff := cmp.Diff([]string{"start", "exception", "finish", "release"}, types(rs)); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}

// A job that ends while no fluxsched is connected is reported, with the
// exceptions it had, to the next that takes it back; a second start for a
// held job never launches it again.
func TestTakeBack(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	js, r := makeJobspec(t, "sleep", "9"), makeR(t)
	p.start(1, false, js, r)
	p.start(2, false, js, r)
	p.wait("starts", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 && len(p.streamLocked(2)) == 1 })
	p.lc.Close()
	s.exception(1, "timeout", "resource allocation expired")
	s.end(1, runner.End{Status: 15, Known: true})

	q := dial(t, state, "b1")
	var h agentproto.Hello
	deadline := time.Now().Add(5 * time.Second)
	for {
		h = q.hello()
		if len(h.Ended) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(h.Ended, []fluid.ID{1}) || !slices.Equal(h.Running, []fluid.ID{2}) {
		t.Fatalf("hello = %+v, want 1 ended and 2 running", h)
	}
	q.start(1, true, js, r)
	q.start(2, false, js, r) // never saw its start: answered start again
	rs := q.released(1, 5*time.Second)
	if diff := cmp.Diff([]string{"exception", "finish", "release"}, types(rs)); diff != "" {
		t.Errorf("job 1 taken back (-want +got):\n%s", diff)
	}
	if e := exceptions(t, rs); len(e) != 1 || e[0].Type != "timeout" {
		t.Errorf("exceptions = %+v", e)
	}
	q.wait("job 2's start", 5*time.Second, func() bool { return len(q.streamLocked(2)) == 1 })
	s.end(2, runner.End{Status: 0, Known: true})
	if diff := cmp.Diff([]string{"start", "finish", "release"}, types(q.released(2, 5*time.Second))); diff != "" {
		t.Errorf("job 2 taken back (-want +got):\n%s", diff)
	}
	if s.launched(1) != 1 || s.launched(2) != 1 {
		t.Errorf("launches: %v, want one each", s.launches)
	}
}

// An agent that died (here: closed without ending its jobs) is replaced
// by one that takes its journal back: running jobs are watched again (the
// runner adopts them; their status is lost), ended ones are reported, and
// none is launched again.
func TestRestart(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	js, r := makeJobspec(t, "sleep", "9"), makeR(t)
	p.start(1, false, js, r)
	p.start(2, false, js, r)
	p.wait("starts", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 && len(p.streamLocked(2)) == 1 })
	s.end(2, runner.End{Status: 0, Known: true})
	p.released(2, 5*time.Second)
	a.Close()

	b := startAgent(t, state, "b1")
	_ = b
	if !slices.Equal(s.adopted, []fluid.ID{1}) {
		t.Errorf("adopted %v, want [1]", s.adopted)
	}
	q := dial(t, state, "b1")
	if h := q.hello(); !slices.Equal(h.Running, []fluid.ID{1}) || !slices.Equal(h.Ended, []fluid.ID{2}) {
		t.Errorf("hello = %+v, want 1 running, 2 ended", h)
	}
	s.end(1, runner.End{Known: false})
	q.start(1, true, js, r)
	q.start(2, true, js, r)
	rs := q.released(1, 5*time.Second)
	if diff := cmp.Diff([]string{"exception", "release"}, types(rs)); diff != "" {
		t.Errorf("job 1 (-want +got):\n%s", diff)
	}
	if e := exceptions(t, rs); len(e) != 1 || e[0].Type != "exec" || e[0].Note != NoteStatusLost {
		t.Errorf("job 1's exception = %+v", e)
	}
	if diff := cmp.Diff([]string{"finish", "release"}, types(q.released(2, 5*time.Second))); diff != "" {
		t.Errorf("job 2 (-want +got):\n%s", diff)
	}
	if s.launched(1) != 1 || s.launched(2) != 1 {
		t.Errorf("launches: %v, want one each", s.launches)
	}
}

// The journal of a dead agent of another build is merged, and its files
// removed; a start that reattaches a job of a dead agent finds it even
// before the periodic check would.
func TestAdoptDeadBuild(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	old := startAgent(t, state, "old")
	p := dial(t, state, "old")
	p.hello()
	js, r := makeJobspec(t, "sleep", "9"), makeR(t)
	p.start(7, false, js, r)
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(7)) == 1 })
	b := startAgent(t, state, "new")
	old.Close()
	dir := filepath.Join(state, agentproto.Dir)
	q := dial(t, state, "new")
	q.hello()
	q.start(7, true, js, r)
	deadline := time.Now().Add(5 * time.Second)
	for !b.holds(7) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.end(7, runner.End{Status: 0, Known: true})
	if diff := cmp.Diff([]string{"finish", "release"}, types(q.released(7, 5*time.Second))); diff != "" {
		t.Errorf("job 7 (-want +got):\n%s", diff)
	}
	if s.launched(7) != 1 {
		t.Errorf("job 7 launched %d times", s.launched(7))
	}
	for _, f := range []string{"old.journal", "old.sock", "old.pid"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", f, err)
		}
	}
}

func TestRetire(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t))
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	p.send(agentproto.TopicRetire, nil)
	p.start(2, false, makeJobspec(t, "true"), makeR(t))
	rs := p.released(2, 5*time.Second)
	if e := exceptions(t, rs); len(e) != 1 || e[0].Note != NoteRetiring || len(rs) != 2 {
		t.Errorf("a start while retiring got %v %+v", types(rs), e)
	}
	if h := p.hello(); !h.Retiring {
		t.Error("hello does not say retiring")
	}
	s.end(1, runner.End{Known: true})
	p.released(1, 5*time.Second)
	select {
	case <-a.ran:
		t.Fatal("exited before its end was acknowledged")
	case <-time.After(100 * time.Millisecond):
	}
	p.send(agentproto.TopicAck, agentproto.Ack{IDs: []fluid.ID{1}})
	if err := a.exited(t, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, agentproto.Dir)
	if left, _ := filepath.Glob(filepath.Join(dir, "b1.*")); len(left) != 0 {
		t.Errorf("a retired agent left %v", left)
	}
	if s.launched(2) != 0 {
		t.Error("a retiring agent launched a job")
	}
}

func TestStop(t *testing.T) {
	useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t))
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })

	o := dial(t, state, "b1") // fluxsched stop's connection
	m := o.call(agentproto.TopicStop, agentproto.Stop{})
	var we *wire.Error
	if err := m.Err(); !errors.As(err, &we) || we.Errstr != "1 job is running" {
		t.Errorf("stop without force = %v, want refused: 1 job is running", m.Err())
	}
	if m := o.call(agentproto.TopicStop, agentproto.Stop{Force: true}); m.IsError() {
		t.Fatalf("stop --force = %v", m.Err())
	}
	rs := p.released(1, 5*time.Second)
	if f := finish(t, rs); f.Status != int(syscall.SIGTERM) {
		t.Errorf("finish = %+v, want SIGTERM's", f)
	}
	if err := a.exited(t, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Its end was not acknowledged: the next agent reports it.
	startAgent(t, state, "b2")
	q := dial(t, state, "b2")
	if h := q.hello(); !slices.Equal(h.Ended, []fluid.ID{1}) {
		t.Errorf("next agent's hello = %+v, want job 1 ended", h)
	}
}

func TestCancelPermission(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t))
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	if n, msg := a.cancel(4242, 1); n != errPerm {
		t.Errorf("cancel by another user = %d %q, want EPERM", n, msg)
	}
	if n, msg := a.cancel(uint32(os.Geteuid()), 99); n != errNoEnt {
		t.Errorf("cancel of an unknown job = %d %q, want ENOENT", n, msg)
	}
	o := dial(t, state, "b1")
	if m := o.call(agentproto.TopicCancel, agentproto.Cancel{ID: 1}); m.IsError() {
		t.Fatalf("cancel = %v", m.Err())
	}
	p.released(1, 5*time.Second)
	if got := s.signals[1]; !slices.Equal(got, []syscall.Signal{syscall.SIGTERM}) {
		t.Errorf("signals = %v", got)
	}
}

func TestStateDirRemoved(t *testing.T) {
	defer func(d time.Duration) { checkInterval = d }(checkInterval)
	checkInterval = 50 * time.Millisecond
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(1, false, makeJobspec(t, "sleep", "9"), makeR(t))
	p.wait("start", 5*time.Second, func() bool { return len(p.streamLocked(1)) == 1 })
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := a.exited(t, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := s.signals[1]; !slices.Equal(got, []syscall.Signal{syscall.SIGTERM}) {
		t.Errorf("job's signals = %v, want it terminated", got)
	}
}

// A guest may send agent.cancel, nothing else: a hello from another uid
// does not take the agent over.
func TestOnlyOwnerSpeaks(t *testing.T) {
	useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	a.mu.Lock()
	a.uid = 4242 // as if the test were a guest
	a.mu.Unlock()
	p := dial(t, state, "b1")
	m := p.call(agentproto.TopicHello, agentproto.HelloRequest{})
	if !m.IsError() || m.Errnum != errPerm {
		t.Errorf("hello from a guest = %+v, want EPERM", m)
	}
	a.mu.Lock()
	cur := a.cur
	a.mu.Unlock()
	if cur != nil {
		t.Error("a guest's hello took the agent over")
	}
}

// A job the runner cannot prepare is answered with the runner's exception
// and the final release, and is not held.
func TestPrepareFails(t *testing.T) {
	s := useScripted(t)
	s.failPrep = &runner.Error{Type: "timeout", Note: "resource allocation expired"}
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(3, false, makeJobspec(t, "true"), makeR(t))
	rs := p.released(3, 5*time.Second)
	if e := exceptions(t, rs); len(rs) != 2 || len(e) != 1 || e[0] != (execproto.Exception{Type: "timeout", Note: "resource allocation expired"}) {
		t.Errorf("stream %v, exceptions %+v", types(rs), e)
	}
	if a.holds(3) || s.launched(3) != 0 {
		t.Error("a job that was not prepared is held or launched")
	}
}

// A burst of starts shares the journal's syncs: one per batch, not one
// per launch.
func TestBurstSharesSyncs(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	js, r := makeJobspec(t, "true"), makeR(t)
	const n = 500
	for i := fluid.ID(1); i <= n; i++ {
		p.start(i, false, js, r)
	}
	p.wait("every start", 30*time.Second, func() bool { return len(p.starts) == n })
	for i := fluid.ID(1); i <= n; i++ {
		s.end(i, runner.End{Known: true})
	}
	p.wait("every release", 30*time.Second, func() bool { return len(p.starts) == 3*n })
	syncs := a.jnl.Syncs()
	t.Logf("%d launches and %d ends took %d syncs", n, n, syncs)
	if syncs > n {
		t.Errorf("%d launches and %d ends took %d syncs, want them shared", n, n, syncs)
	}
}

// A start that is not agentproto's is refused with an error response,
// which fluxsched takes as the end of the registration, as RFC 32 says.
func TestBadStart(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	for _, payload := range []string{`{"id":1,"userid":0,"jobspec":{}}`, `{"id":"x","userid":0,"jobspec":{},"reattach":false}`, `[]`} {
		m := p.call(agentproto.TopicStart, json.RawMessage(payload))
		if m.Errnum != wire.EPROTO {
			t.Errorf("start %s answered %+v, want EPROTO", payload, m)
		}
	}
	if s.launched(1) != 0 {
		t.Error("a bad start was launched")
	}
}

// A start with reattach names a job fluxsched knows started (or must not
// start now): an agent that holds no record of it, nor finds one in a
// dead agent's journal, reports its status lost and never launches it.
func TestReattachUnknownIsNotLaunched(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	p.start(5, true, makeJobspec(t, "true"), makeR(t))
	rs := p.released(5, 5*time.Second)
	if e := exceptions(t, rs); len(e) != 1 || e[0].Note != NoteNoRecord || e[0].Severity != 0 || len(rs) != 2 {
		t.Errorf("reattach of an unknown job got %v %+v", types(rs), e)
	}
	if s.launched(5) != 0 {
		t.Error("a reattach of a job the agent never held launched it")
	}
}

// One job's start that goes wrong in the agent itself, a record that does
// not encode or a panic in the runner's Prepare or Launch, fails that job
// alone with an exception (issue 24: the agent panicked encoding a
// guest's record, and was restarted with every other job lost); the agent
// goes on, and the job beside them runs to its end.
func TestOneBadJobFailsAlone(t *testing.T) {
	s := useScripted(t)
	s.onPrepare = func(sp runner.Spec) *runner.Record {
		switch sp.ID {
		case 2:
			// Past year 9999: encoding/json refuses it.
			return &runner.Record{ID: sp.ID, Expiration: time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)}
		case 3:
			panic("a bug in Prepare")
		}
		return nil
	}
	s.onLaunch = func(id fluid.ID) {
		if id == 4 {
			panic("a bug in Launch")
		}
	}
	state := stateDir(t)
	a := startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	p.hello()
	js, r := makeJobspec(t, "true"), makeR(t)
	p.start(1, false, js, r) // a good job, running meanwhile
	p.wait("job 1's start", 5*time.Second, func() bool { return len(p.starts) >= 1 })
	for _, tc := range []struct {
		id   fluid.ID
		note string
	}{
		{2, "the exec agent cannot start the job: its record does not encode: "},
		{3, "the exec agent cannot start the job: a bug in Prepare"},
		{4, "the exec agent cannot start the job: a bug in Launch"},
	} {
		p.start(tc.id, false, js, r)
		rs := p.released(tc.id, 5*time.Second)
		e := exceptions(t, rs)
		if len(e) != 1 || !strings.HasPrefix(e[0].Note, tc.note) || e[0].Severity != 0 || e[0].Type != typeExec {
			t.Errorf("job %d: stream %v, exceptions %+v; want one fatal exec exception %q", tc.id, types(rs), e, tc.note)
		}
	}
	// After a panic, the clean-up runs on a goroutine of its own.
	var discarded map[fluid.ID]int
	var sigs []syscall.Signal
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		discarded, sigs = maps.Clone(s.discarded), slices.Clone(s.signals[4])
		s.mu.Unlock()
		if discarded[3] > 0 && len(sigs) > 0 {
			break
		}
	}
	if discarded[2] != 1 || discarded[3] != 1 || discarded[1] != 0 || discarded[4] != 0 {
		t.Errorf("discarded %v, want jobs 2 and 3 once (prepared, never launched)", discarded)
	}
	if a.holds(2) || a.holds(3) || s.launched(2) != 0 || s.launched(3) != 0 {
		t.Error("a job whose start failed is held or launched")
	}
	if len(sigs) == 0 {
		t.Error("what job 4's broken launch may have started was not terminated")
	}
	// The agent serves on: the good job ends as ever, and a new one runs.
	s.end(1, runner.End{Known: true})
	if rs := p.released(1, 5*time.Second); !slices.Equal(types(rs), []string{"start", "finish", "release"}) {
		t.Errorf("job 1: stream %v", types(rs))
	}
	p.start(5, false, js, r)
	p.wait("job 5's start", 5*time.Second, func() bool { return s.launched(5) == 1 })
	s.end(5, runner.End{Known: true})
	if rs := p.released(5, 5*time.Second); !slices.Equal(types(rs), []string{"start", "finish", "release"}) {
		t.Errorf("job 5: stream %v", types(rs))
	}
}

// A start's memory limit reaches the runner's Spec; the hello, and the
// agents' folder's memory-limits file, say whether the runner enforces
// it (the scripted runner does not).
func TestStartMemoryLimit(t *testing.T) {
	s := useScripted(t)
	got := make(chan uint64, 1)
	s.onPrepare = func(sp runner.Spec) *runner.Record {
		got <- sp.Memory
		return nil
	}
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	h := p.hello()
	if h.Memory != "" || h.MemoryNotEnforced != "scripted" {
		t.Errorf("hello memory = %q, not enforced %q", h.Memory, h.MemoryNotEnforced)
	}
	b, err := os.ReadFile(filepath.Join(state, agentproto.MemoryFile))
	if how, why, ok := agentproto.ParseMemoryStatus(b); err != nil || !ok || how != "" || why != "scripted" {
		t.Errorf("%s = %q (%v)", agentproto.MemoryFile, b, err)
	}
	p.send(agentproto.TopicStart, agentproto.Start{Start: execproto.Start{ID: 1, UserID: uint32(os.Geteuid()),
		Jobspec: makeJobspec(t, "true"), R: makeR(t)}, KillGrace: 1, Memory: 64 << 20})
	select {
	case n := <-got:
		if n != 64<<20 {
			t.Errorf("Spec.Memory = %d, want %d", n, 64<<20)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no Prepare")
	}
}

// TestHelloSharedCPUs: a hello's shared CPUs reach the runner, a later
// hello's replace them, and a hello whose set does not parse is refused
// and changes nothing.
func TestHelloSharedCPUs(t *testing.T) {
	s := useScripted(t)
	state := stateDir(t)
	startAgent(t, state, "b1")
	p := dial(t, state, "b1")
	shared := func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.shared
	}
	for _, tc := range []struct {
		send, want string
		refused    bool
	}{
		{"0-1", "0-1", false},
		{"1,3", "1,3", false},
		{"3,1", "1,3", true}, // RFC 22: ranges in order
		{"zero", "1,3", true},
		{"", "", false}, // an older fluxsched's: none
	} {
		m := p.call(agentproto.TopicHello, agentproto.HelloRequest{Build: "b1", SharedCPUs: tc.send})
		if refused := m.Errnum == wire.EPROTO; refused != tc.refused {
			t.Errorf("hello with shared CPUs %q: refused %v, want %v (%+v)", tc.send, refused, tc.refused, m)
		}
		if got := shared(); got != tc.want {
			t.Errorf("after a hello with %q: the runner's shared CPUs %q, want %q", tc.send, got, tc.want)
		}
	}
}
