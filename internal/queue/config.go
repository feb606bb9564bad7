// Package queue is RFC 33's job queues as pure rules: the [policy] and
// [queues] configuration tables in Flux's format, how a submission is
// assigned to a queue, given the queue's defaults and checked against its
// limits and access policy, and each queue's administrative state. It does
// no I/O: the store keeps the state, the job manager acts on it.
package queue

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fluxq/fluxq/internal/constraint"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/jobspec"
)

// Policy is a [policy] table: global, or a queue's own (RFC 33 "Policy
// Configuration"). Pointers tell a value that is set from one that is not,
// because a queue's value overrides the global one only where it is set.
// A `kind` tag words a value's type where Go's says too little, for the
// config's type errors (internal/config).
type Policy struct {
	Jobspec   JobspecPolicy  `toml:"jobspec" json:"jobspec,omitzero"`
	Limits    Limits         `toml:"limits" json:"limits,omitzero"`
	Access    Access         `toml:"access" json:"access,omitzero"`
	Scheduler map[string]any `toml:"scheduler" json:"scheduler,omitempty"`
}

// JobspecPolicy is policy.jobspec.
type JobspecPolicy struct {
	Defaults JobspecDefaults `toml:"defaults" json:"defaults,omitzero"`
}

// JobspecDefaults is policy.jobspec.defaults.
type JobspecDefaults struct {
	System SystemDefaults `toml:"system" json:"system,omitzero"`
}

// SystemDefaults is policy.jobspec.defaults.system: values given to jobs
// that do not set them.
type SystemDefaults struct {
	Duration *string `toml:"duration" json:"duration,omitempty" kind:"a duration string"` // FSD
	Queue    *string `toml:"queue" json:"queue,omitempty"`                                // global policy only
	// Memory is the memory of each slot of a job that asks none (a SIZE,
	// as --mem reads it; "0" gives none). RFC 33 names these keys after
	// jobspec attributes; memory is the slot's memory vertex instead,
	// because that is what placement and the limits read.
	Memory *string `toml:"memory" json:"memory,omitempty" kind:"a size string"`
}

// Limits is policy.limits.
type Limits struct {
	Duration *string `toml:"duration" json:"duration,omitempty" kind:"a duration string"` // FSD; "0" unlimited
	JobSize  JobSize `toml:"job-size" json:"job-size,omitzero"`
}

// JobSize is policy.limits.job-size.
type JobSize struct {
	Max Size `toml:"max" json:"max,omitzero"`
	Min Size `toml:"min" json:"min,omitzero"`
}

// Size is one side of job-size; -1 means unlimited.
type Size struct {
	NNodes *int64 `toml:"nnodes" json:"nnodes,omitempty"`
	NCores *int64 `toml:"ncores" json:"ncores,omitempty"`
	NGPUs  *int64 `toml:"ngpus" json:"ngpus,omitempty"`
	// Memory bounds the job's total memory (slots x memory per slot): a
	// SIZE as --mem reads it, or "0", "-1" or "unlimited" for no bound. A
	// string, not bytes, because sizes are what people write (RFC 33 has
	// no memory key).
	Memory *string `toml:"memory" json:"memory,omitempty" kind:"a size string"`
}

// Access is policy.access; an absent list means no restriction.
type Access struct {
	AllowUser  *[]string `toml:"allow-user" json:"allow-user,omitempty"`
	AllowGroup *[]string `toml:"allow-group" json:"allow-group,omitempty"`
}

// Config is one [queues.NAME] table.
type Config struct {
	// Requires lists resource properties every job of the queue needs
	// (RFC 31 "properties", and-ed with the job's own constraints).
	Requires []string `toml:"requires" json:"requires,omitempty"`
	// Parent makes this a virtual queue, scheduled only while its parent
	// is started, on its parent's resources.
	Parent string `toml:"parent" json:"parent,omitempty"`
	Policy Policy `toml:"policy" json:"policy,omitzero"`
}

// Tables is what a config file says about queues: [policy] and [queues].
// It is also what the store keeps, so that the commands never read the
// config file (RFC 33: "submission and listing tools SHOULD NOT need to
// parse the queues TOML table").
type Tables struct {
	Policy Policy            `toml:"policy" json:"policy,omitzero"`
	Queues map[string]Config `toml:"queues" json:"queues,omitempty"`
}

