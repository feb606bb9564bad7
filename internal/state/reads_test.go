package state

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/rset"
	"github.com/fluxq/fluxq/internal/store"
)

// readStore holds three jobs of users 5 and 6, one of them canceled, on
// an inventory of one node.
func readStore(t *testing.T) (*store.Store, []fluid.ID) {
	t.Helper()
	st := openStore(t)
	inv := rset.New([]rset.Node{{Rank: 0, Hostname: "node0", Cores: idset.MustParse("0-1")}})
	raw, _ := inv.MarshalJSON()
	var ids []fluid.ID
	err := st.Update(func(tx *store.Tx) error {
		if err := tx.PutInventory(raw); err != nil {
			return err
		}
		if _, err := StartQueues(tx, queue.Anonymous()); err != nil {
			return err
		}
		var reqs []SubmitRequest
		for i, uid := range []uint32{5, 5, 6} {
			reqs = append(reqs, SubmitRequest{Jobspec: spec(t, jobspec.Options{Command: []string{"true"}, Cwd: "/home/u", Name: []string{"a", "b", "c"}[i]}), UserID: uid, Urgency: 16})
		}
		var err error
		var recs []*Record
		ids, recs, err = Submit(tx, time.Now(), reqs, nil)
		if err != nil {
			return err
		}
		// The second ends canceled, as the job manager would post it.
		now := Timestamp(time.Now())
		for _, ev := range []eventlog.Event{
			{Timestamp: now, Name: "exception", Context: map[string]any{"type": "cancel", "severity": 0, "note": "wrong input"}},
			{Timestamp: now, Name: "clean"},
		} {
			if err := Post(tx, recs[1], ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, ids
}

func TestReads(t *testing.T) {
	st, ids := readStore(t)
	err := st.View(func(tx *store.Tx) error {
		names := func(q api.JobsQuery, uid uint32) []string {
			t.Helper()
			js, err := ListJobs(tx, uid, q)
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			var out []string
			for _, j := range js {
				out = append(out, j.Name)
			}
			return out
		}
		if got := names(api.JobsQuery{}, 5); !slices.Equal(got, []string{"a"}) {
			t.Errorf("user 5's active jobs: %v", got)
		}
		if got := names(api.JobsQuery{AllUsers: true}, 5); !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("everyone's active jobs: %v", got)
		}
		if got := names(api.JobsQuery{Results: []job.Result{job.Canceled}, AllUsers: true}, 5); !slices.Equal(got, []string{"b"}) {
			t.Errorf("canceled: %v", got)
		}
		if got := names(api.JobsQuery{States: job.Pending | job.Inactive, AllUsers: true, Count: 2}, 5); len(got) != 2 {
			t.Errorf("count 2: %v", got)
		}
		// The name is a filter like the others: applied before the count,
		// so a count never hides a match behind a row of another name.
		for _, tt := range []struct {
			q    api.JobsQuery
			want []string
		}{
			{api.JobsQuery{States: job.All, AllUsers: true, Name: "c", Count: 1}, []string{"c"}},
			{api.JobsQuery{States: job.All, AllUsers: true, Name: "b", Count: 1}, []string{"b"}},
			{api.JobsQuery{States: job.All, AllUsers: true, Name: "a"}, []string{"a"}},
			{api.JobsQuery{States: job.All, Name: "c"}, nil}, // user 6's
			{api.JobsQuery{States: job.All, AllUsers: true, Name: "none", Count: 3}, nil},
		} {
			if got := names(tt.q, 5); !slices.Equal(got, tt.want) {
				t.Errorf("%+v: %v, want %v", tt.q, got, tt.want)
			}
		}
		if _, err := ListJobs(tx, 5, api.JobsQuery{IDs: []fluid.ID{999}}); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("unknown id: %v", err)
		}

		c, err := CountJobs(tx)
		if err != nil || c.Total != 3 || c.States["INACTIVE"] != 1 || c.Results["CANCELED"] != 1 {
			t.Errorf("CountJobs = %+v, %v", c, err)
		}
		qi, err := CountedQueues(tx)
		if err != nil || qi.Counts[""].Active != 2 || qi.Counts[""].Waiting != 2 {
			t.Errorf("CountedQueues = %+v, %v", qi, err)
		}
		res, err := LoadResources(tx)
		if err != nil || len(res.Inventory) == 0 || len(res.Drained) != 0 {
			t.Errorf("LoadResources = %+v, %v", res, err)
		}
		l, err := StoredReservations(tx, true)
		if err != nil || len(l.Reservations) != 0 {
			t.Errorf("StoredReservations = %+v, %v", l, err)
		}

		// A job whole: its owner and the instance owner only.
		if info, err := ReadJob(tx, Caller{UID: 6, JobsDir: "/j"}, api.IDParams{ID: ids[2]}); err != nil || info.Summary.Name != "c" || info.JobDir == "" {
			t.Errorf("owner reads its job: %+v, %v", info, err)
		}
		if _, err := ReadJob(tx, Caller{UID: 5}, api.IDParams{ID: ids[2]}); !errors.Is(err, api.ErrPermission) {
			t.Errorf("another user's job: %v", err)
		}
		if _, err := ReadJob(tx, Caller{UID: 5, Owner: true}, api.IDParams{ID: ids[2]}); err != nil {
			t.Errorf("instance owner: %v", err)
		}
		if err := MayFollow(tx, Caller{UID: 5}, 999); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("follow unknown: %v", err)
		}

		evs, done, err := NewEvents(tx, ids[1], 1)
		if err != nil || !done || len(evs) == 0 || evs[len(evs)-1].Name != "clean" {
			t.Errorf("NewEvents after 1 = %v, %v, %v", evs, done, err)
		}
		if ended, err := Ended(tx, ids[0]); err != nil || ended {
			t.Errorf("Ended(active) = %v, %v", ended, err)
		}
		if s, err := EndSummary(tx, ids[1]); err != nil || s.Result != job.Canceled {
			t.Errorf("EndSummary = %+v, %v", s, err)
		}
		if line, err := AppendEndLine(tx, ids[1], []byte("x")); err != nil {
			t.Errorf("AppendEndLine: %v", err)
		} else {
			var r api.Reply
			var s api.JobSummary
			want, _ := EndSummary(tx, ids[1])
			if line[0] != 'x' || json.Unmarshal(line[1:], &r) != nil || json.Unmarshal(r.Progress, &s) != nil ||
				s.ID != want.ID || s.Result != want.Result || line[len(line)-1] != '\n' {
				t.Errorf("AppendEndLine = %q, want the line of %+v", line, want)
			}
		}
		for _, f := range []func() error{
			func() error { _, err := AppendEndLine(tx, 999, nil); return err },
			func() error { _, _, err := NewEvents(tx, 999, 0); return err },
			func() error { _, err := Ended(tx, 999); return err },
			func() error { _, err := EndSummary(tx, 999); return err },
		} {
			if err := f(); !errors.Is(err, ErrUnknownJob) {
				t.Errorf("unknown job: %v", err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The reads bound to the table answer through the same Reader the server
// and the direct client use.
func TestReaders(t *testing.T) {
	st, _ := readStore(t)
	for _, m := range []string{"jobs", "job", "stats", "resources", "reservations"} {
		if _, ok := ReaderOf(m); !ok {
			t.Errorf("%s: no reader", m)
		}
	}
	if _, ok := ReaderOf("submit"); ok {
		t.Error("submit has a reader")
	}
	r, _ := ReaderOf("stats")
	st.View(func(tx *store.Tx) error {
		v, err := r.Run(tx, Caller{}, func(any) error { return nil })
		if c, ok := v.(api.JobCounts); err != nil || !ok || c.Total != 3 {
			t.Errorf("stats reader = %#v, %v", v, err)
		}
		return nil
	})
}

// A stored summary that is not one line of JSON (a damaged store) is
// refused, not spliced into a wait's stream, where a newline would break
// the caller's reading of every line after it.
func TestAppendEndLineDamaged(t *testing.T) {
	st, ids := readStore(t)
	for _, bad := range []string{"{\"id\":1,\n\"name\":\"x\"}", `{"id":1,"name":`, "\x00\x01"} {
		err := st.Update(func(tx *store.Tx) error { return tx.PutJobValue(uint64(ids[1]), store.JobSummary, []byte(bad)) })
		if err != nil {
			t.Fatal(err)
		}
		st.View(func(tx *store.Tx) error {
			line, err := AppendEndLine(tx, ids[1], []byte("x"))
			if err == nil || string(line) != "x" {
				t.Errorf("stored summary %q: AppendEndLine = %q, %v; want an error and nothing appended", bad, line, err)
			}
			return nil
		})
	}
}

// A job stored before summaries were (none beside its eventlog) gets the
// line of the summary its record gives, as a single wait answers.
func TestAppendEndLineNoStoredSummary(t *testing.T) {
	st, ids := readStore(t)
	err := st.Update(func(tx *store.Tx) error { return tx.PutJobValue(uint64(ids[1]), store.JobSummary, nil) })
	if err != nil {
		t.Fatal(err)
	}
	st.View(func(tx *store.Tx) error {
		want, err := EndSummary(tx, ids[1])
		if err != nil {
			t.Fatal(err)
		}
		line, err := AppendEndLine(tx, ids[1], nil)
		if err != nil {
			t.Fatalf("AppendEndLine: %v", err)
		}
		var r api.Reply
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("AppendEndLine = %q: %v", line, err)
		}
		got, err := api.StreamValue[api.JobSummary](&r)
		if err != nil || got.ID != ids[1] || got.Name != want.Name || got.State != want.State {
			t.Errorf("AppendEndLine = %q (%v), want the line of %+v", line, err, want)
		}
		return nil
	})
}

// TestListingRedacted: the listing a caller gets through the Jobs reader
// (the one both transports run) carries the command line, working
// directory and exception note of the caller's own jobs only, unless the
// caller is the instance owner; everything else of other users' jobs stays.
func TestListingRedacted(t *testing.T) {
	st, _ := readStore(t)
	r, ok := ReaderOf(api.Jobs.Name)
	if !ok {
		t.Fatal("no Jobs reader")
	}
	for _, tc := range []struct {
		name   string
		caller Caller
		full   map[string]bool // job name -> shown whole
	}{
		{"guest 5", Caller{UID: 5}, map[string]bool{"a": true, "b": true, "c": false}},
		{"guest 6", Caller{UID: 6}, map[string]bool{"a": false, "b": false, "c": true}},
		{"instance owner", Caller{UID: 0, Owner: true}, map[string]bool{"a": true, "b": true, "c": true}},
		{"stranger", Caller{UID: 7}, map[string]bool{"a": false, "b": false, "c": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := st.View(func(tx *store.Tx) error {
				v, err := r.Run(tx, tc.caller, func(p any) error {
					*p.(*api.JobsQuery) = api.JobsQuery{AllUsers: true, States: job.Active | job.Inactive}
					return nil
				})
				if err != nil {
					return err
				}
				list := v.([]api.JobSummary)
				if len(list) != 3 {
					t.Fatalf("listed %d jobs, want 3", len(list))
				}
				for _, s := range list {
					whole := len(s.Command) > 0 && s.Cwd != ""
					if whole != tc.full[s.Name] {
						t.Errorf("job %s of uid %d: command %q cwd %q; want whole=%v", s.Name, s.UserID, s.Command, s.Cwd, tc.full[s.Name])
					}
					if s.Name == "b" {
						if s.Exception == nil || s.Exception.Type != "cancel" {
							t.Fatalf("job b lost its exception (only its note may go): %+v", s.Exception)
						}
						if got := s.Exception.Note != ""; got != tc.full["b"] {
							t.Errorf("job b's note %q shown to %+v", s.Exception.Note, tc.caller)
						}
					}
					if s.Name == "" || s.TSubmit == 0 || s.NCores == 0 {
						t.Errorf("job %+v lost what everyone may see", s)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
