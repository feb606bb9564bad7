// Package agentproto is the wire contract between fluxsched's exec service
// and an exec agent (`fluxsched agent`), the one long-lived process per
// machine that forks every job's tasks (docs/architecture.md, "The exec
// path"). It is RFC 32 shaped: the same start request and the same
// start, exception, finish and release responses, carried as wire
// messages in JSON lines over the agent's unix socket,
// <state>/agent/<build>.sock.
//
// Who may send what is decided by the peer's uid (SO_PEERCRED): hello,
// start, kill, exception, ack, retire and stop only from the agent's own
// uid (the instance owner); cancel and output also from the job's user. Any uid but
// the owner's and root's is let in only while it owns a job the agent
// holds, within caps (docs/architecture.md, "The exec agent's socket").
//
// The conversation, fluxsched's side first:
//
//	agent.hello     request; answered once with Hello: what the agent runs
//	                and which ends it still holds unacknowledged. A new
//	                hello takes the agent over from an earlier connection,
//	                which is closed.
//	agent.start     request, payload Start; answered by a stream of
//	                responses on topic agent.start whose payload is an
//	                execproto.Response (start, exception, finish, release,
//	                the final release last), exactly as RFC 32's
//	                <service>.start. A start for a job the agent already
//	                holds (running, or ended and not acknowledged) is that
//	                job taken back, never a second launch: with Reattach
//	                false it is answered start again, with Reattach true
//	                not; an end it holds is then reported.
//	agent.kill      notification, payload execproto.Kill: signal the job.
//	agent.expiration notification, payload execproto.Expiration: the job's
//	                time limit is now this; journaled with its record.
//	agent.exception notification, payload execproto.ExceptionNotice: a fatal
//	                exception; SIGTERM, then SIGKILL after the job's grace.
//	agent.ack       notification, payload Ack: fluxsched has committed these
//	                jobs' ends; the agent forgets them.
//	agent.retire    notification: take no new job; exit once every job has
//	                ended and been acknowledged (an agent of an older build).
//	agent.stop      request, payload Stop; answered with an empty response
//	                or an error (jobs still run and Force is false).
//	agent.cancel    request, payload Cancel, from the owner or the job's
//	                user (fluxq cancel with no fluxsched): answered empty,
//	                or an error. A connection the agent does not let in
//	                is answered with an error of agent.cancel, and closed.
//	agent.output    request, payload OutputRequest: part of a job's stdout
//	                or stderr in this machine's job folder (output.go);
//	                answered once, with the request's matchtag.
//
// A job's end is durable in the agent's journal before its finish is sent;
// until it is acknowledged it is reported again to every fluxsched that
// takes the job back (a start with Reattach true), so no end is lost, and
// since a job manager acknowledges only what it committed, none is applied
// twice.
package agentproto

