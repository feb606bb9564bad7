package jobmgr_test

import (
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/schedproto"
	"github.com/fluxq/fluxq/internal/wire"
)

// send sends the scheduler's message m as it is, keys and all.
func (p *peer) send(m wire.Message) {
	p.t.Helper()
	if err := p.c.Send(m); err != nil {
		p.t.Fatal(err)
	}
}

// A scheduler written from RFC 6 tags its requests and flags its streams:
// each answer carries its matchtag, the hello and acquire streams the
// streaming flag; the job manager's own requests carry tags of its own.
func TestSchedRFC6Keys(t *testing.T) {
	h := newHarness(t)
	h.start()
	id := h.submit(16)
	h.sched.send(wire.Message{Topic: schedproto.TopicAcquire, Type: wire.Request, Matchtag: 11, Flags: wire.FlagStreaming})
	if m := h.sched.expect(schedproto.TopicAcquire, wire.Response); m.Matchtag != 11 || !m.Streaming() {
		t.Errorf("acquire response tag %d flags %#x, want 11 and streaming", m.Matchtag, m.Flags)
	}
	h.sched.send(wire.Message{Topic: schedproto.TopicHello, Type: wire.Request, Matchtag: 12, Flags: wire.FlagStreaming})
	if m := h.sched.expect(schedproto.TopicHello, wire.Response); m.Errnum != wire.ENODATA || m.Matchtag != 12 || !m.Streaming() {
		t.Errorf("hello end = %+v, want ENODATA, tag 12, streaming", m)
	}
	ready, _ := wire.NewRequest(schedproto.TopicReady, limited8)
	ready.Matchtag = 13
	h.sched.send(ready)
	if m := h.sched.expect(schedproto.TopicReady, wire.Response); m.Matchtag != 13 || m.Streaming() {
		t.Errorf("ready response tag %d flags %#x, want 13, not streaming", m.Matchtag, m.Flags)
	}
	m := h.sched.expect(schedproto.TopicAlloc, wire.Request)
	if m.Matchtag == 0 {
		t.Error("sched.alloc carries no matchtag")
	}
	h.execHello()
	h.succeed(id)
	h.expectStart(id, false)
}

// A scheduler's message that breaks the protocol is answered with an
// error response of its topic, EPROTO, saying why, before the scheduler
// is suspended; a request for an unknown method gets ENOSYS and suspends
// nothing. (A refused ready also ends the connection: testscript
// schedwire.)
func TestSchedErrorsAnswered(t *testing.T) {
	tests := []struct {
		name   string
		msg    wire.Message
		errnum int
		errstr string
	}{
		{"alloc response for no job", wire.Message{Topic: schedproto.TopicAlloc, Type: wire.Response, Matchtag: 5, Payload: []byte(`{"id":424242,"type":1,"annotations":{}}`)},
			wire.EPROTO, "sched.alloc: response for job 424242 ("},
		{"free response for no job", wire.Message{Topic: schedproto.TopicFree, Type: wire.Response, Payload: []byte(`{"id":7}`)},
			wire.EPROTO, "sched.free: response for job 7 ("},
		{"malformed payload", wire.Message{Topic: schedproto.TopicAlloc, Type: wire.Response, Payload: []byte(`{"id":"x","type":0}`)},
			wire.EPROTO, "sched.alloc: "},
		{"response of an unknown topic", wire.Message{Topic: "sched.nosuch", Type: wire.Response},
			wire.EPROTO, "sched.nosuch: unexpected response"},
		{"unknown method", wire.Message{Topic: "sched.nosuch", Type: wire.Request, Matchtag: 9},
			wire.ENOSYS, "unknown method sched.nosuch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			h.handshake(limited8)
			h.sched.send(tc.msg)
			m := h.sched.expect(tc.msg.Topic, wire.Response)
			if m.Errnum != tc.errnum || !strings.Contains(m.Errstr, tc.errstr) || m.Matchtag != tc.msg.Matchtag {
				t.Fatalf("answer = %+v, want errnum %d, errstr with %q, matchtag %d", m, tc.errnum, tc.errstr, tc.msg.Matchtag)
			}
			id := h.submit(16)
			if tc.errnum == wire.ENOSYS {
				h.expectAlloc(id) // not suspended
				return
			}
			h.sched.quiet(h) // suspended: no alloc until the next hello
			h.handshake(limited8)
			h.expectAlloc(id)
		})
	}
}
