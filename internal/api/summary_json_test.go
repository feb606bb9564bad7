package api

import (
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/fluxq/fluxq/internal/job"
)

// The JSON of a summary is what it was when state and result were strings:
// stored summaries load, and the socket and the store see the same bytes.
// Both encoders are checked: the store and the socket use go-json, the CLI
// encoding/json.
func TestJobSummaryJSONUnchanged(t *testing.T) {
	rc, ws := 2, 512
	for _, tc := range []struct {
		name string
		s    JobSummary
		want string
	}{
		{"pending", JobSummary{ID: 1, State: job.Sched, Priority: 16, TSubmit: 1.5},
			`{"id":1,"userid":0,"queue":"","name":"","state":"SCHED","urgency":0,"priority":16,"ntasks":0,"nnodes":0,"ncores":0,"ngpus":0,"duration":0,"t_submit":1.5}`},
		{"inactive", JobSummary{ID: 2, State: job.Inactive, Result: job.Failed, ReturnCode: &rc, WaitStatus: &ws},
			`{"id":2,"userid":0,"queue":"","name":"","state":"INACTIVE","result":"FAILED","urgency":0,"priority":0,"ntasks":0,"nnodes":0,"ncores":0,"ngpus":0,"duration":0,"t_submit":0,"returncode":2,"waitstatus":512}`},
	} {
		for enc, marshal := range map[string]func(any) ([]byte, error){"encoding/json": json.Marshal, "go-json": gojson.Marshal} {
			b, err := marshal(tc.s)
			if err != nil || string(b) != tc.want {
				t.Errorf("%s, %s: %s, %v\nwant %s", tc.name, enc, b, err, tc.want)
			}
		}
		for enc, unmarshal := range map[string]func([]byte, any) error{"encoding/json": json.Unmarshal, "go-json": gojson.Unmarshal} {
			var got JobSummary
			if err := unmarshal([]byte(tc.want), &got); err != nil || got.State != tc.s.State || got.Result != tc.s.Result {
				t.Errorf("%s, %s: loaded state %v result %v, %v", tc.name, enc, got.State, got.Result, err)
			}
		}
	}
}

// Every state and result name a summary was ever stored with loads back.
func TestJobSummaryLoadsEveryName(t *testing.T) {
	for _, st := range []job.State{job.New, job.Depend, job.Priority, job.Sched, job.Run, job.Cleanup, job.Inactive} {
		var s JobSummary
		if err := gojson.Unmarshal([]byte(`{"state":"`+st.String()+`"}`), &s); err != nil || s.State != st {
			t.Errorf("state %s: got %v, %v", st, s.State, err)
		}
	}
	for _, r := range []job.Result{job.Completed, job.Failed, job.Canceled, job.Timeout} {
		var s JobSummary
		if err := gojson.Unmarshal([]byte(`{"state":"INACTIVE","result":"`+r.String()+`"}`), &s); err != nil || s.Result != r {
			t.Errorf("result %s: got %v, %v", r, s.Result, err)
		}
	}
	var s JobSummary
	if err := gojson.Unmarshal([]byte(`{"state":"BOGUS"}`), &s); err == nil {
		t.Error("an unknown state loaded")
	}
}

// A query's mask and results travel as numbers, as before they were typed.
func TestJobsQueryJSONUnchanged(t *testing.T) {
	q := JobsQuery{States: job.Pending | job.Running, Results: []job.Result{job.Completed, job.Timeout}, Count: 3}
	want := `{"states":62,"results":[1,8],"all_users":false,"count":3}`
	for enc, marshal := range map[string]func(any) ([]byte, error){"encoding/json": json.Marshal, "go-json": gojson.Marshal} {
		b, err := marshal(q)
		if err != nil || string(b) != want {
			t.Errorf("%s: %s, %v\nwant %s", enc, b, err, want)
		}
		var back JobsQuery
		if err := gojson.Unmarshal(b, &back); err != nil || back.States != q.States || len(back.Results) != 2 || back.Results[1] != job.Timeout || back.Count != 3 {
			t.Errorf("%s: read back %+v, %v", enc, back, err)
		}
	}
	b, _ := json.Marshal(JobsQuery{})
	if string(b) != `{"states":0,"all_users":false}` {
		t.Errorf("empty query: %s", b)
	}
}

// The name filter travels too: the server applies it before the count.
func TestJobsQueryNameTravels(t *testing.T) {
	q := JobsQuery{Name: "sleep", Count: 2}
	b, err := json.Marshal(q)
	if err != nil || string(b) != `{"states":0,"all_users":false,"name":"sleep","count":2}` {
		t.Fatalf("%s, %v", b, err)
	}
	var back JobsQuery
	if err := gojson.Unmarshal(b, &back); err != nil || back.Name != "sleep" || back.Count != 2 {
		t.Errorf("read back %+v, %v", back, err)
	}
}
