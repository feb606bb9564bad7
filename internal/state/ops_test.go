package state

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "fluxq.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func spec(t *testing.T, o jobspec.Options) []byte {
	t.Helper()
	js, err := jobspec.FromOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := js.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSubmit(t *testing.T) {
	st := openStore(t)
	good := spec(t, jobspec.Options{Command: []string{"true"}})
	var ids []uint64
	err := st.Update(func(tx *store.Tx) error {
		got, recs, err := Submit(tx, time.Now(), []SubmitRequest{{Jobspec: good, UserID: 5, Urgency: 16}, {Jobspec: good, UserID: 5, Urgency: 0}}, nil)
		if err != nil {
			return err
		}
		if len(recs) != 2 || got[0] >= got[1] || got[0] == 0 {
			t.Errorf("ids %v: want two increasing, nonzero", got)
		}
		for _, id := range got {
			ids = append(ids, uint64(id))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.View(func(tx *store.Tx) error {
		if tx.LastJobID() != ids[1] {
			t.Errorf("last job id %d, want %d", tx.LastJobID(), ids[1])
		}
		rec, err := Load(tx, 0)
		if !errors.Is(err, ErrUnknownJob) || rec != nil {
			t.Errorf("Load of an unknown id = %v, %v", rec, err)
		}
		return nil
	})
}

// A refused batch leaves nothing behind, even inside a larger transaction
// that commits (the loop runs many requests in one turn).
func TestSubmitAllOrNothing(t *testing.T) {
	st := openStore(t)
	good := spec(t, jobspec.Options{Command: []string{"true"}})
	tests := []struct {
		name string
		reqs []SubmitRequest
		want string
	}{
		{"invalid jobspec", []SubmitRequest{{Jobspec: good, Urgency: 16}, {Jobspec: []byte(`{"version":1}`), Urgency: 16}}, "resources"},
		{"bad urgency", []SubmitRequest{{Jobspec: good, Urgency: 16}, {Jobspec: good, Urgency: 32}}, "urgency value is out of range"},
		{"unknown dependency", []SubmitRequest{{Jobspec: spec(t, jobspec.Options{Command: []string{"true"}, Dependencies: []string{"afterok:12345"}}), Urgency: 16}}, "unknown job id"},
		// Flux: a guest submits with urgency 0-16; above is the owner's.
		{"guest expedites", []SubmitRequest{{Jobspec: good, UserID: 5, Urgency: 16}, {Jobspec: good, UserID: 5, Urgency: 31}}, "only the instance owner may submit with urgency above 16"},
		// A raw jobspec, as a hostile client sends it, is held to the
		// bounds no CLI flag enforced for it (issue 24).
		{"duration beyond 100 years", []SubmitRequest{{Jobspec: good, Urgency: 16}, {Jobspec: rawSpec(`"duration": 8.64e13`), Urgency: 16}},
			"attributes.system: duration 8.64e+13 is longer than the longest allowed, 100 years (36525d)"},
		{"duration 1e308", []SubmitRequest{{Jobspec: rawSpec(`"duration": 1e308`), Urgency: 16}}, "duration 1e+308 is longer"},
		{"begin time past 9000", []SubmitRequest{{Jobspec: rawSpec(`"duration": 0, "dependencies": [{"scheme": "begin-time", "value": "1e12"}]`), Urgency: 16}},
			"attributes.system.dependencies[0]: time 1e12 is later than the latest allowed, 9000-01-01T00:00:00Z"},
		// output.limit: a size; a guest's at most 10M.
		{"bad output.limit", []SubmitRequest{{Jobspec: good, Urgency: 16, Owner: true}, {Jobspec: withShellOption(t, good, "limit", "lots"), Urgency: 16, Owner: true}}, `output.limit: invalid size "lots"`},
		{"guest output.limit over 10M", []SubmitRequest{{Jobspec: withShellOption(t, good, "limit", "20M"), UserID: 5, Urgency: 16}}, "output.limit: 20M is over the 10M of output a guest's job may keep"},
		// [access] guest-max-active-jobs: the batch counts whole.
		{"guest over its active cap", []SubmitRequest{{Jobspec: good, UserID: 5, Urgency: 16, MaxActive: 5, Active: 4}, {Jobspec: good, UserID: 5, Urgency: 16, MaxActive: 5, Active: 4}}, "2 jobs would give user "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := st.Update(func(tx *store.Tx) error {
				_, _, err := Submit(tx, time.Now(), tc.reqs, nil)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Submit err = %v, want it to contain %q", err, tc.want)
				}
				return nil // commit whatever Submit may have written
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = st.View(func(tx *store.Tx) error {
				n := 0
				_ = tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { n++; return true, nil })
				if n != 0 {
					t.Errorf("%d jobs stored after a refused batch", n)
				}
				return nil
			})
		})
	}
}

// rawSpec is a jobspec of one task written by hand, with system as the
// members of attributes.system.
func rawSpec(system string) []byte {
	return []byte(`{"version": 1, "resources": [{"type": "slot", "count": 1, "label": "task", "with": [{"type": "core", "count": 1}]}],
"tasks": [{"command": ["true"], "slot": "task", "count": {"per_slot": 1}}], "attributes": {"system": {` + system + `}}}`)
}

func TestDrain(t *testing.T) {
	st := openStore(t)
	inv := rset.New([]rset.Node{
		{Rank: 0, Hostname: "n0", Cores: idset.MustParse("0-1")},
		{Rank: 1, Hostname: "n1", Cores: idset.MustParse("0-1")},
		{Rank: 2, Hostname: "n2", Cores: idset.MustParse("0-1")},
	})
	raw, _ := inv.MarshalJSON()
	now := time.Unix(100, 0)
	err := st.Update(func(tx *store.Tx) error {
		if _, err := Drain(tx, "n1", "x", false, now); err == nil {
			t.Error("drain before the inventory is known succeeded")
		}
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		if d, err := Drain(tx, "n[0-1]", "fan", false, now); err != nil || d.String() != "0-1" {
			t.Errorf("Drain = %v, %v", d, err)
		}
		if _, err := Drain(tx, "1", "again", false, now); err == nil || !strings.Contains(err.Error(), "already drained") {
			t.Errorf("second drain without force: %v", err)
		}
		if _, err := Drain(tx, "1", "again", true, now); err != nil {
			t.Errorf("forced drain: %v", err)
		}
		for _, bad := range []string{"n9", "7", "n[", ""} {
			if _, err := Drain(tx, bad, "", false, now); err == nil {
				t.Errorf("Drain(%q) accepted", bad)
			}
		}
		if d, err := Undrain(tx, "n0"); err != nil || d.String() != "1" {
			t.Errorf("Undrain = %v, %v", d, err)
		}
		if _, err := Undrain(tx, "2"); err == nil {
			t.Error("undrain of a node that is not drained succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.View(func(tx *store.Tx) error {
		var got []string
		_ = tx.ForEachDrain(func(rank uint64, rec []byte) error { got = append(got, string(rec)); return nil })
		if diff := cmp.Diff([]string{`{"timestamp":100,"reason":"again"}`}, got); diff != "" {
			t.Errorf("drain records (-want +got):\n%s", diff)
		}
		return nil
	})
}

// Queue changes: a reason is one line (it ends up in one-line messages),
// and a disabled queue refuses submissions with it.
func TestChangeQueues(t *testing.T) {
	st := openStore(t)
	on, off := true, false
	tests := []struct {
		name    string
		change  QueueChange
		wantErr string
		want    []string
	}{
		{"disable the anonymous queue", QueueChange{Enable: &off, Reason: "maintenance"}, "", []string{""}},
		{"two-line reason", QueueChange{Enable: &off, Reason: "a\nb"}, "the reason must be one line", nil},
		{"named queue without named queues", QueueChange{Queue: "batch", Start: &on}, "'batch' is not a valid queue", nil},
		{"enable all", QueueChange{All: true, Enable: &on}, "", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := st.Update(func(tx *store.Tx) error {
				names, _, _, err := ChangeQueues(tx, tt.change)
				if err == nil && !slices.Equal(names, tt.want) {
					t.Errorf("changed %q, want %q", names, tt.want)
				}
				return err
			})
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("ChangeQueues error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	err := st.Update(func(tx *store.Tx) error {
		if _, _, _, err := ChangeQueues(tx, QueueChange{Enable: &off, Reason: "maintenance"}); err != nil {
			return err
		}
		_, _, err := Submit(tx, time.Now(), []SubmitRequest{{Jobspec: spec(t, jobspec.Options{Command: []string{"true"}}), UserID: 1, Urgency: 16}}, nil)
		return err
	})
	if err == nil || err.Error() != "job submission is disabled: maintenance" {
		t.Fatalf("submit to a disabled queue: %v", err)
	}
}

// [access] guest-max-active-jobs: a batch is taken when it brings the
// guest to the cap at most, refused whole past it, in one line naming the
// key; a request with no cap (the owner's) is not counted.
func TestSubmitActiveCap(t *testing.T) {
	st := openStore(t)
	good := spec(t, jobspec.Options{Command: []string{"true"}})
	req := func(uid uint32, max, active int) SubmitRequest {
		return SubmitRequest{Jobspec: good, UserID: uid, Urgency: 16, MaxActive: max, Active: active}
	}
	for _, tc := range []struct {
		name string
		reqs []SubmitRequest
		want string // "" accepted
	}{
		{"under", []SubmitRequest{req(5, 5, 0), req(5, 5, 0)}, ""},
		{"to the cap", []SubmitRequest{req(5, 5, 3), req(5, 5, 3)}, ""},
		{"one over", []SubmitRequest{req(5, 5, 5)}, "1 job would give user "},
		{"batch over", []SubmitRequest{req(5, 5, 0), req(5, 5, 0), req(5, 5, 0), req(5, 5, 0), req(5, 5, 0), req(5, 5, 0)}, "6 jobs would give user "},
		{"no cap", []SubmitRequest{req(5, 0, 100000)}, ""},
		{"others' jobs not counted", []SubmitRequest{req(5, 1, 0), req(6, 1, 0), req(7, 0, 0)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n int
			err := st.Update(func(tx *store.Tx) error {
				before := tx.LastJobID()
				ids, _, err := Submit(tx, time.Now(), tc.reqs, nil)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("Submit err = %v, want accepted", err)
				case tc.want != "":
					if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "active jobs, over [access] guest-max-active-jobs = 5") {
						t.Errorf("Submit err = %v, want %q ... over [access] guest-max-active-jobs = 5", err, tc.want)
					}
					if tx.LastJobID() != before {
						t.Errorf("a refused batch moved the last job id")
					}
				}
				n = len(ids)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && n != 0 {
				t.Errorf("%d ids from a refused batch", n)
			}
		})
	}
}

// withShellOption returns the jobspec with shell option output.KEY set.
func withShellOption(t *testing.T, spec []byte, key string, v any) []byte {
	t.Helper()
	var js map[string]any
	if err := json.Unmarshal(spec, &js); err != nil {
		t.Fatal(err)
	}
	sys := js["attributes"].(map[string]any)["system"].(map[string]any)
	sys["shell"] = map[string]any{"options": map[string]any{"output": map[string]any{key: v}}}
	b, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// output.limit: the owner may set any size up to 1G, a guest up to 10M.
func TestSubmitOutputLimit(t *testing.T) {
	st := openStore(t)
	good := spec(t, jobspec.Options{Command: []string{"true"}})
	for _, tc := range []struct {
		name  string
		limit any
		owner bool
		want  string
	}{
		{"guest lowers", "1M", false, ""},
		{"guest at 10M", "10M", false, ""},
		{"guest in bytes", float64(4096), false, ""},
		{"guest over", "10.5M", false, "output.limit: 10752k is over the 10M"},
		{"owner raises", "1G", true, ""},
		{"owner over 1G", "2G", true, "output.limit: 2G is over the largest allowed, 1G"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = st.Update(func(tx *store.Tx) error {
				_, _, err := Submit(tx, time.Now(), []SubmitRequest{{Jobspec: withShellOption(t, good, "limit", tc.limit), UserID: 5, Owner: tc.owner, Urgency: 16}}, nil)
				if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("Submit err = %v, want %q", err, tc.want)
				}
				return nil
			})
		})
	}
}