import (
	"time"

	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// Topics of the agent's methods.
const (
	TopicHello = "agent.hello"
	TopicStart = "agent.start"
	TopicKill  = "agent.kill"
	// TopicExpiration: a running job's time limit changed.
	TopicExpiration = "agent.expiration"
	TopicException  = "agent.exception"
	TopicAck        = "agent.ack"
	TopicRetire     = "agent.retire"
	TopicStop       = "agent.stop"
	TopicCancel     = "agent.cancel"
)

// Dir is the agents' folder in a state directory: sockets, pid files and
// journals, written only by the instance owner.
const Dir = "agent"

// HelloRequest is the payload of agent.hello.
type HelloRequest struct {
	// Build is the asking fluxsched's build; an agent of another build
	// is retired by it.
	Build string `json:"build"`
	// IdleTimeout is the asking fluxsched's [exec] agent-idle-timeout, in
	// seconds: how long the agent waits, holding no job and with no
	// fluxsched connected, before it exits. Negative: never; 0 (absent,
	// as from a hello that is not fluxsched's exec service): the agent
	// keeps what it had.
	IdleTimeout float64 `json:"idle_timeout,omitempty"`
	// SharedCPUs are the CPUs of the agent's machine that more than one
	// of the hosts it serves names (an idset): a test cluster of local
	// hosts on the same cores (config.Config.SharedCPUs). A task whose
	// cores include one runs unbound (runner.Runner.SetSharedCPUs).
	// Empty (as from an older fluxsched): none.
	SharedCPUs string `json:"shared_cpus,omitempty"`
}

// Hello answers agent.hello.
type Hello struct {
	Build string `json:"build"`
	PID   int    `json:"pid"`
	// Host is the agent's machine's host name (what hostname prints
	// there): a launcher for other machines says by it which host it
	// reached. An older agent says none.
	Host string `json:"host,omitempty"`
	// Containment says how the agent keeps a job's processes together:
	// "cgroup v2", "cgroup v1 (pids)", or "subreaper".
	Containment string `json:"containment"`
	// Running are the jobs whose processes run.
	Running []fluid.ID `json:"running"`
	// Ended are the jobs whose end is journaled and not acknowledged.
	Ended []fluid.ID `json:"ended"`
	// Retiring is true once the agent takes no new job.
	Retiring bool `json:"retiring"`
	// Memory says how the agent enforces jobs' memory limits
	// (Start.Memory): "cgroup v2 (memory)" or "cgroup v1 (memory)"; it
	// is empty where they are not, and MemoryNotEnforced says why (the
	// limits are still scheduled: a job gets the memory it asked for,
	// but nothing stops it taking more). An agent older than memory
	// limits says neither.
	Memory            string `json:"memory,omitempty"`
	MemoryNotEnforced string `json:"memory_not_enforced,omitempty"`
}

// Start is the payload of agent.start: RFC 32's start request, with what
// the agent needs to run the job without asking again.
type Start struct {
	execproto.Start
	// KillGrace is the time from SIGTERM (SIGALRM at the time limit) to
	// SIGKILL, in seconds.
	KillGrace float64 `json:"kill_grace"`
	// Memory is the job's memory limit on the agent's host, in bytes
	// (0: none): the memory its R grants on the ranks the agent runs
	// (rset.Node.Memory). Where the agent has a memory controller the
	// job runs under it, and a job the OOM killer reached ends with
	// exception "oom" (severity 0).
	Memory uint64 `json:"memory,omitempty"`
	// Ranks are the ranks of R this agent runs (an idset), when the job
	// spans the hosts of several agents (a launcher.HostLauncher's, one
	// per host); empty: all of them, as the local launcher's one agent
	// does. R itself comes whole, so that the layout of tasks over its
	// ranks, and with it every task's global rank and the job's node and
	// task counts, is the same on every host.
	Ranks string `json:"ranks,omitempty"`
}

// Usage is what a job's processes consumed, from the agent's wait (rusage)
// or the job's cgroup. It travels in the finish response beside RFC 32's
// status, as "usage"; it is execproto's, since the job manager reads it.
type Usage = execproto.Usage

// Finish is the data of an agent's finish response: RFC 32's, with usage
// and when the job's processes ended (execproto.Finish).
type Finish struct {
	Status    int     `json:"status"`
	Usage     *Usage  `json:"usage,omitempty"`
	Timestamp float64 `json:"timestamp,omitempty"`
}

// Ack is the payload of agent.ack.
type Ack struct {
	IDs []fluid.ID `json:"ids"`
}

// Stop is the payload of agent.stop.
type Stop struct {
	// Force ends running jobs first (SIGTERM, SIGKILL after their grace);
	// their ends are journaled and reported to the next fluxsched.
	Force bool `json:"force"`
}

// Cancel is the payload of agent.cancel.
type Cancel struct {
	ID fluid.ID `json:"id"`
}

// Seconds converts a duration to the protocol's seconds.
func Seconds(d time.Duration) float64 { return d.Seconds() }

// Duration converts the protocol's seconds to a duration; a negative or
// absurd value is zero.
func Duration(s float64) time.Duration {
	if !(s > 0) || s > 1e9 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// DecodeHello reads the answer to agent.hello.
func DecodeHello(m wire.Message) (Hello, error) {
	var h Hello
	return h, wire.Decode(m, &h, "build", "pid")
}