// Unlimited is a job-size limit that does not limit.
const Unlimited = -1

// Sizes is a compiled job-size side: each field -1 (unlimited) or >= 0.
type Sizes struct {
	NNodes int64 `json:"nnodes"`
	NCores int64 `json:"ncores"`
	NGPUs  int64 `json:"ngpus"`
}

var unlimitedSizes = Sizes{NNodes: Unlimited, NCores: Unlimited, NGPUs: Unlimited}

// Queue is one queue with its effective policy: the global policy, then
// its parent's, then its own, each overriding where set.
type Queue struct {
	Name   string // "" for the anonymous queue
	Parent string
	// Requires is the queue's properties, its parent's first.
	Requires []string
	// DefaultDuration is given to jobs without a duration (seconds, 0: none).
	DefaultDuration float64
	// MaxDuration bounds a job's duration (seconds, 0: unlimited).
	MaxDuration float64
	Max, Min    Sizes
	// DefaultMemory is given to each slot of a job that asks no memory
	// (bytes, 0: none).
	DefaultMemory uint64
	// MaxMemory and MinMemory bound a job's total memory in bytes; 0
	// does not bound it (as limits.duration "0" does not). Beside Sizes
	// rather than in it: Sizes is the JSON of fluxq queue list, a shape
	// scripts read, and its -1 means unlimited.
	MaxMemory, MinMemory uint64
	// AllowUser and AllowGroup restrict who may submit; nil: anyone.
	AllowUser, AllowGroup []string
	// Scheduler is the queue's policy.scheduler table, for the scheduler.
	Scheduler map[string]any
}

// Set is an instance's queues, compiled from Tables.
type Set struct {
	tables Tables
	named  bool
	dflt   string
	queues map[string]*Queue
	names  []string
}

// Named reports whether queues are configured (else there is one anonymous
// queue).
func (s *Set) Named() bool { return s.named }

// Default is the default queue's name ("" when none, or anonymous).
func (s *Set) Default() string { return s.dflt }

// Names lists the queues in name order; [""] for the anonymous queue.
func (s *Set) Names() []string { return s.names }

// Queue returns a queue by name ("" is the anonymous queue).
func (s *Set) Queue(name string) (*Queue, bool) {
	q, ok := s.queues[name]
	return q, ok
}

// Tables returns what the set was compiled from.
func (s *Set) Tables() Tables { return s.tables }

// MarshalJSON stores the tables; UnmarshalJSON compiles them again.
func (s *Set) MarshalJSON() ([]byte, error) { return json.Marshal(s.tables) }

// UnmarshalJSON reads tables written by MarshalJSON.
func (s *Set) UnmarshalJSON(b []byte) error {
	var t Tables
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	c, err := Compile(t)
	if err != nil {
		return err
	}
	*s = *c
	return nil
}

// Anonymous is the set of an instance without [queues].
func Anonymous() *Set {
	s, _ := Compile(Tables{})
	return s
}

