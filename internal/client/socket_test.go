package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
)

// fakeServer answers every connection with answer, given the request
// read (nil when it does not read it).
func fakeServer(t *testing.T, read bool, answer func(c net.Conn, req *api.Call)) *conn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req *api.Call
				if read {
					line, err := bufio.NewReader(c).ReadBytes('\n')
					if err != nil {
						return
					}
					req = &api.Call{}
					json.Unmarshal(line, req)
				}
				answer(c, req)
			}()
		}
	}()
	return &conn{t: &socket{path: path, timeout: 300 * time.Millisecond}}
}

func send(c net.Conn, r api.Reply) {
	b, _ := json.Marshal(r)
	c.Write(append(b, '\n'))
}

// Issue 13: --timeout covered only the connect; a stopped fluxsched
// kept every client waiting. It bounds fluxsched's silence now.
func TestSocketTimeout(t *testing.T) {
	s := fakeServer(t, true, func(c net.Conn, req *api.Call) {
		if req.Timeout != 0.3 {
			t.Errorf("request timeout = %v, want 0.3", req.Timeout)
		}
		time.Sleep(3 * time.Second)
	})
	start := time.Now()
	_, err := s.Stats(context.Background())
	var na *NoAnswerError
	if !errors.As(err, &na) || !errors.Is(err, ErrUnavailable) || err.Error() != "fluxsched did not answer within 0.3s" {
		t.Fatalf("Stats = %v, want fluxsched did not answer (an ErrUnavailable)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Stats gave up after %s", d)
	}
	_, err = s.Submit(context.Background(), []api.SubmitJob{{Jobspec: json.RawMessage(`{}`)}})
	if err == nil || err.Error() != "fluxsched did not answer within 0.3s (the request may still be carried out)" {
		t.Errorf("Submit = %v", err)
	}
}

// Signs of life keep a long request going past the timeout; a stream is
// bounded only until its first line.
func TestSocketAlive(t *testing.T) {
	s := fakeServer(t, true, func(c net.Conn, req *api.Call) {
		switch req.Method {
		case api.Stats.Name:
			for range 10 {
				send(c, api.Reply{Working: true})
				time.Sleep(100 * time.Millisecond)
			}
			send(c, api.Reply{Result: json.RawMessage(`{"total":7}`), Final: true})
		case api.Events.Name:
			send(c, api.Reply{Working: true})
			time.Sleep(time.Second)
			c.Write([]byte(`{"event":{"timestamp":1,"name":"clean"}}` + "\n"))
			send(c, api.Reply{Final: true})
		}
	})
	st, err := s.Stats(context.Background())
	if err != nil || st.Total != 7 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	var got []string
	err = s.Events(context.Background(), 1, true, func(e eventlog.Event) error {
		got = append(got, e.Name)
		return nil
	})
	if err != nil || len(got) != 1 {
		t.Errorf("Events(follow) = %v, %v", got, err)
	}
	// Not following, the same silence is too long.
	if err := s.Events(context.Background(), 1, false, func(eventlog.Event) error { return nil }); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Events = %v, want it to give up", err)
	}
}

// A refused connection says why before fluxsched hangs up, even when it
// never reads the request.
func TestSocketRefused(t *testing.T) {
	s := fakeServer(t, false, func(c net.Conn, _ *api.Call) {
		send(c, api.Reply{Error: "too many connections from uid 65534 (256 open); try again later", Final: true})
	})
	_, err := s.Stats(context.Background())
	if err == nil || err.Error() != "too many connections from uid 65534 (256 open); try again later" {
		t.Errorf("Stats = %v", err)
	}
}

// A listing asks for parts; the parts and the final line's result are
// the list, in order, signs of life between them.
func TestSocketParts(t *testing.T) {
	s := fakeServer(t, true, func(c net.Conn, req *api.Call) {
		if req.Method != api.Jobs.Name {
			send(c, api.Reply{Result: json.RawMessage(`{"total":1}`), Final: true})
			return
		}
		if !req.Parts {
			t.Errorf("a listing's request does not ask for parts: %+v", req)
		}
		c.Write(api.AppendPartLine(nil, []byte(`[{"id":1},{"id":2}]`)))
		send(c, api.Reply{Working: true})
		c.Write(api.AppendPartLine(nil, []byte(`[{"id":3}]`)))
		send(c, api.Reply{Result: json.RawMessage(`[{"id":4},{"id":5}]`), Final: true})
	})
	list, err := s.Jobs(context.Background(), api.JobsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, j := range list {
		ids = append(ids, int(j.ID))
	}
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(ids, want) {
		t.Errorf("Jobs = %v, want %v", ids, want)
	}
	if st, err := s.Stats(context.Background()); err != nil || st.Total != 1 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
}

// A part that does not decode is a bad response, not a shorter list.
func TestSocketBadPart(t *testing.T) {
	s := fakeServer(t, true, func(c net.Conn, req *api.Call) {
		c.Write(api.AppendPartLine(nil, []byte(`[{"id":"x"}]`)))
		send(c, api.Reply{Result: json.RawMessage(`[{"id":4}]`), Final: true})
	})
	if list, err := s.Jobs(context.Background(), api.JobsQuery{}); err == nil || !strings.Contains(err.Error(), "bad response") {
		t.Errorf("Jobs = %d jobs, %v; want a bad response", len(list), err)
	}
}
