package wire

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustRequest(t *testing.T, topic string, v any) Message {
	t.Helper()
	m, err := NewRequest(topic, v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Both transports must behave the same: order kept, EOF after close.
func TestTransports(t *testing.T) {
	type pair struct{ a, b Conn }
	transports := map[string]func() pair{
		"pipe": func() pair { a, b := Pipe(); return pair{a, b} },
		"lines": func() pair {
			ar, bw := io.Pipe() // b writes, a reads
			br, aw := io.Pipe() // a writes, b reads
			a := NewLineConn(ar, aw, aw.Close)
			b := NewLineConn(br, bw, bw.Close)
			return pair{a, b}
		},
	}
	for name, mk := range transports {
		t.Run(name, func(t *testing.T) {
			p := mk()
			want := []Message{
				mustRequest(t, "sched.alloc", map[string]any{"id": 1}),
				mustRequest(t, "sched.free", map[string]any{"id": 2}),
				NewError("sched.alloc", ENOSYS, "no service"),
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, m := range want {
					if err := p.a.Send(m); err != nil {
						t.Error(err)
					}
				}
				p.a.Close()
			}()
			var got []Message
			for {
				m, err := p.b.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, m)
			}
			wg.Wait()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("received (-want +got):\n%s", diff)
			}
			if err := p.a.Send(want[0]); err == nil {
				t.Error("Send after Close succeeded")
			}
		})
	}
}

func TestPipeSendNeverBlocks(t *testing.T) {
	a, b := Pipe()
	for i := 0; i < 10000; i++ {
		if err := a.Send(mustRequest(t, "sched.alloc", map[string]int{"id": i})); err != nil {
			t.Fatal(err)
		}
		if err := b.Send(mustRequest(t, "sched.alloc", map[string]int{"id": i})); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLineConnRejects(t *testing.T) {
	tests := []struct {
		name, in, want string
		topic          string // of the BadMessageError; "-" for none
	}{
		{"not json", "hello\n", "bad message", ""},
		{"array", `[1]` + "\n", "not a JSON object", ""},
		{"matchtag not a number", `{"topic":"a","type":"request","matchtag":"x"}` + "\n", "bad message", "a"},
		{"negative matchtag", `{"topic":"a","type":"request","matchtag":-1}` + "\n", "bad message", "a"},
		{"trailing data", `{"topic":"a","type":"request"} {}` + "\n", "bad message", ""},
		{"no topic", `{"type":"request"}` + "\n", "message has no topic", ""},
		{"bad type", `{"topic":"a","type":"event"}` + "\n", `message type "event" is neither request nor response`, "a"},
		{"request with error", `{"topic":"a","type":"request","errnum":2}` + "\n", "a request cannot carry an error", "a"},
		{"truncated", `{"topic":"a"`, "connection closed inside a message", "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewLineConn(strings.NewReader(tc.in), io.Discard, nil)
			_, err := c.Recv()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Recv err = %v, want it to contain %q", err, tc.want)
			}
			var bad *BadMessageError
			if errors.As(err, &bad) != (tc.topic != "-") || bad != nil && bad.Topic != tc.topic {
				t.Errorf("Recv err = %#v, want a bad message of topic %q", err, tc.topic)
			}
		})
	}
}

// RFC 6's matchtag and flags are read, and keys beyond them skipped, as an
// RFC 6 peer would: a scheduler written from the RFCs sends them.
func TestLineConnRFC6Keys(t *testing.T) {
	tests := []struct {
		name, in string
		want     Message
	}{
		{"matchtag", `{"topic":"a","type":"request","matchtag":7}`, Message{Topic: "a", Type: Request, Matchtag: 7}},
		{"flags", `{"topic":"job-manager.sched-hello","type":"request","flags":64,"matchtag":1}`,
			Message{Topic: "job-manager.sched-hello", Type: Request, Matchtag: 1, Flags: FlagStreaming}},
		{"largest matchtag", `{"topic":"a","type":"request","matchtag":4294967295}`, Message{Topic: "a", Type: Request, Matchtag: 4294967295}},
		{"unknown keys", `{"nodeid":0,"topic":"a","type":"response","userid":5,"payload":{"id":1},"route":["x"]}`,
			Message{Topic: "a", Type: Response, Payload: []byte(`{"id":1}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewLineConn(strings.NewReader(tc.in+"\n"), io.Discard, nil).Recv()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, m); diff != "" {
				t.Errorf("Recv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnswering(t *testing.T) {
	req := Message{Topic: "job-manager.sched-hello", Type: Request, Matchtag: 9, Flags: FlagStreaming}
	got := NewError(req.Topic, ENODATA, "").Answering(req)
	if got.Matchtag != 9 || !got.Streaming() {
		t.Errorf("answer to a streaming request = %+v", got)
	}
	got = NewError("a", EPROTO, "x").Answering(Message{Topic: "a", Type: Request})
	if got.Matchtag != 0 || got.Flags != 0 {
		t.Errorf("answer to a plain request = %+v", got)
	}
	var buf strings.Builder
	if err := NewLineConn(strings.NewReader(""), &buf, nil).Send(NewError(req.Topic, ENODATA, "").Answering(req)); err != nil {
		t.Fatal(err)
	}
	if want := `{"topic":"job-manager.sched-hello","type":"response","errnum":61,"matchtag":9,"flags":64}` + "\n"; buf.String() != want {
		t.Errorf("sent %q, want %q", buf.String(), want)
	}
}

func TestLineConnSkipsBlankLinesAndReadsLongLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	in := "\n  \n" + `{"topic":"t","type":"request","payload":{"s":"` + long + `"}}` + "\n"
	c := NewLineConn(strings.NewReader(in), io.Discard, nil)
	m, err := c.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != "t" || len(m.Payload) < len(long) {
		t.Errorf("got topic %q, payload %d bytes", m.Topic, len(m.Payload))
	}
	if _, err := c.Recv(); err != io.EOF {
		t.Errorf("after last message: %v, want EOF", err)
	}
}

func TestErrorResponse(t *testing.T) {
	m := NewError("sched.alloc", ENOSYS, "")
	var e *Error
	if !m.IsError() || !errors.As(m.Err(), &e) || e.Errnum != ENOSYS {
		t.Fatalf("error response not recognised: %+v", m)
	}
	if m.Err().Error() != "sched.alloc: error 38" {
		t.Errorf("Error() = %q", m.Err())
	}
	ok, _ := NewResponse("sched.free", map[string]int{"id": 1})
	if ok.IsError() || ok.Err() != nil {
		t.Error("a plain response counted as an error")
	}
}

func FuzzLineConn(f *testing.F) {
	f.Add([]byte(`{"topic":"sched.alloc","type":"response","payload":{"id":1,"type":0}}` + "\n"))
	f.Add([]byte(`{"topic":"a","type":"response","errnum":61}` + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewLineConn(strings.NewReader(string(data)), io.Discard, nil)
		for i := 0; i < 100; i++ {
			m, err := c.Recv()
			if err != nil {
				return
			}
			// Whatever was accepted must survive a trip through the other transport.
			var buf strings.Builder
			w := NewLineConn(strings.NewReader(""), &buf, nil)
			if err := w.Send(m); err != nil {
				t.Fatalf("Send of a received message: %v", err)
			}
			m2, err := NewLineConn(strings.NewReader(buf.String()), io.Discard, nil).Recv()
			if err != nil {
				t.Fatalf("Recv of a sent message: %v", err)
			}
			if diff := cmp.Diff(m, m2); diff != "" {
				t.Fatalf("round trip (-first +second):\n%s", diff)
			}
		}
	})
}
