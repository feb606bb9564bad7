package queue

import (
	"encoding/json"
	"strings"
	"testing"
)

// RFC 33: of several named queues one MUST be the default; one named
// queue, or the anonymous one, needs none.
func TestRequireDefault(t *testing.T) {
	batch := "batch"
	tests := []struct {
		name    string
		tables  Tables
		wantErr string
	}{
		{"anonymous", Tables{}, ""},
		{"one queue", Tables{Queues: map[string]Config{"batch": {}}}, ""},
		{"two with a default", Tables{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: &batch}}}},
			Queues: map[string]Config{"batch": {}, "debug": {}}}, ""},
		{"two without", Tables{Queues: map[string]Config{"debug": {}, "batch": {}}},
			"error parsing [policy.jobspec.defaults.system] config table: queue is not set: RFC 33 says one of several named queues (batch, debug) MUST be the default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(tc.tables)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			err = s.RequireDefault()
			if (tc.wantErr == "") != (err == nil) || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("RequireDefault = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// Tables stored before the rule was enforced still load: the commands
// read them from the store, and a refusal there would strand the jobs.
func TestStoredTablesWithoutDefaultLoad(t *testing.T) {
	var s Set
	if err := json.Unmarshal([]byte(`{"queues":{"a":{},"b":{}}}`), &s); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if got := strings.Join(s.Names(), ","); got != "a,b" || s.Default() != "" {
		t.Errorf("names %q default %q, want a,b and none", got, s.Default())
	}
}
