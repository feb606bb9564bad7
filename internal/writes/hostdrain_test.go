package writes

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// The exec service's host drain goes through the drain write, and its
// undrain lifts only the drain it made: an admin's reason stays.
func TestHostDrain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before string // node0's drain reason before ("": not drained)
		notice execproto.HostDrain
		after  string // its reason after ("": not drained)
	}{
		{"unreachable drains", "", execproto.HostDrain{Host: "node0", Drain: true, Reason: "ssh: connect to host node0 port 22: Connection refused"},
			HostDrainPrefix + "ssh: connect to host node0 port 22: Connection refused"},
		{"an admin's drain keeps its reason", "disk swap", execproto.HostDrain{Host: "node0", Drain: true, Reason: "ssh: gone"}, "disk swap"},
		{"a second notice keeps the first reason", HostDrainPrefix + "first", execproto.HostDrain{Host: "node0", Drain: true, Reason: "second"}, HostDrainPrefix + "first"},
		{"answering again undrains its own", HostDrainPrefix + "ssh: gone", execproto.HostDrain{Host: "node0"}, ""},
		{"answering again leaves an admin's", "disk swap", execproto.HostDrain{Host: "node0"}, "disk swap"},
		{"answering again, not drained", "", execproto.HostDrain{Host: "node0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			w, _ := Of(api.Drain.Name)
			err := st.Update(func(tx *store.Tx) error {
				if tc.before != "" {
					if _, err := state.Drain(tx, "node0", tc.before, false, time.Now()); err != nil {
						return err
					}
				}
				jm, err := w.Manager(tx, 0, time.Now)
				if err != nil {
					return err
				}
				return HostDrain(&Turn{Tx: tx, JM: jm}, tc.notice)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			_ = st.View(func(tx *store.Tx) error {
				if raw := tx.Drain(0); raw != nil {
					var rec state.DrainRecord
					if err := json.Unmarshal(raw, &rec); err != nil {
						t.Fatal(err)
					}
					got = rec.Reason
				}
				return nil
			})
			if got != tc.after {
				t.Errorf("reason %q, want %q", got, tc.after)
			}
		})
	}
}