// Compile checks the tables and computes each queue's effective policy.
// Errors name the table as Flux does: `error parsing [queues.x] config
// table: ...`.
func Compile(t Tables) (*Set, error) {
	s := &Set{tables: t, named: len(t.Queues) > 0, queues: map[string]*Queue{}}
	if err := checkPolicy("policy", t.Policy); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(t.Queues))
	for name := range t.Queues {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		qc := t.Queues[name]
		where := "queues." + name
		if err := checkName(name); err != nil {
			return nil, tableError(where, err.Error())
		}
		if qc.Policy.Jobspec.Defaults.System.Queue != nil {
			return nil, tableError(where+".policy", "a queue's policy may not set jobspec.defaults.system.queue")
		}
		if err := checkPolicy(where+".policy", qc.Policy); err != nil {
			return nil, err
		}
		for _, p := range qc.Requires {
			if p == "" {
				return nil, tableError(where, "requires: a property name is empty")
			}
			if _, err := constraint.ParseJSON(propertiesJSON([]string{p})); err != nil {
				return nil, tableError(where, fmt.Sprintf("requires: %v", err))
			}
		}
		if qc.Parent != "" {
			if _, ok := t.Queues[qc.Parent]; !ok {
				return nil, tableError(where, fmt.Sprintf("parent queue '%s' is not configured", qc.Parent))
			}
			if chain, cyclic := parentChain(t.Queues, name); cyclic {
				return nil, tableError(where, fmt.Sprintf("parent queues form a cycle: %s", strings.Join(chain, " -> ")))
			}
		}
	}
	if d := t.Policy.Jobspec.Defaults.System.Queue; d != nil {
		if _, ok := t.Queues[*d]; !ok {
			return nil, tableError("policy.jobspec.defaults.system", fmt.Sprintf("default queue '%s' is not configured", *d))
		}
		s.dflt = *d
	}
	// RFC 33's default-queue rule is RequireDefault's, not Compile's: a
	// store written before the rule was enforced keeps tables without a
	// default, and they must still load. Such a set, or one named queue
	// without a default, refuses a job that names no queue ("no queue
	// specified").
	if !s.named {
		names = []string{""}
	}
	for _, name := range names {
		s.queues[name] = effective(t, name)
	}
	s.names = names
	return s, nil
}

// RequireDefault enforces RFC 33: "If more than one named queue is
// configured, one queue MUST be designated as the default queue". A config
// is checked with it; one named queue without a default is allowed.
func (s *Set) RequireDefault() error {
	if len(s.tables.Queues) < 2 || s.dflt != "" {
		return nil
	}
	const most = 5 // names listed; a long list would hide the point
	names := s.names
	list := strings.Join(names, ", ")
	if len(names) > most {
		list = fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
	}
	return tableError("policy.jobspec.defaults.system",
		fmt.Sprintf("queue is not set: RFC 33 says one of several named queues (%s) MUST be the default", list))
}

// parentChain follows parents from name; cyclic reports a loop.
func parentChain(qs map[string]Config, name string) ([]string, bool) {
	chain := []string{name}
	seen := map[string]bool{name: true}
	for cur := qs[name].Parent; cur != ""; cur = qs[cur].Parent {
		chain = append(chain, cur)
		if seen[cur] {
			return chain, true
		}
		seen[cur] = true
	}
	return chain, false
}

// checkName refuses queue names that could not be typed or printed back.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("a queue needs a name")
	}
	for _, r := range name {
		if r <= ' ' || r == ',' || r == 0x7f || r > 0x7e {
			return fmt.Errorf("queue name %q may hold only printable ASCII without spaces or commas", name)
		}
	}
	return nil
}

func tableError(table, msg string) error {
	return fmt.Errorf("error parsing [%s] config table: %s", table, msg)
}

// checkPolicy validates the values of one policy table.
func checkPolicy(where string, p Policy) error {
	if d := p.Jobspec.Defaults.System.Duration; d != nil {
		if _, err := parseDuration(*d); err != nil {
			return tableError(where+".jobspec.defaults.system", fmt.Sprintf("duration: %v", err))
		}
	}
	if d := p.Limits.Duration; d != nil {
		if _, err := parseDuration(*d); err != nil {
			return tableError(where+".limits", fmt.Sprintf("duration: %v", err))
		}
	}
	for side, sz := range map[string]Size{"max": p.Limits.JobSize.Max, "min": p.Limits.JobSize.Min} {
		for key, v := range map[string]*int64{"nnodes": sz.NNodes, "ncores": sz.NCores, "ngpus": sz.NGPUs} {
			if v != nil && (*v < Unlimited || *v > math.MaxInt32) {
				return tableError(where+".limits", fmt.Sprintf("job-size.%s.%s: size must be -1 (unlimited), or >= 0", side, key))
			}
		}
	}
	if m := p.Jobspec.Defaults.System.Memory; m != nil {
		if _, err := jobspec.ParseMemoryOrZero(*m); err != nil {
			return tableError(where+".jobspec.defaults.system", fmt.Sprintf("memory: %v", err))
		}
	}
	for _, side := range []struct {
		name string
		v    *string
	}{{"max", p.Limits.JobSize.Max.Memory}, {"min", p.Limits.JobSize.Min.Memory}} {
		if side.v == nil {
			continue
		}
		if _, err := parseMemoryLimit(*side.v); err != nil {
			return tableError(where+".limits", fmt.Sprintf("job-size.%s.memory: %v", side.name, err))
		}
	}
	for key, list := range map[string]*[]string{"allow-user": p.Access.AllowUser, "allow-group": p.Access.AllowGroup} {
		if list == nil {
			continue
		}
		for _, n := range *list {
			if n == "" || strings.ContainsAny(n, ":\n\x00") {
				return tableError(where+".access", fmt.Sprintf("%s: %q is not a user or group name", key, n))
			}
		}
	}
	return nil
}

