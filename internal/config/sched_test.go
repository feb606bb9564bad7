package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
)

// The queue policies a config gives the scheduler: [sched] for every
// queue, a queue's policy.scheduler over it.
func TestPolicies(t *testing.T) {
	def := sched.DefaultPolicy()
	with := func(f func(*sched.QueuePolicy)) sched.QueuePolicy {
		p := def
		f(&p)
		return p
	}
	tests := []struct {
		name    string
		toml    string
		def     sched.QueuePolicy
		queues  map[string]sched.QueuePolicy
		wantErr string
	}{
		{name: "defaults", toml: "", def: def, queues: map[string]sched.QueuePolicy{}},
		{name: "easy", toml: "[sched]\npolicy = \"easy\"\nqueue-depth = 0\n",
			def: with(func(p *sched.QueuePolicy) { p.Kind, p.QueueDepth = sched.EASY, 0 }), queues: map[string]sched.QueuePolicy{}},
		{name: "per queue over [sched]",
			toml: "[sched]\npolicy = \"easy\"\nmatch-policy = \"first-fit\"\n[policy.jobspec.defaults.system]\nqueue = \"batch\"\n[queues.batch.policy.scheduler]\npolicy = \"hybrid\"\nreservation-depth = 8\n[queues.debug]\n",
			def:  with(func(p *sched.QueuePolicy) { p.Kind, p.Match = sched.EASY, resource.FirstFit }),
			queues: map[string]sched.QueuePolicy{"batch": with(func(p *sched.QueuePolicy) {
				p.Kind, p.Match, p.ReservationDepth = sched.Hybrid, resource.FirstFit, 8
			})}},
		{name: "unknown policy", toml: "[sched]\npolicy = \"sjf\"\n",
			wantErr: `error parsing [sched] config table: unknown queue policy "sjf" (want fcfs, easy, hybrid or conservative)`},
		{name: "negative depth", toml: "[sched]\nqueue-depth = -1\n",
			wantErr: "error parsing [sched] config table: queue-depth must be 0 (all) or more, not -1"},
		{name: "zero reservation depth", toml: "[sched]\nreservation-depth = 0\n",
			wantErr: "error parsing [sched] config table: reservation-depth must be 1 or more"},
		{name: "queue policy not a string", toml: "[queues.batch.policy.scheduler]\npolicy = 1\n",
			wantErr: "error parsing [queues.batch.policy.scheduler] config table: policy must be a string"},
		{name: "queue depth not a number", toml: "[queues.batch.policy.scheduler]\nqueue-depth = \"deep\"\n",
			wantErr: "error parsing [queues.batch.policy.scheduler] config table: queue-depth must be a whole number from 0 to 2147483647"},
		// A bad key of the global table is named there, not in the first
		// queue that inherits it.
		{name: "global scheduler table", toml: "[policy.scheduler]\nqueue-depth = \"x\"\n[queues.a]\n",
			wantErr: "error parsing [policy.scheduler] config table: queue-depth must be a whole number from 0 to 2147483647"},
		{name: "queue match policy", toml: "[queues.batch.policy.scheduler]\nmatch-policy = \"random\"\n",
			wantErr: `error parsing [queues.batch.policy.scheduler] config table: unknown match-policy "random" (want first-fit, worst-fit or best-fit)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.toml")
			if err := os.WriteFile(path, []byte(tc.toml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			def, queues, err := cfg.Policies()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.def, def); diff != "" {
				t.Errorf("default (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.queues, queues); diff != "" {
				t.Errorf("queues (-want +got):\n%s", diff)
			}
		})
	}
}
