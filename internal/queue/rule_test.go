package queue

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// Rule leaves out of a limit's refusal what the one job asked, so that
// jobs refused by the same limit share it, and keeps every other refusal
// as it is.
func TestRule(t *testing.T) {
	named := mustCompile(t, admitTables())
	mem := mustCompile(t, memTables())
	anon := mustCompile(t, Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Max: memSize("1.5G")}}}})
	tests := []struct {
		name string
		set  *Set
		opts jobspec.Options
		user User
		rule string
	}{
		{name: "duration", set: named, opts: jobspec.Options{Duration: 7200},
			rule: "requested duration exceeds policy limit of 1h for queue batch"},
		{name: "another duration, the same rule", set: named, opts: jobspec.Options{Duration: 9000},
			rule: "requested duration exceeds policy limit of 1h for queue batch"},
		{name: "ncores", set: named, opts: jobspec.Options{NTasks: 5, Duration: 60},
			rule: "requested ncores exceeds policy limit of 4 for queue batch"},
		{name: "under a minimum", set: named, opts: jobspec.Options{Queue: "gpu", NTasks: 8, Duration: 60},
			rule: "requested nnodes is under policy limit of 2 for queue gpu"},
		{name: "memory", set: mem, opts: jobspec.Options{MemPerSlot: 9 * gib},
			rule: "requested memory exceeds policy limit of 8G for queue batch"},
		{name: "memory shown alone", set: anon, opts: jobspec.Options{MemPerSlot: 1536*mib + kib},
			rule: "requested memory exceeds policy limit of 1.5G"},
		{name: "no job value: the message", set: named, opts: jobspec.Options{Queue: "nosuch"},
			rule: "Invalid queue 'nosuch' specified"},
		{name: "access", set: named, opts: jobspec.Options{Queue: "debug", Duration: 60}, user: carol,
			rule: "user carol is not allowed to submit to queue debug"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.set.Admit(job(t, tc.opts), nil, tc.user)
			if err == nil {
				t.Fatal("admitted")
			}
			if got := Rule(err); got != tc.rule {
				t.Errorf("Rule(%q) = %q, want %q", err, got, tc.rule)
			}
			// Wrapped, as a caller passes it on.
			if got := Rule(fmt.Errorf("job 7: %w", err)); got != tc.rule {
				t.Errorf("Rule of the wrapped refusal = %q, want %q", got, tc.rule)
			}
		})
	}
	if got := Rule(errors.New("disk full")); got != "" {
		t.Errorf("Rule of an error that is no refusal = %q, want \"\"", got)
	}
}
