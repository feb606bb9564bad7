package writes

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// Every method of the api table that changes something is a write of
// this table, and no read is: a request is a read of the store
// (state.ReaderOf), a write (Of), or a stream or count the transports
// answer themselves, never two of these.
func TestTableCoversWrites(t *testing.T) {
	for _, s := range api.Table {
		_, isWrite := Of(s.Name)
		_, isRead := state.ReaderOf(s.Name)
		if isWrite == s.ReadOnly {
			t.Errorf("%s: read-only %v, write %v", s.Name, s.ReadOnly, isWrite)
		}
		if isWrite && isRead {
			t.Errorf("%s is both a read and a write", s.Name)
		}
	}
}

// newStore is a store as an instance of one node, node0, left it.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	raw, _ := inv.MarshalJSON()
	err = st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		_, err := state.StartQueues(tx, queue.Anonymous())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// direct runs a write as the direct path does: in a transaction of its
// own, with an offline manager, then what it left for after the commit.
func direct[P, R, S any](t *testing.T, st *store.Store, m api.Method[P, R, S], p P) (R, error) {
	t.Helper()
	w, ok := Of(m.Name)
	if !ok {
		t.Fatalf("%s is no write", m.Name)
	}
	run, err := w.Bind(func(v any) error {
		reflect.ValueOf(v).Elem().Set(reflect.ValueOf(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out R
	var turn *Turn
	err = st.Update(func(tx *store.Tx) error {
		jm, err := w.Manager(tx, 1000, time.Now)
		if err != nil {
			return err
		}
		turn = &Turn{Tx: tx, JM: jm, Caller: Caller{Caller: state.Caller{UID: 1000, Owner: true, JobsDir: t.TempDir()}}}
		v, err := run(turn)
		if err != nil {
			return err
		}
		out = v.(R)
		return jm.SaveSummaries(tx)
	})
	if err == nil {
		if errs := turn.Committed(context.Background()); len(errs) > 0 {
			t.Errorf("%s after the commit: %v", m.Name, errs)
		}
	}
	return out, err
}

// Spare nodes are added and removed through the job manager on both
// paths; a node of the instance stays.
func TestSparesOffline(t *testing.T) {
	st := newStore(t)
	names, err := direct(t, st, api.AddSpares, api.SpareParams{Hosts: "spare[1-2]"})
	if err != nil || !slices.Equal(names, []string{"spare1", "spare2"}) {
		t.Errorf("spare-add = %v, %v", names, err)
	}
	for _, tc := range []struct {
		hosts, err string
	}{
		{"spare1", ""},
		{"spare[", `invalid hostlist "spare["`},
		{"node0", "node node0 is a startup node: only spare nodes can be removed"},
	} {
		_, err := direct(t, st, api.RemoveNodes, api.SpareParams{Hosts: tc.hosts})
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.err {
				t.Errorf("node-remove %s: %q, want %q", tc.hosts, got, tc.err)
			}
		} else if tc.err != "" {
			t.Errorf("node-remove %s: no error, want %q", tc.hosts, tc.err)
		}
	}
}

// With no loop, a submitted job waits as stored (DEPEND) for the next
// loop's Load, and a reservation request needs the instance.
func TestSubmitOffline(t *testing.T) {
	st := newStore(t)
	js, err := jobspec.FromOptions(jobspec.Options{Command: []string{"true"}, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := direct(t, st, api.Submit, api.SubmitParams{Jobs: []api.SubmitJob{{Jobspec: raw, Urgency: 16}}})
	if err != nil || len(ids) != 1 {
		t.Fatalf("submit = %v, %v", ids, err)
	}
	err = st.View(func(tx *store.Tx) error {
		rec, err := state.Load(tx, ids[0])
		if err != nil {
			return err
		}
		if got := rec.Job.State.String(); got != "DEPEND" {
			t.Errorf("state after an offline submit: %s, want DEPEND", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := Of(api.Reserve.Name); !w.NeedsLoop() {
		t.Error("reserve does not need the instance")
	}
	// The job manager's refusals are api's kinds, with Flux's words, on
	// this path as on the socket.
	for _, tc := range []struct {
		name string
		run  func() error
		kind *api.Error
		msg  string
	}{
		{"urgency of no job", func() error {
			_, err := direct(t, st, api.Urgency, api.UrgencyParams{ID: ids[0] + 1, Urgency: 3})
			return err
		}, api.ErrUnknownJob, "unknown job id"},
		{"cancel", func() error {
			res, err := direct(t, st, api.Cancel, api.CancelParams{IDs: ids, Note: "bye"})
			if err == nil && res[0] != nil {
				err = res[0]
			}
			return err
		}, nil, ""},
		{"cancel again", func() error {
			res, err := direct(t, st, api.Cancel, api.CancelParams{IDs: ids})
			if err == nil && res[0] != nil {
				err = api.Decode(res[0])
			}
			return err
		}, api.ErrInactive, "job is inactive"},
		{"urgency of an inactive job", func() error {
			_, err := direct(t, st, api.Urgency, api.UrgencyParams{ID: ids[0], Urgency: 3})
			return err
		}, api.ErrInactive, "job is inactive"},
	} {
		err := api.Wire(tc.run())
		switch {
		case tc.kind == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.kind != nil && (!errors.Is(err, tc.kind) || err.Error() != tc.msg):
			t.Errorf("%s: %v, want %q of kind %s", tc.name, err, tc.msg, tc.kind.Code)
		}
	}
}