// parseDuration reads an FSD; 0 and "inf" mean unlimited (0 returned).
// It is held to fsd's bound: a queue's default becomes every job's time
// limit, so it must be one the CLI would have taken.
func parseDuration(s string) (float64, error) {
	d, err := fsd.ParseBounded(s)
	if err != nil {
		return 0, err
	}
	if math.IsInf(d, 1) {
		return 0, nil
	}
	return d, nil
}

// effective computes a queue's policy: global, then each ancestor from
// the root down, then the queue's own.
func effective(t Tables, name string) *Queue {
	q := &Queue{Name: name, Max: unlimitedSizes, Min: unlimitedSizes}
	layers := []Policy{t.Policy}
	var requires [][]string
	if name != "" {
		chain, _ := parentChain(t.Queues, name)
		for i := len(chain) - 1; i >= 0; i-- {
			qc := t.Queues[chain[i]]
			layers = append(layers, qc.Policy)
			requires = append(requires, qc.Requires)
		}
		q.Parent = t.Queues[name].Parent
	}
	for _, p := range layers {
		apply(q, p)
	}
	seen := map[string]bool{}
	for _, rs := range requires {
		for _, r := range rs {
			if !seen[r] {
				seen[r] = true
				q.Requires = append(q.Requires, r)
			}
		}
	}
	return q
}

func apply(q *Queue, p Policy) {
	if d := p.Jobspec.Defaults.System.Duration; d != nil {
		q.DefaultDuration, _ = parseDuration(*d)
	}
	if d := p.Limits.Duration; d != nil {
		q.MaxDuration, _ = parseDuration(*d)
	}
	if m := p.Jobspec.Defaults.System.Memory; m != nil {
		q.DefaultMemory, _ = jobspec.ParseMemoryOrZero(*m)
	}
	override(&q.Max, p.Limits.JobSize.Max)
	override(&q.Min, p.Limits.JobSize.Min)
	if m := p.Limits.JobSize.Max.Memory; m != nil {
		q.MaxMemory, _ = parseMemoryLimit(*m)
	}
	if m := p.Limits.JobSize.Min.Memory; m != nil {
		q.MinMemory, _ = parseMemoryLimit(*m)
	}
	if p.Access.AllowUser != nil {
		q.AllowUser = append([]string{}, *p.Access.AllowUser...)
	}
	if p.Access.AllowGroup != nil {
		q.AllowGroup = append([]string{}, *p.Access.AllowGroup...)
	}
	if p.Scheduler != nil {
		if q.Scheduler == nil {
			q.Scheduler = map[string]any{}
		}
		for k, v := range p.Scheduler {
			q.Scheduler[k] = v
		}
	}
}

func override(dst *Sizes, src Size) {
	if src.NNodes != nil {
		dst.NNodes = *src.NNodes
	}
	if src.NCores != nil {
		dst.NCores = *src.NCores
	}
	if src.NGPUs != nil {
		dst.NGPUs = *src.NGPUs
	}
}

// propertiesJSON is the RFC 31 constraint requiring every property.
func propertiesJSON(props []string) []byte {
	b, _ := json.Marshal(map[string][]string{"properties": props})
	return b
}

// RestrictsAccess reports whether any queue has an access policy, so that
// a submitter's names need looking up.
func (s *Set) RestrictsAccess() bool {
	for _, q := range s.queues {
		if q.AllowUser != nil || q.AllowGroup != nil {
			return true
		}
	}
	return false
}
