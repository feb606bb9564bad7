package state

import (
	"errors"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// TestSubmitUnsatisfiable: what the resources could never satisfy is
// refused with why, and nothing is stored; what fits, or would once
// drained nodes return, is taken (issue 16).
func TestSubmitUnsatisfiable(t *testing.T) {
	st := openStore(t)
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1"), GPUs: idset.MustParse("0")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-3")},
	})
	raw, _ := inv.MarshalJSON()
	now := time.Unix(100, 0)
	if err := st.Update(func(tx *store.Tx) error { return tx.PutInventory(raw) }); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(tx *store.Tx) error { _, err := Drain(tx, "0-1", "all down", false, now); return err }); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"true"}
	for _, tc := range []struct {
		name string
		opts jobspec.Options
		want string // "" when it is taken
	}{
		{"fits", jobspec.Options{Command: cmd, NTasks: 6}, ""},
		{"fits on the big node", jobspec.Options{Command: cmd, CoresPerTask: 4}, ""},
		{"a GPU", jobspec.Options{Command: cmd, GPUsPerTask: 1}, ""},
		{"too many cores", jobspec.Options{Command: cmd, NTasks: 7}, "unsatisfiable request: it needs 7 cores in all; the instance has 2 nodes, 6 cores and 1 GPU"},
		{"too big a task", jobspec.Options{Command: cmd, CoresPerTask: 5}, "unsatisfiable request: a task needs 5 cores, and no node has more than 4"},
		{"two GPUs", jobspec.Options{Command: cmd, NTasks: 2, GPUsPerTask: 1}, "unsatisfiable request: it needs 2 GPUs in all; the instance has 2 nodes, 6 cores and 1 GPU"},
		{"three nodes", jobspec.Options{Command: cmd, NTasks: 3, Nodes: 3}, "unsatisfiable request: it needs 3 nodes; the instance has 2 nodes, 6 cores and 1 GPU"},
		// More nodes than the instance has cores: the nodes are what it
		// lacks first (issue 27: it once said "it needs 7 cores in all").
		{"more nodes than cores", jobspec.Options{Command: cmd, Nodes: 7}, "unsatisfiable request: it needs 7 nodes; the instance has 2 nodes, 6 cores and 1 GPU"},
		{"no such host", jobspec.Options{Command: cmd, Constraints: mustQuery(t, "host:n9")}, "unsatisfiable request: no node satisfies its constraints (host:n9)"},
		{"memory where none is known", jobspec.Options{Command: cmd, MemPerSlot: 1 << 30},
			"unsatisfiable request: it asks for 1G of memory per task, and no node's memory is known (give it in [[resource.config]] memory)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after uint64
			err := st.Update(func(tx *store.Tx) error {
				before = tx.LastJobID()
				_, _, err := Submit(tx, now, []SubmitRequest{{Jobspec: spec(t, tc.opts), UserID: 1, Owner: true, Urgency: 16}}, nil)
				after = tx.LastJobID()
				return err
			})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Submit: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, ErrUnsatisfiable)):
				t.Fatalf("Submit: %v, want %q", err, tc.want)
			case tc.want != "" && after != before:
				t.Errorf("a refused submission stored a job")
			}
		})
	}
}

// Memory is judged at submission as cores are: the instance's memory in
// all, the most one node has, and what one node's share of tasks needs.
func TestSubmitUnsatisfiableMemory(t *testing.T) {
	const gib = 1 << 30
	st := openStore(t)
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-3"), Memory: 2 * gib},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-3"), Memory: 4 * gib},
	})
	raw, _ := inv.MarshalJSON()
	if err := st.Update(func(tx *store.Tx) error { return tx.PutInventory(raw) }); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"true"}
	for _, tc := range []struct {
		name string
		opts jobspec.Options
		want string
	}{
		{"fits the big node", jobspec.Options{Command: cmd, MemPerSlot: 4 * gib}, ""},
		{"fits both", jobspec.Options{Command: cmd, NTasks: 3, MemPerSlot: 2 * gib}, ""},
		{"more than all", jobspec.Options{Command: cmd, NTasks: 4, MemPerSlot: 2 * gib}, "unsatisfiable request: it needs 8G of memory in all; the instance has 6G"},
		{"a task bigger than any node", jobspec.Options{Command: cmd, MemPerSlot: 5 * gib}, "unsatisfiable request: a task needs 5G of memory, and no node has more than 4G"},
		{"a node's share too big", jobspec.Options{Command: cmd, NTasks: 2, Nodes: 1, MemPerSlot: 5 * gib / 2},
			"unsatisfiable request: 2 tasks on a node need 5G of memory, and no node has more than 4G"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := st.Update(func(tx *store.Tx) error {
				_, _, err := Submit(tx, time.Unix(100, 0), []SubmitRequest{{Jobspec: spec(t, tc.opts), UserID: 1, Owner: true, Urgency: 16}}, nil)
				return err
			})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("Submit: %v, want %q", err, tc.want)
			}
		})
	}
}

func mustQuery(t *testing.T, q string) constraint.Constraint {
	t.Helper()
	c, err := constraint.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
