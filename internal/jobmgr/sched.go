package jobmgr

import (
	"errors"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/wire"
)

// SchedMessage handles one message from the scheduler. An error means the
// scheduler broke the protocol: it has been answered with an error
// response of the offending message's topic (EPROTO, saying what was
// wrong), so that it can tell why it hears nothing more, and it is
// suspended until its next hello. The caller logs the error. A request
// for a method that is not RFC 27's is answered ENOSYS, as RFC 6 answers
// any unknown method, and suspends nothing (ErrUnknownMethod).
func (m *Manager) SchedMessage(tx *store.Tx, msg wire.Message) error {
	var err error
	switch {
	case msg.Type == wire.Request && msg.Topic == schedproto.TopicAcquire:
		err = m.acquire(msg)
	case msg.Type == wire.Request && msg.Topic == schedproto.TopicHello:
		m.hello(msg)
	case msg.Type == wire.Request && msg.Topic == schedproto.TopicReady:
		err = m.ready(tx, msg)
	case msg.Type == wire.Response && msg.IsError() && (msg.Topic == schedproto.TopicAlloc || msg.Topic == schedproto.TopicFree):
		// RFC 27: a conventional error response is a scheduler fatality.
		// It is the scheduler's own word: nothing to answer.
		m.SchedDisconnected()
		return msg.Err()
	case msg.Type == wire.Response && msg.Topic == schedproto.TopicAlloc:
		err = m.allocResponse(tx, msg)
	case msg.Type == wire.Response && msg.Topic == schedproto.TopicFree:
		err = m.freeResponse(tx, msg)
	case msg.Type == wire.Request:
		m.refuseSched(msg, wire.ENOSYS, "unknown method "+msg.Topic)
		return fmt.Errorf("%s: %w", msg.Topic, ErrUnknownMethod)
	case msg.IsError():
		// An error answer to something the job manager never asked: the
		// scheduler's own word again, not answered.
		err = fmt.Errorf("unexpected error response %s from the scheduler: %w", msg.Topic, msg.Err())
	default:
		err = fmt.Errorf("%s: unexpected response from the scheduler (the job manager answers no %s request)", msg.Topic, msg.Topic)
	}
	if err != nil {
		if !msg.IsError() {
			m.refuseSched(msg, wire.EPROTO, err.Error())
		}
		m.SchedDisconnected()
	}
	return err
}

// SchedUnreadable handles a line from the scheduler that does not read as
// a message (err says why): a protocol error, answered EPROTO on the
// line's topic if it names one (else there is nothing to answer on), and
// the scheduler suspended until its next hello.
func (m *Manager) SchedUnreadable(topic string, err error) {
	if topic != "" {
		m.out.Sched = append(m.out.Sched, wire.NewError(topic, wire.EPROTO, err.Error()))
	}
	m.SchedDisconnected()
}

// ErrUnknownMethod is a scheduler's request for a method the job manager
// does not serve: answered ENOSYS, and the scheduler is not suspended.
var ErrUnknownMethod = errors.New("unknown method")

// SchedDisconnected suspends scheduling (RFC 27 Finalization): a lost
// connection, an error response, or a protocol breach. Outstanding
// requests are void; they are sent again after the next hello and ready.
func (m *Manager) SchedDisconnected() {
	m.sched = schedLink{}
	for _, e := range m.active {
		m.allocGo(e, allocLost)
	}
	clear(m.queue.allocs)
	m.dirty = true
}

// acquire answers resource.acquire with the inventory and the up ranks.
func (m *Manager) acquire(req wire.Message) error {
	r, err := m.inv.MarshalJSON()
	if err != nil {
		return err
	}
	up := m.inv.Ranks().Difference(m.down).String()
	sessions, outside := m.sessions()
	m.sched.acquire, m.sched.acquireReq = true, req
	m.respondSched(req, schedproto.Acquire{Resources: r, Up: &up, Sessions: sessions, Outside: &outside})
	return nil
}

