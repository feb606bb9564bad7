package exec

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/launcher"
	"github.com/fluxq/fluxq/internal/wire"
)

// newHostRig runs the router over one agent per host (as a
// launcher.HostLauncher connects them), host i being "n<i>".
func newHostRig(t *testing.T, hellos ...agentproto.Hello) (*rig, execproto.Hello) {
	r := &rig{t: t, done: make(chan error, 1)}
	fl := &fakeLauncher{}
	for i, h := range hellos {
		ours, theirs := wire.Pipe()
		host := fmt.Sprintf("n%d", i)
		fl.agents = append(fl.agents, &launcher.Agent{Conn: ours, Hello: h, Name: host, Hosts: []string{host}})
		r.agents = append(r.agents, &end{t: t, name: host, c: theirs})
	}
	jmEnd, svcEnd := wire.Pipe()
	r.jm = &end{t: t, name: "job manager", c: jmEnd}
	go func() { r.done <- Run(svcEnd, Options{Launcher: fl, KillGrace: 2 * time.Second}) }()
	t.Cleanup(func() { jmEnd.Close() })
	h, err := execproto.DecodeHello(r.jm.expect(execproto.TopicHello, wire.Request))
	if err != nil {
		t.Fatal(err)
	}
	r.jm.send(wire.NewResponse(execproto.TopicHello, nil))
	return r, h
}

// rOf is an R of one core per rank on hosts n<first>..., 1 GiB each.
func rOf(hosts ...int) json.RawMessage {
	var lite, names string
	for i, h := range hosts {
		if i > 0 {
			lite += ","
			names += ","
		}
		lite += fmt.Sprintf(`{"rank":"%d","children":{"core":"0"},"memory":1073741824}`, h)
		names += fmt.Sprintf("n%d", h)
	}
	return json.RawMessage(`{"version":1,"execution":{"R_lite":[` + lite + `],"nodelist":[` + quoteEach(names) + `],"starttime":0,"expiration":0}}`)
}

func quoteEach(csv string) string {
	out := ""
	start := 0
	for i := 0; i <= len(csv); i++ {
		if i == len(csv) || csv[i] == ',' {
			if out != "" {
				out += ","
			}
			out += `"` + csv[start:i] + `"`
			start = i + 1
		}
	}
	return out
}

func (r *rig) startR(id fluid.ID, R json.RawMessage, reattach bool) {
	r.jm.send(wire.NewRequest("job-exec.start", execproto.Start{ID: id, Jobspec: json.RawMessage(`{}`), Reattach: reattach, R: R}))
}

