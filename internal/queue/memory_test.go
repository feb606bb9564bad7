package queue

import (
	"errors"
	"strings"
	"testing"

	"github.com/fluxq/fluxq/internal/jobspec"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// memSize is a job-size side bounding memory alone.
func memSize(s string) Size { return Size{Memory: &s} }

// memTables: a global default and maximum, a queue that lifts both, one
// with a minimum and one with its own maximum, and a virtual queue that
// inherits its parent's.
func memTables() Tables {
	return Tables{
		Policy: Policy{
			Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Queue: str("batch"), Memory: str("1G")}}},
			Limits:  Limits{JobSize: JobSize{Max: memSize("8G")}},
		},
		Queues: map[string]Config{
			"batch": {},
			"free": {Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("0")}}},
				Limits:  Limits{JobSize: JobSize{Max: memSize("unlimited")}},
			}},
			"big": {Policy: Policy{
				Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("0")}}},
				Limits:  Limits{JobSize: JobSize{Min: memSize("4G"), Max: memSize("-1")}},
			}},
			"small": {Policy: Policy{Limits: Limits{JobSize: JobSize{Max: memSize("512M")}}}},
			"sub":   {Parent: "small"},
		},
	}
}

func TestCompileMemory(t *testing.T) {
	s := mustCompile(t, memTables())
	tests := []struct {
		queue         string
		dflt, max, mn uint64
	}{
		{"batch", gib, 8 * gib, 0},
		{"free", 0, 0, 0},
		{"big", 0, 0, 4 * gib},
		{"small", gib, 512 * mib, 0},
		{"sub", gib, 512 * mib, 0}, // a virtual queue inherits its parent's
	}
	for _, tc := range tests {
		q, ok := s.Queue(tc.queue)
		if !ok {
			t.Fatalf("no queue %q", tc.queue)
		}
		if q.DefaultMemory != tc.dflt || q.MaxMemory != tc.max || q.MinMemory != tc.mn {
			t.Errorf("%s: default %d max %d min %d, want %d %d %d", tc.queue,
				q.DefaultMemory, q.MaxMemory, q.MinMemory, tc.dflt, tc.max, tc.mn)
		}
	}
	anon := mustCompile(t, Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Min: memSize("1536")}}}})
	if q, _ := anon.Queue(""); q.MinMemory != 1536*mib {
		t.Errorf("bare number: min %d, want 1536M (a bare size is in MB, as --mem reads it)", q.MinMemory)
	}
}

