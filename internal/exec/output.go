package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/agentproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// Output of jobs on other hosts (issue 29). Each host's agent writes its
// ranks' output in its own job folder, so fluxsched's socket, serving
// fluxq attach and output, asks it through the exec service: an
// agent.output request on the host's one connection, with a matchtag of
// its own, answered once. Nothing of it concerns the job manager.

// outputTimeout bounds the wait for a host's answer: a connection that
// stalls (ssh alive, the host not answering) is then said to, rather than
// holding a fluxq attach forever.
const outputTimeout = 10 * time.Second

// ErrNoService: no registration of the exec service is up (fluxsched is
// starting, or its exec service is being started again).
var ErrNoService = errors.New("the exec service is not running")

// Outputs reads the output of jobs from the agents of their hosts, for
// fluxsched's socket. Give the same one to every Run (Options.Outputs):
// it reads through the registration that is up. Its zero value is ready.
type Outputs struct {
	mu sync.Mutex
	r  *router
}

func (o *Outputs) set(r *router) {
	o.mu.Lock()
	o.r = r
	o.mu.Unlock()
}

func (o *Outputs) clear(r *router) {
	o.mu.Lock()
	if o.r == r {
		o.r = nil
	}
	o.mu.Unlock()
}

// Read asks host's agent for part of a job's output. A host that is not
// reached (lost, never reached, or given up) is an error at once, in the
// launcher's words; the caller names the host.
func (o *Outputs) Read(ctx context.Context, host string, req agentproto.OutputRequest) (agentproto.Output, error) {
	o.mu.Lock()
	r := o.r
	o.mu.Unlock()
	if r == nil {
		return agentproto.Output{}, ErrNoService
	}
	tag, ch, err := r.askOutput(host, req)
	if err != nil {
		return agentproto.Output{}, err
	}
	t := time.NewTimer(outputTimeout)
	defer t.Stop()
	select {
	case a := <-ch:
		return a.out, a.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = fmt.Errorf("its exec agent did not answer within %s", outputTimeout)
	}
	r.mu.Lock()
	delete(r.waiters, tag)
	r.mu.Unlock()
	return agentproto.Output{}, err
}

// outputWaiter is a Read waiting for its answer.
type outputWaiter struct {
	l  *agentLink
	ch chan outputAnswer // buffered: the answer never waits for the reader
}

type outputAnswer struct {
	out agentproto.Output
	err error
}

// askOutput sends the request to host's agent and returns the matchtag
// its answer will carry.
func (r *router) askOutput(host string, req agentproto.OutputRequest) (uint32, chan outputAnswer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return 0, nil, ErrNoService
	}
	l := r.byHost[host]
	if l == nil || l.gone {
		why := r.lostWhy[host]
		switch {
		case why != "":
		case l != nil:
			why = "the connection to its exec agent was lost; reaching it again"
		default:
			why = "not reached yet"
		}
		return 0, nil, fmt.Errorf("unreachable: %s", why)
	}
	m, err := wire.NewRequest(agentproto.TopicOutput, req)
	if err != nil {
		return 0, nil, err
	}
	r.lastTag++
	if r.lastTag == 0 {
		r.lastTag++ // 0 is no matchtag
	}
	m.Matchtag = r.lastTag
	if r.waiters == nil {
		r.waiters = map[uint32]*outputWaiter{}
	}
	w := &outputWaiter{l: l, ch: make(chan outputAnswer, 1)}
	r.waiters[m.Matchtag] = w
	r.forward(l, m)
	return m.Matchtag, w.ch, nil
}

// outputAnswered hands an agent's answer to its Read. Called with mu held.
func (r *router) outputAnswered(l *agentLink, m wire.Message) {
	w := r.waiters[m.Matchtag]
	if w == nil || w.l != l {
		return // given up on, or not ours
	}
	delete(r.waiters, m.Matchtag)
	var a outputAnswer
	a.err = wire.Decode(m, &a.out, "data", "size")
	w.ch <- a
}

// failOutputs ends the Reads waiting on l (every one if l is nil) with
// why. Called with mu held.
func (r *router) failOutputs(l *agentLink, why error) {
	for tag, w := range r.waiters {
		if l == nil || w.l == l {
			delete(r.waiters, tag)
			w.ch <- outputAnswer{err: why}
		}
	}
}
