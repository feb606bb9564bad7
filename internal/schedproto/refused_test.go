package schedproto

import (
	"testing"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/wire"
)

// A refused SUCCESS names its job in a form a scheduler can read back.
func TestRefusedJob(t *testing.T) {
	tests := []struct {
		name string
		m    wire.Message
		id   fluid.ID
		ok   bool
	}{
		{"refusal", Refused(6895435776, "rank 7 is not in the instance"), 6895435776, true},
		{"reason with digits and spaces", Refused(1, "core 0 on rank 0 (node0) is allocated to job ƒ2CgRFD"), 1, true},
		{"largest id", Refused(1<<64-1, "x"), 1<<64 - 1, true},
		{"other errnum", wire.NewError(TopicAlloc, wire.EPROTO, "SUCCESS for job 5 refused: x"), 0, false},
		{"other topic", wire.NewError(TopicFree, wire.EINVAL, "SUCCESS for job 5 refused: x"), 0, false},
		{"other text", wire.NewError(TopicAlloc, wire.EINVAL, "bad payload"), 0, false},
		{"no number", wire.NewError(TopicAlloc, wire.EINVAL, "SUCCESS for job ƒ5 refused: x"), 0, false},
		{"number too big", wire.NewError(TopicAlloc, wire.EINVAL, "SUCCESS for job 18446744073709551616 refused: x"), 0, false},
		{"no reason", wire.NewError(TopicAlloc, wire.EINVAL, "SUCCESS for job 5"), 0, false},
		{"a request", wire.Message{Topic: TopicAlloc, Type: wire.Request}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if id, ok := RefusedJob(tc.m); id != tc.id || ok != tc.ok {
				t.Errorf("RefusedJob(%q) = %d, %v; want %d, %v", tc.m.Errstr, id, ok, tc.id, tc.ok)
			}
		})
	}
}

// Whatever errstr a message carries, RefusedJob reads it without a
// panic, and a refusal it builds reads back as its job.
func FuzzRefusedJob(f *testing.F) {
	f.Add(uint64(6895435776), "rank 7 is not in the instance", "SUCCESS for job 12 refused: x")
	f.Add(uint64(0), "", "SUCCESS for job  refused: ")
	f.Add(uint64(1), "refused: refused:", "SUCCESS for job -1 refused: x")
	f.Fuzz(func(t *testing.T, id uint64, why, errstr string) {
		if got, ok := RefusedJob(Refused(fluid.ID(id), why)); !ok || got != fluid.ID(id) {
			t.Fatalf("Refused(%d, %q) reads back as %d, %v", id, why, got, ok)
		}
		RefusedJob(wire.NewError(TopicAlloc, wire.EINVAL, errstr))
	})
}
