package state

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fluxq/fluxq/internal/eventlog"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// TestLoadAll: LoadAll hands on, in the order asked, the records Load
// gives one by one, across more than one chunk of its reads, and stops at
// the first job it cannot give: an unknown id, or a record that does not
// decode, with nothing after it handed on.
func TestLoadAll(t *testing.T) {
	st := openStore(t)
	const n = 9000 // more than one chunk
	var ids []fluid.ID
	err := st.Update(func(tx *store.Tx) error {
		reqs := make([]SubmitRequest, n)
		for i := range reqs {
			reqs[i] = SubmitRequest{Jobspec: spec(t, jobspec.Options{Command: []string{"job" + strconv.Itoa(i%7)}}), UserID: uint32(100 + i%3), Urgency: i % 17}
		}
		var err error
		if ids, _, err = Submit(tx, time.Now(), reqs, nil); err != nil {
			return err
		}
		// A few eventlogs longer than the submission's.
		for _, id := range everyThousand(ids) {
			rec, err := Load(tx, id)
			if err != nil {
				return err
			}
			ev := eventlog.Event{Timestamp: 1e9, Name: job.EventException, Context: map[string]any{"type": "test", "severity": 1, "note": "x"}}
			if err := Post(tx, rec, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Reversed and repeated: the order asked is the order handed on.
	asked := append(append([]fluid.ID(nil), ids[n/2:]...), ids[:n/2]...)
	asked = append(asked, ids[3])
	ignore := cmpopts.IgnoreUnexported(Record{})
	err = st.View(func(tx *store.Tx) error {
		i := 0
		if err := LoadAll(tx, asked, func(rec *Record) error {
			want, err := Load(tx, asked[i])
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, rec, ignore); diff != "" {
				t.Fatalf("job %s (-Load +LoadAll):\n%s", asked[i], diff)
			}
			i++
			return nil
		}); err != nil {
			return err
		}
		if i != len(asked) {
			t.Errorf("handed on %d records of %d", i, len(asked))
		}
		// An unknown id among them: what comes before it, and the error.
		i = 0
		bad := []fluid.ID{ids[0], ids[1], fluid.ID(ids[n-1] + 1000), ids[2]}
		err := LoadAll(tx, bad, func(*Record) error { i++; return nil })
		if !errors.Is(err, ErrUnknownJob) {
			t.Errorf("an unknown id: %v, want ErrUnknownJob", err)
		}
		if i != 0 {
			t.Errorf("an unknown id: %d records handed on before the error of its chunk, want none", i)
		}
		// fn's error stops it.
		stop := errors.New("stop")
		i = 0
		if err := LoadAll(tx, ids, func(*Record) error { i++; return stopIf(i == 10, stop) }); !errors.Is(err, stop) || i != 10 {
			t.Errorf("fn's error: %v after %d records, want stop after 10", err, i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A record that does not decode, in the second chunk.
	broken := ids[8500]
	if err := st.Update(func(tx *store.Tx) error {
		return tx.PutJobValue(uint64(broken), store.JobEventlog, []byte("not an eventlog\n"))
	}); err != nil {
		t.Fatal(err)
	}
	_ = st.View(func(tx *store.Tx) error {
		var last fluid.ID
		err := LoadAll(tx, ids, func(rec *Record) error { last = rec.Job.ID; return nil })
		if err == nil || last != ids[8499] {
			t.Errorf("a damaged record: %v, the last handed on %s, want an error after %s", err, last, ids[8499])
		}
		return nil
	})
}

func stopIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}

func everyThousand(ids []fluid.ID) []fluid.ID {
	var out []fluid.ID
	for i := 0; i < len(ids); i += 1000 {
		out = append(out, ids[i])
	}
	return out
}
