package config

import (
	"fmt"

	"github.com/fluxq/fluxq/internal/resource"
	"github.com/fluxq/fluxq/internal/sched"
)

// Policies returns the scheduler's queue policies: the [sched] table's for
// every queue, and each queue's own where its policy.scheduler table
// (RFC 33: the scheduler's business) sets policy, queue-depth,
// reservation-depth or match-policy; a queue's own setting wins over
// [sched]. Other keys of those tables pass through, for other schedulers.
// A caller applying command-line flags sets them in c.Sched first.
func (c *Config) Policies() (sched.QueuePolicy, map[string]sched.QueuePolicy, error) {
	def, err := c.Sched.policy()
	if err != nil {
		return def, nil, fmt.Errorf("error parsing [sched] config table: %v", err)
	}
	out := map[string]sched.QueuePolicy{}
	if c.QueueSet == nil {
		return def, out, nil
	}
	// The global table on its own first: each queue's table below is it
	// merged with the queue's, and would take the blame for its errors.
	if c.QueueSet.Named() && len(c.Policy.Scheduler) > 0 {
		if _, err := queuePolicy(def, c.Policy.Scheduler); err != nil {
			return def, nil, fmt.Errorf("error parsing [policy.scheduler] config table: %v", err)
		}
	}
	for _, name := range c.QueueSet.Names() {
		q, _ := c.QueueSet.Queue(name)
		if len(q.Scheduler) == 0 {
			continue
		}
		table := "policy.scheduler"
		if name != "" {
			table = "queues." + name + ".policy.scheduler"
		}
		p, err := queuePolicy(def, q.Scheduler)
		if err != nil {
			return def, nil, fmt.Errorf("error parsing [%s] config table: %v", table, err)
		}
		out[name] = p
	}
	return def, out, nil
}

// ModeOrDefault is the RFC 27 mode: the table's, else sched-simple's
// limited=8 when the policy is fcfs, else unlimited, as Fluxion asks for:
// a backfilling policy must see the queue to fill the holes in it.
func (s Sched) ModeOrDefault() string {
	if s.Mode != "" {
		return s.Mode
	}
	if s.Policy == "" || s.Policy == sched.FCFS.String() {
		return DefaultMode
	}
	return "unlimited"
}

// policy is the [sched] table as a queue policy, with Fluxion's defaults.
func (s Sched) policy() (sched.QueuePolicy, error) {
	p := sched.DefaultPolicy()
	var err error
	if s.Policy != "" {
		if p.Kind, err = sched.ParseKind(s.Policy); err != nil {
			return p, err
		}
	}
	if s.MatchPolicy != "" {
		if p.Match, err = resource.ParsePolicy(s.MatchPolicy); err != nil {
			return p, fmt.Errorf("unknown match-policy %q (want first-fit, worst-fit or best-fit)", s.MatchPolicy)
		}
	}
	if s.QueueDepth != nil {
		p.QueueDepth = *s.QueueDepth
	}
	if s.ReservationDepth != nil {
		p.ReservationDepth = *s.ReservationDepth
		if p.ReservationDepth == 0 {
			return p, fmt.Errorf("reservation-depth must be 1 or more")
		}
	}
	return p, p.Validate()
}

// queuePolicy applies a policy.scheduler table over def.
func queuePolicy(def sched.QueuePolicy, t map[string]any) (sched.QueuePolicy, error) {
	p := def
	if v, ok := t["policy"]; ok {
		s, isString := v.(string)
		if !isString {
			return p, fmt.Errorf("policy must be a string")
		}
		k, err := sched.ParseKind(s)
		if err != nil {
			return p, err
		}
		p.Kind = k
	}
	if v, ok := t["match-policy"]; ok {
		s, isString := v.(string)
		if !isString {
			return p, fmt.Errorf("match-policy must be a string")
		}
		switch s {
		case "first-fit", "worst-fit", "best-fit":
		default:
			return p, fmt.Errorf("unknown match-policy %q (want first-fit, worst-fit or best-fit)", s)
		}
		p.Match, _ = resource.ParsePolicy(s)
	}
	for key, dst := range map[string]*int{"queue-depth": &p.QueueDepth, "reservation-depth": &p.ReservationDepth} {
		v, ok := t[key]
		if !ok {
			continue
		}
		n, isInt := v.(int64)
		if !isInt || n < 0 || n > 1<<31-1 {
			return p, fmt.Errorf("%s must be a whole number from 0 to 2147483647", key)
		}
		if key == "reservation-depth" && n == 0 {
			return p, fmt.Errorf("reservation-depth must be 1 or more")
		}
		*dst = int(n)
	}
	return p, p.Validate()
}
