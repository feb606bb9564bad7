package jobmgr

import (
	"os"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/schedproto"
	ops "github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/wire"
)

// protoRig is a manager with one job in a chosen protocol state.
func protoRig() (*Manager, *entry) {
	m := New(Config{})
	m.exec = execLink{up: true, service: "job-exec"}
	j := &job.Job{ID: 7, UserID: 100, Priority: 16, Exception: &job.Exception{Type: "cancel", Severity: 0}}
	e := &entry{rec: &ops.Record{Job: j}}
	m.active[e.id()] = e
	return m, e
}

// sentTopic is the topic of the one message a move sent, "ack" for an
// acknowledgement waiting for the commit, "" for none.
func sentTopic(t *testing.T, m *Manager) string {
	t.Helper()
	var msgs []wire.Message
	msgs = append(msgs, m.out.Sched...)
	msgs = append(msgs, m.out.Exec...)
	n := len(msgs) + len(m.out.acks)
	if n > 1 {
		t.Fatalf("a move sent %d messages", n)
	}
	switch {
	case len(m.out.acks) == 1:
		return "ack"
	case len(msgs) == 1:
		return msgs[0].Topic
	}
	return ""
}

var sendTopics = map[send]string{
	sendNothing:    "",
	sendAlloc:      schedproto.TopicAlloc,
	sendCancel:     schedproto.TopicCancel,
	sendPrioritize: schedproto.TopicPrioritize,
	sendFree:       schedproto.TopicFree,
	sendStart:      execproto.Topic("job-exec", execproto.MethodStart),
	sendNotice:     execproto.Topic("job-exec", execproto.MethodException),
	sendAck:        "ack",
}

// The manager's own events, which it may send; the rest are the peers'.
func allocOurs(ev allocEvent) bool { return ev <= allocSendFree }
func execOurs(ev execEvent) bool   { return ev <= execSendNotice }

// Every cell of the RFC 27 table: each listed move is made and sends what
// it says; every other state and event pair is refused, changing nothing
// and sending nothing, and a scheduler's message refused is a protocol
// error.
func TestAllocMoves(t *testing.T) {
	legal := map[[2]uint8]bool{}
	for _, r := range allocRows {
		k := [2]uint8{uint8(r.from), uint8(r.ev)}
		if legal[k] {
			t.Errorf("two rows for %s on %s", r.from, r.ev)
		}
		legal[k] = true
	}
	for s := allocState(0); s < nAllocStates; s++ {
		for ev := allocEvent(0); ev < nAllocEvents; ev++ {
			m, e := protoRig()
			e.alloc = s
			isLegal := legal[[2]uint8{uint8(s), uint8(ev)}]
			if !allocOurs(ev) && ev != allocLost {
				if err := heardAlloc(e, e.id(), ev, "sched.alloc"); (err == nil) != isLegal {
					t.Errorf("%s on %s: heard with error %v; legal %v", s, ev, err, isLegal)
				}
			}
			ok := m.allocGo(e, ev)
			topic := sentTopic(t, m)
			if !isLegal {
				if ok || e.alloc != s || topic != "" {
					t.Errorf("%s on %s: made a move to %s sending %q; want it refused", s, ev, e.alloc, topic)
				}
				continue
			}
			mv := allocMoves[s][ev]
			if !ok || e.alloc != mv.to || topic != sendTopics[mv.send] {
				t.Errorf("%s on %s: ok %v, to %s, sent %q; want to %s, sent %q", s, ev, ok, e.alloc, topic, mv.to, sendTopics[mv.send])
			}
		}
	}
	// A response for a job that is not active is an error too.
	if heardAlloc(nil, 7, allocGranted, "sched.alloc") == nil {
		t.Error("a response for no active job was heard")
	}
}

// TestExecMoves is TestAllocMoves for the RFC 32 table.
func TestExecMoves(t *testing.T) {
	legal := map[[2]uint8]bool{}
	for _, r := range execRows {
		k := [2]uint8{uint8(r.from), uint8(r.ev)}
		if legal[k] {
			t.Errorf("two rows for %s on %s", r.from, r.ev)
		}
		legal[k] = true
	}
	for s := execState(0); s < nExecStates; s++ {
		for ev := execEvent(0); ev < nExecEvents; ev++ {
			m, e := protoRig()
			e.exec = s
			isLegal := legal[[2]uint8{uint8(s), uint8(ev)}]
			if !execOurs(ev) && ev != execLost {
				if err := heardExec(e, e.id(), ev, "job-exec.start"); (err == nil) != isLegal {
					t.Errorf("%s on %s: heard with error %v; legal %v", s, ev, err, isLegal)
				}
			}
			ok := m.execGo(e, ev)
			topic := sentTopic(t, m)
			if !isLegal {
				if ok || e.exec != s || topic != "" {
					t.Errorf("%s on %s: made a move to %s sending %q; want it refused", s, ev, e.exec, topic)
				}
				continue
			}
			mv := execMoves[s][ev]
			if !ok || e.exec != mv.to || topic != sendTopics[mv.send] {
				t.Errorf("%s on %s: ok %v, to %s, sent %q; want to %s, sent %q", s, ev, ok, e.exec, topic, mv.to, sendTopics[mv.send])
			}
		}
	}
	if heardExec(nil, 7, execStarted, "job-exec.start") == nil {
		t.Error("a response for no active job was heard")
	}
}

