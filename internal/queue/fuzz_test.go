package queue

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// fuzzJob is a V1 jobspec with the attributes.system given as JSON text.
func fuzzJob(resources, system string) []byte {
	return []byte(`{"version":1,"resources":` + resources + `,` +
		`"tasks":[{"command":["app"],"slot":"task","count":{"per_slot":1}}],` +
		`"attributes":{"system":` + system + `}}`)
}

const (
	slot1     = `[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]`
	slot4gpu  = `[{"type":"slot","count":4,"label":"task","with":[{"type":"core","count":2},{"type":"gpu","count":1}]}]`
	node2slot = `[{"type":"node","count":2,"exclusive":true,"with":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}]}]`
	slot2mem  = `[{"type":"slot","count":2,"label":"task","with":[{"type":"core","count":1},{"type":"memory","count":3,"unit":"GB"}]}]`
	slotMemGB = `[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1},{"type":"gpu","count":1},{"type":"memory","count":600,"unit":"MB"}]}]`
)

// FuzzAdmit: for any jobspec Parse accepts, under any of a few queue
// configurations, states and users, Admit never panics; a rejection is
// ErrRejected with a one-line message (docs/cli.md prints it as one line); an
// admitted jobspec is in a queue that exists and is enabled, within that
// queue's limits, carries its requires, and marshals to a jobspec that
// parses again to the same queue, duration and constraints.
func FuzzAdmit(f *testing.F) {
	for _, sys := range []string{
		`{"duration":0}`,
		`{"duration":60}`,
		`{"duration":7200,"queue":"batch"}`,
		`{"duration":0,"queue":"debug"}`,
		`{"duration":60,"queue":"debug","constraints":{"properties":["gpu"]}}`,
		`{"duration":60,"queue":"expedite","constraints":{"or":[{"hostlist":["n[1-2]"]},{"ranks":["0"]}]}}`,
		`{"duration":1e300,"queue":"long"}`,
		`{"duration":0.5,"queue":"tight"}`,
		`{"duration":60,"queue":"gpu"}`,
		`{"duration":60,"queue":"nosuch"}`,
		`{"duration":60,"queue":""}`,
		`{"duration":60,"constraints":{}}`,
		`{"duration":60,"constraints":{"foo":["x"]}}`,
		`{"duration":60,"constraints":{"not":[{"not":[{"properties":["^a"]}]}]}}`,
		`{"duration":60,"queue":"no\tsuch"}`,
		`{"duration":60,"queue":"no\nsuch\u0000\u2028"}`,
		`{"duration":60,"constraints":` + strings.Repeat(`{"not":[`, 27) + `{"properties":["x"]}` + strings.Repeat(`]}`, 27) + `}`,
	} {
		for _, res := range []string{slot1, slot4gpu, node2slot, slot2mem, slotMemGB} {
			for _, sel := range []uint8{0x00, 0x12, 0x26, 0x37, 0x4b} {
				f.Add(fuzzJob(res, sys), sel)
			}
		}
	}
	sets := []*Set{
		Anonymous(),
		mustCompile(f, Tables{Policy: Policy{
			Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Duration: str("10m")}}},
			Limits: Limits{Duration: str("1h"), JobSize: JobSize{
				Max: maxSize(num(2), num(4), num(2)),
				Min: maxSize(nil, num(2), nil),
			}},
			Access: Access{AllowUser: list("alice"), AllowGroup: list("wheel")},
		}}),
		mustCompile(f, admitTables()),
		mustCompile(f, memTables()),
		func() *Set {
			t := admitTables()
			t.Policy.Jobspec.Defaults.System.Queue = nil
			return mustCompile(f, t)
		}(),
	}
	stateSets := []map[string]State{
		nil,
		{"": disabled("maintenance window"), "batch": disabled(""), "gpu": disabled("x")},
		{"debug": disabled("maintenance window"), "long": disabled("closed")},
		{"expedite": disabled("no")},
	}
	users := []User{alice, bob, carol, owner, noname}

	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		js, err := jobspec.Parse(data)
		if err != nil {
			return
		}
		askedMem := js.Counts().MemPerSlot
		set := sets[int(sel)%len(sets)]
		states := stateSets[int(sel>>2)%len(stateSets)]
		user := users[int(sel>>4)%len(users)]

		err = set.Admit(js, states, user)
		if err != nil {
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("error is not ErrRejected: %v", err)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("rejection is not one line: %q", msg)
			}
			return
		}

		sys := js.Attributes.System
		q, ok := set.Queue(sys.Queue)
		switch {
		case !ok:
			t.Fatalf("admitted to queue %q, which does not exist", sys.Queue)
		case set.Named() && sys.Queue == "":
			t.Fatalf("admitted without a queue while queues are named")
		case !set.StateOf(states, sys.Queue).Enabled:
			t.Fatalf("admitted to disabled queue %q", sys.Queue)
		case !user.Owner && !q.allows(user):
			t.Fatalf("user %+v admitted to queue %q with access %v/%v", user, sys.Queue, q.AllowUser, q.AllowGroup)
		case q.MaxDuration > 0 && (sys.Duration == 0 || sys.Duration > q.MaxDuration):
			t.Fatalf("duration %v admitted to queue %q with limit %v", sys.Duration, sys.Queue, q.MaxDuration)
		}
		c := js.Counts()
		nnodes := max(int64(c.NNodes), 1)
		for _, k := range []struct {
			what          string
			v, max, least int64
		}{
			{"nnodes", nnodes, q.Max.NNodes, q.Min.NNodes},
			{"ncores", int64(c.NCores), q.Max.NCores, q.Min.NCores},
			{"ngpus", int64(c.NGPUs), q.Max.NGPUs, q.Min.NGPUs},
		} {
			if (k.max != Unlimited && k.v > k.max) || (k.least != Unlimited && k.v < k.least) {
				t.Fatalf("%s %d admitted to queue %q with limits [%d, %d]", k.what, k.v, sys.Queue, k.least, k.max)
			}
		}
		// Memory: the default fills a slot that asked none, and the total
		// is within the queue's bounds (none asked passes any maximum).
		switch {
		case askedMem > 0 && c.MemPerSlot != askedMem:
			t.Fatalf("memory per slot %d, asked %d", c.MemPerSlot, askedMem)
		case askedMem == 0 && c.MemPerSlot != q.DefaultMemory:
			t.Fatalf("memory per slot %d, queue %q default %d", c.MemPerSlot, sys.Queue, q.DefaultMemory)
		}
		if mem := uint64(c.NSlots) * c.MemPerSlot; (q.MaxMemory > 0 && mem > q.MaxMemory) || mem < q.MinMemory {
			t.Fatalf("memory %d admitted to queue %q with limits [%d, %d]", mem, sys.Queue, q.MinMemory, q.MaxMemory)
		}
		var cons constraint.Constraint
		if sys.Constraints != nil {
			if cons, err = constraint.ParseJSON(sys.Constraints); err != nil && len(q.Requires) > 0 {
				t.Fatalf("admitted constraints are not RFC 31: %v\n%s", err, sys.Constraints)
			}
		}
		for _, p := range q.Requires {
			if !slices.Contains(cons.Properties(), strings.TrimPrefix(p, "^")) {
				t.Fatalf("queue %q requires %q; admitted constraints %s", sys.Queue, p, sys.Constraints)
			}
		}

		// What the job manager stores reads back the same.
		b, err := js.MarshalJSON()
		if err != nil {
			t.Fatalf("admitted jobspec does not marshal: %v", err)
		}
		back, err := jobspec.Parse(b)
		if err != nil {
			t.Fatalf("admitted jobspec does not parse again: %v\n%s", err, b)
		}
		bs := back.Attributes.System
		if back.Counts().MemPerSlot != c.MemPerSlot {
			t.Fatalf("round trip: memory per slot %d, want %d", back.Counts().MemPerSlot, c.MemPerSlot)
		}
		if bs.Queue != sys.Queue || bs.Duration != sys.Duration {
			t.Fatalf("round trip: queue %q duration %v, want %q %v", bs.Queue, bs.Duration, sys.Queue, sys.Duration)
		}
		if (bs.Constraints == nil) != (sys.Constraints == nil) {
			t.Fatalf("round trip: constraints %s, want %s", bs.Constraints, sys.Constraints)
		}
		if sys.Constraints != nil && len(q.Requires) > 0 {
			bc, err := constraint.ParseJSON(bs.Constraints)
			if err != nil || !bc.Equal(cons) {
				t.Fatalf("round trip: constraints %s (%v), want %s", bs.Constraints, err, sys.Constraints)
			}
		}
	})
}
