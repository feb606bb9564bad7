package state

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/store"
)

// A jobspec submitted as built (SubmitRequest.Parsed, the simulator's
// way) is stored and recorded exactly as the same jobspec submitted
// encoded: the simulation's schedules must not depend on which.
func TestSubmitParsedAsEncoded(t *testing.T) {
	for _, c := range []struct {
		name string
		o    jobspec.Options
	}{
		{"cores", jobspec.Options{NTasks: 8, CoresPerTask: 1, Duration: 3600, Command: []string{"swf-job", "1"}, Name: "1"}},
		{"memory", jobspec.Options{NTasks: 3, CoresPerTask: 1, MemPerSlot: 1 << 30, Duration: 60, Command: []string{"swf-job", "2"}, Name: "2"}},
		{"tiny duration", jobspec.Options{NTasks: 1, CoresPerTask: 1, Duration: math.SmallestNonzeroFloat64, Command: []string{"swf-job", "3"}, Name: "3"}},
		{"queue and nodes", jobspec.Options{Nodes: 2, NTasks: 4, Queue: "", Command: []string{"true"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			submit := func(req SubmitRequest) ([]byte, *Record) {
				st := openStore(t)
				var raw []byte
				var rec *Record
				err := st.Update(func(tx *store.Tx) error {
					ids, recs, err := Submit(tx, time.Unix(1e9, 0), []SubmitRequest{req}, nil)
					if err != nil {
						return err
					}
					rec = recs[0]
					b, err := tx.JobValue(uint64(ids[0]), store.JobJobspec)
					raw = bytes.Clone(b)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return raw, rec
			}
			built, err := jobspec.FromOptions(c.o)
			if err != nil {
				t.Fatal(err)
			}
			enc := spec(t, c.o)
			wantRaw, wantRec := submit(SubmitRequest{Jobspec: enc, UserID: 5, Owner: true, Urgency: 16})
			gotRaw, gotRec := submit(SubmitRequest{Parsed: built, UserID: 5, Owner: true, Urgency: 16})
			if !bytes.Equal(gotRaw, wantRaw) {
				t.Errorf("stored jobspec\n got %s\nwant %s", gotRaw, wantRaw)
			}
			if !reflect.DeepEqual(gotRec.Spec, wantRec.Spec) || !reflect.DeepEqual(gotRec.Job, wantRec.Job) {
				t.Errorf("record\n got %+v %+v\nwant %+v %+v", gotRec.Spec, gotRec.Job, wantRec.Spec, wantRec.Job)
			}
		})
	}
}
