package jobspec

import (
	"strings"
	"testing"
)

func TestDefaultMemPerSlot(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name    string
		opts    Options
		n       uint64
		changed bool
		perSlot uint64
		err     string
	}{
		{name: "no memory asked", opts: Options{}, n: gib, changed: true, perSlot: gib},
		{name: "with gpus", opts: Options{NTasks: 2, GPUsPerTask: 1}, n: 3 * gib / 2, changed: true, perSlot: 3 * gib / 2},
		{name: "on nodes", opts: Options{Nodes: 2, NTasks: 4}, n: gib, changed: true, perSlot: gib},
		{name: "memory asked is kept", opts: Options{MemPerSlot: 2 * gib}, n: gib, perSlot: 2 * gib},
		{name: "no default", opts: Options{}, n: 0},
		{name: "total over 1E", opts: Options{NTasks: 2}, n: MaxMemory, err: "resources: total memory must be at most 1E"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Command = []string{"true"}
			js, err := FromOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			changed, err := js.DefaultMemPerSlot(tc.n)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || changed != tc.changed {
				t.Fatalf("changed %v err %v, want %v", changed, err, tc.changed)
			}
			if got := js.Counts().MemPerSlot; got != tc.perSlot {
				t.Errorf("memory per slot %d, want %d", got, tc.perSlot)
			}
			b, err := js.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(b)
			if err != nil {
				t.Fatalf("jobspec with the default does not parse: %v\n%s", err, b)
			}
			if got := back.Counts().MemPerSlot; got != tc.perSlot {
				t.Errorf("read back %d per slot, want %d", got, tc.perSlot)
			}
		})
	}
}

// A parsed jobspec's slot may share its array with another jobspec's (a
// batch parsed once); adding the default must not write into it.
func TestDefaultMemPerSlotDoesNotAlias(t *testing.T) {
	js, err := FromOptions(Options{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	_, slot := js.levels()
	slot.With = append(make([]Resource, 0, 4), slot.With...)
	shared := slot.With[:cap(slot.With)]
	if _, err := js.DefaultMemPerSlot(1 << 30); err != nil {
		t.Fatal(err)
	}
	if shared[1].Type == MemoryType {
		t.Errorf("DefaultMemPerSlot wrote into the slot's shared array")
	}
}
