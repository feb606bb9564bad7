package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
	"github.com/fluxq/fluxq/internal/writes"
)

// Every entry of the table is answered: by a state read, a write or a
// handler, exactly one.
func TestEveryMethodServed(t *testing.T) {
	for _, s := range api.Table {
		_, read := state.ReaderOf(s.Name)
		_, write := writes.Of(s.Name)
		_, h := handlers[s.Name]
		n := 0
		for _, ok := range []bool{read, write, h} {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: read %v, write %v, handler %v: want exactly one", s.Name, read, write, h)
		}
	}
}

// dispatchLine answers one call in the server's dispatch and returns the
// final line as the client reads it.
func dispatchLine(t *testing.T, s *Server, who peer, call api.Call) api.Reply {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	got := make(chan api.Reply, 1)
	go func() {
		var r api.Reply
		line, _ := bufio.NewReader(b).ReadBytes('\n')
		json.Unmarshal(line, &r)
		got <- r
		b.Close()
	}()
	s.dispatch(context.Background(), who, call, &writer{conn: a})
	select {
	case r := <-got:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return api.Reply{}
	}
}

func testStore(t *testing.T) *store.Store {
	st, err := store.Open(filepath.Join(t.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// The table decides who may call what, before anything else is read;
// refusals and unknown methods carry their kind.
func TestDispatchRefusals(t *testing.T) {
	s := &Server{Owner: 0, AllowGuest: true, Store: testStore(t)}
	guest := peer{uid: 1000}
	for _, tc := range []struct {
		name string
		who  peer
		call api.Call
		msg  string
		kind error
	}{
		{"guest drain", guest, api.Call{Method: "drain"}, "permission denied: only the instance owner may drain or undrain", api.ErrPermission},
		{"guest queue change", guest, api.Call{Method: "queue-change"}, "permission denied: only the instance owner may change queue state", api.ErrPermission},
		{"guest spare add", guest, api.Call{Method: "spare-add"}, "permission denied: only the instance owner may add or remove nodes", api.ErrPermission},
		{"unknown method", peer{uid: 0}, api.Call{Method: "nosuch"}, `unknown method "nosuch"`, nil},
		{"bad params", peer{uid: 0}, api.Call{Method: "jobs", Params: json.RawMessage(`[1]`)}, "jobs: bad parameters: ", nil},
		{"unknown job", peer{uid: 0}, api.Call{Method: "job", Params: json.RawMessage(`{"id":42}`)}, "unknown job id", api.ErrUnknownJob},
	} {
		r := dispatchLine(t, s, tc.who, tc.call)
		err := r.Err()
		if !r.Final || err == nil || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s: %+v", tc.name, r)
			continue
		}
		if tc.kind != nil && !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v is not %v", tc.name, err, tc.kind)
		}
	}
}

// A guest reads its own jobs' listings but not another user's job whole.
func TestDispatchReads(t *testing.T) {
	s := &Server{Owner: 0, AllowGuest: true, Store: testStore(t)}
	r := dispatchLine(t, s, peer{uid: 1000}, api.Call{Method: "stats"})
	var st api.JobCounts
	if err := r.Err(); err != nil || json.Unmarshal(r.Result, &st) != nil || st.Total != 0 {
		t.Errorf("stats: %+v", r)
	}
	r = dispatchLine(t, s, peer{uid: 1000}, api.Call{Method: "jobs", Params: json.RawMessage(`{}`)})
	if err := r.Err(); err != nil || string(r.Result) != "[]" {
		t.Errorf("jobs: %+v (%s)", r, r.Result)
	}
}
