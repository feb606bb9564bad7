package fluxq

import (
	"encoding/json"
	"testing"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/execproto"
	"github.com/fluxq/fluxq/internal/jobspec"
)

func TestJobMemory(t *testing.T) {
	spec := func(o jobspec.Options) json.RawMessage {
		o.Command = []string{"true"}
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
	// Two ranks, 2G granted on each: R's memory is summed over hosts.
	r2 := json.RawMessage(`{"execution":{"R_lite":[{"children":{"core":"0"},"memory":2147483648,"rank":"0-1"}],"expiration":0,"nodelist":["n[0-1]"],"starttime":0},"version":1}`)
	rNone := json.RawMessage(`{"execution":{"R_lite":[{"children":{"core":"0"},"rank":"0"}],"expiration":0,"nodelist":["n0"],"starttime":0},"version":1}`)
	tests := []struct {
		name  string
		info  api.JobInfo
		shown bool
		line  string
	}{
		{name: "none asked", info: api.JobInfo{Jobspec: spec(jobspec.Options{}), R: rNone,
			Summary: api.JobSummary{Usage: &execproto.Usage{MaxRSS: 5 << 20}}}},
		{name: "pending", info: api.JobInfo{Jobspec: spec(jobspec.Options{MemPerSlot: 1000 << 20})}, shown: true,
			line: "asked 1000M (1000M per slot), granted -, peak -"},
		{name: "running on two hosts", info: api.JobInfo{Jobspec: spec(jobspec.Options{NTasks: 2, MemPerSlot: 2 << 30}), R: r2}, shown: true,
			line: "asked 4G (2G per slot), granted 4G, peak -"},
		{name: "finished", info: api.JobInfo{Jobspec: spec(jobspec.Options{NTasks: 2, MemPerSlot: 2 << 30}), R: r2,
			Summary: api.JobSummary{Usage: &execproto.Usage{MaxRSS: 1288490188}}}, shown: true,
			line: "asked 4G (2G per slot), granted 4G, peak 1.1G"},
		{name: "jobspec that does not parse", info: api.JobInfo{Jobspec: json.RawMessage(`{`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := memoryOf(&tc.info)
			if m.shown() != tc.shown {
				t.Fatalf("shown = %v, want %v (%+v)", m.shown(), tc.shown, m)
			}
			if tc.shown && m.line() != tc.line {
				t.Errorf("line %q\nwant %q", m.line(), tc.line)
			}
			b, err := json.Marshal(m.json())
			if err != nil {
				t.Fatal(err)
			}
			if !tc.shown && string(b) != "{}" {
				t.Errorf("json %s, want no memory keys", b)
			}
		})
	}
}
