package sim

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fluxq/fluxq/internal/sched"
	"github.com/fluxq/fluxq/internal/wire"
)

// The replay's job manager and scheduler exchange typed messages
// (wire.Message.Body); what they carry must be what the JSON path sends,
// message for message: each typed message, encoded as it would be to
// leave the process, is the JSON path's, and the schedules are the same.
func TestTypedWireEqualsJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trace  string
		nodes  int
		cores  int
		memory uint64
		policy sched.QueuePolicy
	}{
		{"edge fcfs", "../../bench/simref/testdata/edge.swf", 4, 2, 0, fcfs},
		{"edge easy", "../../bench/simref/testdata/edge.swf", 4, 2, 0, easy},
		{"edge conservative", "../../bench/simref/testdata/edge.swf", 4, 2, 0, conservative},
		{"edge hybrid 2", "../../bench/simref/testdata/edge.swf", 4, 2, 0, hybrid2},
		{"mem easy", "../../bench/simref/testdata/mem.swf", 4, 2, 4 << 30, easy},
		{"mem-denied conservative", "../../bench/simref/testdata/mem-denied.swf", 7, 2, 2 << 30, conservative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := readTrace(t, tc.trace)
			inv, err := Machine(tc.nodes, tc.cores, tc.memory)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Jobs: jobs, Inventory: inv, Policy: tc.policy, Memory: tc.memory > 0, TempDir: t.TempDir()}
			replay := func(typed bool) (*Result, []string) {
				var sent []string
				tap := func(toSched bool, m wire.Message) {
					if typed != (m.Body != nil) && len(m.Payload) > 0 {
						t.Fatalf("a %s message in a replay with typed=%v: %+v", m.Topic, typed, m)
					}
					m, err := m.Encoded()
					if err != nil {
						t.Fatalf("encoding %s: %v", m.Topic, err)
					}
					b, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					dir := "to the job manager: "
					if toSched {
						dir = "to the scheduler: "
					}
					sent = append(sent, dir+string(b))
				}
				res, err := run(cfg, wiring{typed: typed, tap: tap})
				if err != nil {
					t.Fatalf("replay (typed %v): %v", typed, err)
				}
				return res, sent
			}
			resJSON, wantMsgs := replay(false)
			resTyped, gotMsgs := replay(true)
			if len(gotMsgs) != len(wantMsgs) {
				t.Errorf("typed: %d messages, JSON: %d", len(gotMsgs), len(wantMsgs))
			}
			for i := range min(len(gotMsgs), len(wantMsgs)) {
				if gotMsgs[i] != wantMsgs[i] {
					t.Fatalf("message %d differs:\n typed %s\n  JSON %s", i, gotMsgs[i], wantMsgs[i])
				}
			}
			if !reflect.DeepEqual(resTyped.Schedule, resJSON.Schedule) || resTyped.Summary != resJSON.Summary {
				t.Errorf("typed and JSON replays differ: %+v vs %+v", resTyped.Summary, resJSON.Summary)
			}
			if len(wantMsgs) < 4*len(resJSON.Schedule) {
				t.Errorf("only %d messages for %d jobs: the tap missed some", len(wantMsgs), len(resJSON.Schedule))
			}
		})
	}
}