// SetDown changes which ranks take no new work (drain/undrain), and tells
// the scheduler through its acquire stream.
func (m *Manager) SetDown(down idset.Set) {
	wentDown := down.Difference(m.down)
	cameUp := m.down.Difference(down)
	m.down = down
	if !m.sched.acquire {
		return
	}
	if !wentDown.IsEmpty() {
		s := wentDown.String()
		m.respondSched(m.sched.acquireReq, schedproto.Acquire{Down: &s})
	}
	if !cameUp.IsEmpty() {
		s := cameUp.String()
		m.respondSched(m.sched.acquireReq, schedproto.Acquire{Up: &s})
	}
	m.dirty = true
}

// hello replays every job holding resources, then ends the stream.
func (m *Manager) hello(req wire.Message) {
	m.sched.phase, m.sched.outstanding = schedHello, 0
	clear(m.queue.allocs)
	for _, e := range m.sortedActive() {
		m.allocGo(e, allocLost) // a new scheduler holds no requests
		j := e.j()
		if e.alloc.holds() {
			m.respondSched(req, schedproto.HelloJob{ID: e.id(), Priority: j.Priority, UserID: j.UserID, TSubmit: j.TSubmit, R: e.rec.RawR})
		}
	}
	m.refuseSched(req, wire.ENODATA, "") // the stream's end (RFC 27)
}