func TestCompileMemoryErrors(t *testing.T) {
	tests := []struct {
		name   string
		tables Tables
		want   string
	}{
		{"max not a size", Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Max: memSize("lots")}}}},
			`error parsing [policy.limits] config table: job-size.max.memory: invalid memory size "lots" (want a size such as 512M, 4G or 1.5T)`},
		{"min over 1E", Tables{Queues: map[string]Config{"q": {Policy: Policy{Limits: Limits{JobSize: JobSize{Min: memSize("2048P")}}}}}},
			`error parsing [queues.q.policy.limits] config table: job-size.min.memory: memory size "2048P" is over the largest allowed, 1E`},
		{"negative", Tables{Policy: Policy{Limits: Limits{JobSize: JobSize{Max: memSize("-2G")}}}},
			`error parsing [policy.limits] config table: job-size.max.memory: invalid memory size "-2G" (want a size such as 512M, 4G or 1.5T)`},
		{"default not a size", Tables{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("4X")}}}}},
			`error parsing [policy.jobspec.defaults.system] config table: memory: invalid memory size "4X" (want a size such as 512M, 4G or 1.5T)`},
		{"default unlimited", Tables{Queues: map[string]Config{"q": {Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("unlimited")}}}}}}},
			`error parsing [queues.q.policy.jobspec.defaults.system] config table: memory: invalid memory size "unlimited" (want a size such as 512M, 4G or 1.5T)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.tables)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Compile = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// The default is applied before the limits are checked (as the default
// duration is), and the limits count the job's total: slots x per slot.
func TestAdmitMemory(t *testing.T) {
	named := mustCompile(t, memTables())
	anon := mustCompile(t, Tables{Policy: Policy{
		Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("256M")}}},
		Limits:  Limits{JobSize: JobSize{Min: memSize("1G"), Max: memSize("2G")}},
	}})
	tests := []struct {
		name    string
		set     *Set
		opts    jobspec.Options
		err     string
		perSlot uint64 // memory per slot after admission
	}{
		{name: "global default", set: named, opts: jobspec.Options{}, perSlot: gib},
		{name: "asked memory is kept", set: named, opts: jobspec.Options{MemPerSlot: 3 * gib}, perSlot: 3 * gib},
		{name: "default for every slot", set: named, opts: jobspec.Options{NTasks: 4}, perSlot: gib},
		{name: "queue lifts the default", set: named, opts: jobspec.Options{Queue: "free"}},
		{name: "over the global max", set: named, opts: jobspec.Options{MemPerSlot: 9 * gib},
			err: "requested memory (9G) exceeds policy limit of 8G for queue batch"},
		{name: "total over the max", set: named, opts: jobspec.Options{NTasks: 3, MemPerSlot: 3 * gib},
			err: "requested memory (9G) exceeds policy limit of 8G for queue batch"},
		{name: "queue lifts the max", set: named, opts: jobspec.Options{Queue: "free", MemPerSlot: 64 * gib}, perSlot: 64 * gib},
		{name: "queue max", set: named, opts: jobspec.Options{Queue: "small", MemPerSlot: 600 * mib},
			err: "requested memory (600M) exceeds policy limit of 512M for queue small"},
		{name: "default over the queue max", set: named, opts: jobspec.Options{Queue: "small"},
			err: "requested memory (1G) exceeds policy limit of 512M for queue small"},
		{name: "virtual queue inherits", set: named, opts: jobspec.Options{Queue: "sub", MemPerSlot: 513 * mib},
			err: "requested memory (513M) exceeds policy limit of 512M for queue sub"},
		{name: "under the queue min", set: named, opts: jobspec.Options{Queue: "big", MemPerSlot: 2 * gib},
			err: "requested memory (2G) is under policy limit of 4G for queue big"},
		{name: "none asked is under a min", set: named, opts: jobspec.Options{Queue: "big"},
			err: "requested memory (none) is under policy limit of 4G for queue big"},
		{name: "total meets the min", set: named, opts: jobspec.Options{Queue: "big", NTasks: 2, MemPerSlot: 2 * gib}, perSlot: 2 * gib},
		{name: "anonymous: default times slots meets the min", set: anon, opts: jobspec.Options{NTasks: 4}, perSlot: 256 * mib},
		{name: "anonymous: default under the min", set: anon, opts: jobspec.Options{NTasks: 2},
			err: "requested memory (512M) is under policy limit of 1G"},
		{name: "anonymous: over the max", set: anon, opts: jobspec.Options{MemPerSlot: 2*gib + kib},
			err: "requested memory (2097153K) exceeds policy limit of 2G"}, // not "2G exceeds 2G"
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := job(t, tc.opts)
			err := tc.set.Admit(js, nil, carol)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || !errors.Is(err, ErrRejected) {
					t.Fatalf("Admit = %v, want rejection %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Admit: %v", err)
			}
			if got := js.Counts().MemPerSlot; got != tc.perSlot {
				t.Errorf("memory per slot %d, want %d", got, tc.perSlot)
			}
		})
	}
}

// A queue without memory policy leaves a jobspec as it was: no vertex.
func TestAdmitWithoutMemoryPolicy(t *testing.T) {
	js := job(t, jobspec.Options{})
	b, err := Anonymous().AdmitCanonical(js, nil, carol)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"memory"`) {
		t.Errorf("a jobspec gained memory without a default: %s", b)
	}
}

// The default is written as --mem writes it, and reads back.
func TestAdmitMemoryDefaultCanonical(t *testing.T) {
	s := mustCompile(t, Tables{Policy: Policy{Jobspec: JobspecPolicy{Defaults: JobspecDefaults{System: SystemDefaults{Memory: str("1536M")}}}}})
	js := job(t, jobspec.Options{NTasks: 2, GPUsPerTask: 1})
	b, err := s.AdmitCanonical(js, nil, carol)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"count":1536,"type":"memory","unit":"MB"}`) {
		t.Errorf("admitted jobspec: %s", b)
	}
	back, err := jobspec.Parse(b)
	if err != nil {
		t.Fatalf("admitted jobspec does not parse: %v", err)
	}
	if got := back.Counts().MemPerSlot; got != 1536*mib {
		t.Errorf("read back %d bytes per slot", got)
	}
}

// Every value parseMemoryLimit accepts is a bound ParseMemory could have
// read, and none makes it panic.
func FuzzMemoryLimit(f *testing.F) {
	for _, s := range []string{"8G", "0", "-1", "unlimited", "INF", "1.5T", "512", "1E", "1024P", " 4g ", "", "-", "0.0001K", "1e3M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseMemoryLimit(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if n > jobspec.MaxMemory {
			t.Fatalf("%q: limit %d over 1E", s, n)
		}
		if n > 0 {
			if m, err := jobspec.ParseMemory(s); err != nil || m != n {
				t.Fatalf("%q: limit %d, ParseMemory %d, %v", s, n, m, err)
			}
		}
	})
}