// A job on hosts n0, n1 and n3 of four is started on those three agents,
// each with the whole R, its own rank and its ranks' memory; the job
// manager sees one start once all three started, one finish with the
// worst status once all finished, one final release; kills and acks go
// to every part.
func TestSplitByHost(t *testing.T) {
	r, _ := newHostRig(t, agentproto.Hello{Build: "b"}, agentproto.Hello{Build: "b"}, agentproto.Hello{Build: "b"}, agentproto.Hello{Build: "b"})
	R := rOf(0, 1, 3)
	r.startR(5, R, false)
	for i, want := range map[int]string{0: "0", 1: "1", 3: "3"} {
		s := r.expectStart(i, 5)
		if s.Ranks != want || s.Memory != 1<<30 || string(s.R) != string(R) {
			t.Errorf("agent %d: ranks %q memory %d R %s, want ranks %q, 1 GiB, the whole R", i, s.Ranks, s.Memory, s.R, want)
		}
	}
	r.respond(0, 5, execproto.TypeStart, nil)
	r.respond(3, 5, execproto.TypeStart, nil)
	r.respond(1, 5, execproto.TypeStart, nil)
	r.expectResponse(5, execproto.TypeStart)
	r.jm.send(wire.NewRequest("job-exec.kill", execproto.Kill{ID: 5, Signal: 15}))
	for _, i := range []int{0, 1, 3} {
		r.agents[i].expect(agentproto.TopicKill, wire.Request)
	}
	for i, status := range map[int]int{0: 0, 1: 15, 3: 2 << 8} {
		r.respond(i, 5, execproto.TypeFinish, execproto.Finish{Status: status, Usage: &execproto.Usage{UserCPU: 1, MaxRSS: int64(i)}})
		r.respond(i, 5, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	}
	_, data, err := execproto.DecodeResponse(r.jm.expect("job-exec.start", wire.Response))
	f, ok := data.(*execproto.Finish)
	if err != nil || !ok || f.Status != 2<<8 || f.Usage == nil || f.Usage.UserCPU != 3 || f.Usage.MaxRSS != 3 {
		t.Fatalf("finish = %#v %#v, %v; want status 512, 3 s of CPU, max rss 3", data, f.Usage, err)
	}
	if rel := r.expectResponse(5, execproto.TypeRelease); string(rel.Data) == "" {
		t.Fatal("release without data")
	}
	r.ack(5)
	for _, i := range []int{0, 1, 3} {
		r.expectAck(i, 5)
	}
}

// A part refused (an exception, then its release) while the others
// started: the job manager has the exception, one start, the finish of
// the started parts and one release.
func TestSplitPartRefused(t *testing.T) {
	r, _ := newHostRig(t, agentproto.Hello{Build: "b"}, agentproto.Hello{Build: "b"})
	r.startR(6, rOf(0, 1), false)
	r.expectStart(0, 6)
	r.expectStart(1, 6)
	r.respond(1, 6, execproto.TypeException, execproto.Exception{Type: "exec", Note: "no such user"})
	r.respond(1, 6, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	r.expectResponse(6, execproto.TypeException)
	r.respond(0, 6, execproto.TypeStart, nil)
	r.expectResponse(6, execproto.TypeStart)
	r.respond(0, 6, execproto.TypeFinish, execproto.Finish{Status: 9})
	r.respond(0, 6, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	r.expectResponse(6, execproto.TypeFinish)
	r.expectResponse(6, execproto.TypeRelease)
}

// A job on a host no agent was reached for runs nowhere: a node-failure
// exception and the release, no start sent to any agent.
func TestSplitMissingHost(t *testing.T) {
	r, _ := newHostRig(t, agentproto.Hello{Build: "b"})
	r.startR(7, rOf(0, 2), false)
	e := r.expectResponse(7, execproto.TypeException)
	if want := `{"severity":0,"type":"node-failure","note":"no exec agent reached on host n2"}`; string(e.Data) != want {
		t.Errorf("exception %s, want %s", e.Data, want)
	}
	r.expectResponse(7, execproto.TypeRelease)
	r.startR(8, rOf(0), false)
	if s := r.expectStart(0, 8); s.Ranks != "0" {
		t.Errorf("ranks %q", s.Ranks)
	}
}

// The hosts' hellos: a job held on two hosts is named once among the
// ended, and a reattach goes to both.
func TestSplitHelloHeld(t *testing.T) {
	r, h := newHostRig(t, agentproto.Hello{Build: "b", Ended: []fluid.ID{9}}, agentproto.Hello{Build: "b", Running: []fluid.ID{9}})
	if len(h.Ended) != 1 || h.Ended[0] != 9 {
		t.Fatalf("ended = %v, want [9]", h.Ended)
	}
	r.startR(9, rOf(0, 1), true)
	r.expectStart(0, 9)
	r.expectStart(1, 9)
}

// A host whose ranks hold no task of the job (its agent starts nothing,
// as flux-shell on a rank with no task, and ends at once with status 0,
// before the other host has even started): the job manager sees one
// start, once the host with the task started, and one finish, with that
// task's status, not the empty part's 0.
func TestSplitHostWithoutTask(t *testing.T) {
	r, _ := newHostRig(t, agentproto.Hello{Build: "b"}, agentproto.Hello{Build: "b"})
	r.startR(10, rOf(0, 1), false)
	r.expectStart(0, 10)
	r.expectStart(1, 10)
	r.respond(1, 10, execproto.TypeStart, nil)
	r.respond(1, 10, execproto.TypeFinish, execproto.Finish{Status: 0})
	r.respond(1, 10, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	r.respond(0, 10, execproto.TypeStart, nil)
	r.expectResponse(10, execproto.TypeStart)
	r.respond(0, 10, execproto.TypeFinish, execproto.Finish{Status: 3 << 8})
	r.respond(0, 10, execproto.TypeRelease, execproto.Release{Ranks: "all", Final: true})
	_, data, err := execproto.DecodeResponse(r.jm.expect("job-exec.start", wire.Response))
	if f, ok := data.(*execproto.Finish); err != nil || !ok || f.Status != 3<<8 {
		t.Fatalf("finish = %#v, %v; want status 768", data, err)
	}
	r.expectResponse(10, execproto.TypeRelease)
}