func (m *Manager) ready(tx *store.Tx, msg wire.Message) error {
	if m.sched.phase != schedHello {
		return fmt.Errorf("%s: sched-ready before sched-hello", msg.Topic)
	}
	r, err := schedproto.DecodeReady(msg)
	if err != nil {
		return err
	}
	count := 0
	for _, e := range m.active {
		if e.j().State == job.Sched {
			count++
		}
	}
	m.respondSched(msg, schedproto.ReadyResponse{Count: count})
	m.sched.phase, m.sched.limit = schedReady, r.Limit
	m.out.SchedReady = &r
	m.dirty = true
	// Jobs that finished while no scheduler listened still need a free.
	for _, e := range m.sortedActive() {
		if e.j().State == job.Cleanup {
			if err := m.advance(tx, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Manager) allocResponse(tx *store.Tx, msg wire.Message) error {
	r, err := schedproto.DecodeAllocResponse(msg)
	if err != nil {
		return err
	}
	e, _ := m.lookup(r.ID)
	var ev allocEvent
	switch r.Type {
	case schedproto.Annotate:
		ev = allocAnnotate
	case schedproto.Success:
		ev = allocGranted
		if e != nil && e.j().State != job.Sched {
			ev = allocGrantedLate
		}
	case schedproto.Deny:
		ev = allocDenied
	default: // schedproto.Cancel: DecodeAllocResponse allows no other
		ev = allocCanceled
	}
	if err := heardAlloc(e, r.ID, ev, msg.Topic); err != nil {
		return err
	}
	if len(r.Annotations) > 0 {
		if err := m.annotate(tx, e, r.Annotations, r.Annotated); err != nil {
			return err
		}
	}
	if r.Type != schedproto.Annotate {
		// The request is done: its place may go to a waiting job.
		m.dirty = true
	}
	m.touch(e)
	if r.Type != schedproto.Annotate {
		delete(m.queue.allocs, e.id())
	}
	// The move is made once what it stands for is done: a failure on the
	// way leaves the request outstanding, void when the scheduler is
	// suspended for it.
	switch ev {
	case allocAnnotate:
		return nil
	case allocGranted, allocGrantedLate:
		m.sched.outstanding--
		granted, why := m.checkGrant(e, r)
		if why != "" {
			return m.refuse(tx, e, why)
		}
		// R is stored before the alloc event is posted (RFC 27).
		if err := m.records.PutR(tx, e.rec, granted); err != nil {
			return err
		}
		if ev == allocGrantedLate {
			// The job stopped wanting resources (an exception raced the
			// allocation): give them straight back.
			m.allocGo(e, ev)
			return m.advance(tx, e)
		}
		ctx := map[string]any{}
		if len(e.rec.Annotations) > 0 {
			ctx["annotations"] = e.rec.Annotations
		}
		if err := m.post(tx, e, job.EventAlloc, ctx); err != nil {
			return err
		}
		m.allocGo(e, ev)
		return m.advance(tx, e)
	case allocDenied:
		m.allocGo(e, ev)
		m.sched.outstanding--
		e.rec.Annotations = nil // RFC 27: discarded if the allocation fails
		note := r.Note
		if err := m.post(tx, e, job.EventException, map[string]any{"type": "alloc", "severity": 0, "note": note}); err != nil {
			return err
		}
		return m.advance(tx, e)
	case allocCanceled:
		m.allocGo(e, ev)
		m.sched.outstanding--
		if e.rec.Annotations != nil {
			// The scheduler's word on a request it no longer holds is
			// stale (flux-core clears it on CANCEL too).
			e.rec.Annotations = nil
			if err := m.saveSummary(tx, e); err != nil {
				return err
			}
		}
		return m.advance(tx, e)
	}
	return nil
}

// refuse answers a SUCCESS whose R does not fit (grant.go): the
// scheduler hears it on sched.alloc, so it can set free what it set aside,
// the request is done, and the job ends with a fatal alloc exception. No
// part of R was stored, so the instance's view never holds it.
func (m *Manager) refuse(tx *store.Tx, e *entry, why string) error {
	m.out.Sched = append(m.out.Sched, schedproto.Refused(e.id(), why))
	m.allocGo(e, allocRefused)
	e.rec.Annotations = nil // RFC 27: discarded if the allocation fails
	return m.raise(tx, e, "alloc", refusalNote+why)
}

func (m *Manager) freeResponse(tx *store.Tx, msg wire.Message) error {
	r, err := schedproto.DecodeJobID(msg)
	if err != nil {
		return err
	}
	e, _ := m.lookup(r.ID)
	if err := heardAlloc(e, r.ID, allocFreed, msg.Topic); err != nil {
		return err
	}
	m.touch(e)
	// Stray R had no alloc event: it gets no free event either.
	if e.alloc == allocFreeing {
		if err := m.post(tx, e, job.EventFree, nil); err != nil {
			return err
		}
	}
	m.allocGo(e, allocFreed)
	return m.advance(tx, e)
}

// annotate merges an annotation update into the job's annotations by
// RFC 27's rules and saves it for listings. value is raw decoded, when a
// typed message carries it (schedproto.AllocResponse.Annotated), and the
// job manager's to keep; else raw is decoded.
func (m *Manager) annotate(tx *store.Tx, e *entry, raw json.RawMessage, value map[string]any) error {
	update := value
	if update == nil {
		// Decoded into a variable of its own: update's address taken
		// would put every update, the typed ones too, on the heap.
		var decoded map[string]any
		if err := json.Unmarshal(raw, &decoded); err != nil {
			return err
		}
		update = decoded
	}
	m.touch(e)
	e.rec.Annotations = mergeOwned(e.rec.Annotations, update)
	return m.saveSummary(tx, e)
}

// mergeOwned is Merge(base, update) made in update, which the caller
// owns (just decoded, or a typed message's, shared with no one): base's
// keys that update does not name are added to it, and base, which an
// event may hold, is never changed. What is copied is then what base
// keeps, not all of both. Values of base are shared with the result, as
// they may be: no merge changes a map it neither made nor owns.
func mergeOwned(base, update map[string]any) map[string]any {
	var buf [4]string
	gone := buf[:0] // the keys update removes, once base's are in
	for k, v := range update {
		switch nv := v.(type) {
		case nil:
			gone = append(gone, k)
		case map[string]any:
			if old, ok := base[k].(map[string]any); ok {
				if merged := mergeOwned(old, nv); merged != nil {
					update[k] = merged
				} else {
					gone = append(gone, k)
				}
			} else {
				update[k] = mergeOwned(nil, nv) // kept even when empty, as Merge does
			}
		}
	}
	for k, v := range base {
		if _, named := update[k]; !named {
			update[k] = v
		}
	}
	for _, k := range gone {
		delete(update, k)
	}
	if len(update) == 0 {
		return nil
	}
	return update
}

// Merge applies an RFC 27 annotation update: a dictionary merges into a
// dictionary recursively, null removes a key, anything else replaces. The
// result shares nothing mutable with its inputs; an empty result is nil.
func Merge(base, update map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(update))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range update {
		switch nv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			if old, ok := out[k].(map[string]any); ok {
				if merged := Merge(old, nv); merged != nil {
					out[k] = merged
				} else {
					delete(out, k)
				}
			} else {
				out[k] = Merge(nil, nv)
			}
		default:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