// A start from a detached shell reattaches it if its start was
// committed, or if the job is past RUN (it must not start now); from
// none it is a first start.
func TestStartReattach(t *testing.T) {
	for _, tc := range []struct {
		from    execState
		state   job.State
		started bool
		want    bool
	}{
		{execNone, job.Run, false, false},
		{execDetached, job.Run, false, false},
		{execDetached, job.Run, true, true},
		{execDetached, job.Cleanup, false, true},
		{execDetached, job.Cleanup, true, true},
	} {
		m, e := protoRig()
		e.exec = tc.from
		e.j().State = tc.state
		e.j().Started = tc.started
		m.execGo(e, execSendStart)
		s, err := execproto.DecodeStart(m.out.Exec[0])
		if err != nil || s.Reattach != tc.want {
			t.Errorf("start from %s, started %v: reattach %v, %v; want %v", tc.from, tc.started, s.Reattach, err, tc.want)
		}
	}
}

// A move that changes the state copies the job into the turn's
// checkpoint first, so a failed commit puts the state back.
func TestMoveRestored(t *testing.T) {
	m, e := protoRig()
	var c Checkpoint
	m.Save(&c)
	m.allocGo(e, allocSendAlloc)
	m.allocGo(e, allocSendCancel)
	if e.alloc != allocCanceling {
		t.Fatalf("alloc = %s, want canceling", e.alloc)
	}
	if err := m.Restore(nil, &c); err != nil {
		t.Fatal(err)
	}
	if e.alloc != allocIdle {
		t.Errorf("after Restore alloc = %s, want idle", e.alloc)
	}
}

// The tables drawn in docs/architecture.md and the package comment are
// the code's (JOBMGR_DRAW=1 prints them).
func TestTablesDrawn(t *testing.T) {
	tables := [][]string{drawAlloc(), drawExec()}
	if os.Getenv("JOBMGR_DRAW") != "" {
		for _, lines := range tables {
			t.Log("\n" + strings.Join(lines, "\n"))
		}
	}
	for _, file := range []string{"../../docs/architecture.md", "jobmgr.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := squeeze(string(b))
		for _, lines := range tables {
			for _, l := range lines {
				if !strings.Contains(text, squeeze(l)) {
					t.Errorf("%s lacks the table line %q", file, l)
				}
			}
		}
	}
}

// squeeze makes each run of spaces one, so column widths do not matter.
func squeeze(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " \x00 ")), " ")
}

// draw renders a table as a Markdown one: a row per event, a column per
// state, and in each cell the state it moves to and what it sends, or
// "-" for no move.
func draw(head string, states, events []string, cell func(s, ev int) (to, sent string, ok bool)) []string {
	rows := [][]string{append([]string{head}, states...)}
	for ev, name := range events {
		row := []string{name}
		for s := range states {
			to, sent, ok := cell(s, ev)
			switch {
			case !ok:
				row = append(row, "-")
			case sent != "":
				row = append(row, to+" ("+sent+")")
			default:
				row = append(row, to)
			}
		}
		rows = append(rows, row)
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var lines []string
	line := func(r []string) {
		var b strings.Builder
		for i, c := range r {
			b.WriteString("| " + c + strings.Repeat(" ", width[i]-len(c)) + " ")
		}
		lines = append(lines, b.String()+"|")
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i, w := range width {
		sep[i] = strings.Repeat("-", w)
	}
	line(sep)
	for _, r := range rows[1:] {
		line(r)
	}
	return lines
}

func drawAlloc() []string {
	return draw("RFC 27 event", allocStateNames[:], allocEventNames[:], func(s, ev int) (string, string, bool) {
		mv := allocMoves[s][ev]
		return mv.to.String(), mv.send.String(), mv.ok
	})
}

func drawExec() []string {
	return draw("RFC 32 event", execStateNames[:], execEventNames[:], func(s, ev int) (string, string, bool) {
		mv := execMoves[s][ev]
		return mv.to.String(), mv.send.String(), mv.ok
	})
}

// BenchmarkMove is the cost of a move that sends nothing, the table's own
// share of a turn: a scheduler lost and found for a job asking.
func BenchmarkMove(b *testing.B) {
	m, e := protoRig()
	b.ReportAllocs()
	for b.Loop() {
		e.alloc = allocAsked
		m.allocGo(e, allocLost)
		e.exec = execOpen
		m.execGo(e, execLost)
	}
}
