package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/queue"
	"github.com/fluxq/fluxq/internal/store"
)

// The keys an update may change, as full jobspec paths (flux-update(1)'s
// aliases resolve to them). Flux allows a key only where a plugin of its
// job manager says how to check it; these are the ones whose check is
// the submission's own (queue admission, the bounds on times).
const (
	KeyDuration = "attributes.system.duration"
	KeyQueue    = "attributes.system.queue"
	KeyName     = "attributes.system.job.name"
	// KeyUrgency is the urgency alias: not a jobspec key, but the job's
	// urgency event, changed in the same request.
	KeyUrgency = "urgency"

	userPrefix = "attributes.user."
)

// ErrUpdateRunning refuses a change to a running job other than its
// duration.
var ErrUpdateRunning = api.Errorf(api.CodeBadRequest, "only the duration of a running job may be updated")

// UpdateKey resolves a key as the user typed it to its full jobspec path
// (flux-update(1)): an alias (duration, queue, name, urgency), a path
// that starts with one of RFC 14's top-level keys, or else a key of
// attributes.system. It refuses a key fluxq cannot update.
func UpdateKey(key string) (string, error) {
	switch key {
	case "duration":
		return KeyDuration, nil
	case "queue":
		return KeyQueue, nil
	case "name":
		return KeyName, nil
	case KeyUrgency:
		return KeyUrgency, nil
	case "":
		return "", fmt.Errorf("empty key")
	}
	full := key
	if !strings.HasPrefix(key, "attributes.") && !strings.HasPrefix(key, "tasks.") && !strings.HasPrefix(key, "resources.") &&
		key != "attributes" && key != "tasks" && key != "resources" {
		full = "attributes.system." + key
	}
	switch {
	case full == KeyDuration || full == KeyQueue || full == KeyName:
		return full, nil
	case strings.HasPrefix(full, userPrefix) && len(full) > len(userPrefix):
		for _, part := range strings.Split(full, ".") {
			if part == "" {
				return "", fmt.Errorf("invalid key %q: an empty part between periods", printableKey(key))
			}
		}
		return full, nil
	}
	return "", fmt.Errorf("update of %s is not supported (keys: duration, queue, name, urgency, attributes.user.*)", printableKey(full))
}

// printableKey quotes what a one-line message cannot show of a key.
func printableKey(s string) string {
	q := fmt.Sprintf("%q", s)
	if q[1:len(q)-1] == s {
		return s
	}
	return q
}

// UpdateRequest is an update of one job's jobspec.
type UpdateRequest struct {
	Updates []api.JobUpdate
	UserID  uint32 // the job's owner, as the queue's access sees it
	Owner   bool   // the caller is the instance owner
	Running bool   // the job holds resources: only its duration may change
	// Queue is the queue the job was admitted to.
	Queue string
}

// Updated is what an update makes of a job.
type Updated struct {
	Jobspec json.RawMessage // canonical, as admitted again
	Spec    Spec
	// Context is the jobspec-update event's: each updated path and its
	// new value (RFC 21); empty when only the urgency changes.
	Context map[string]any
	Urgency *int // the urgency alias, when given
}

// UpdateJobspec applies an update to a stored jobspec (raw) and checks
// the result as a submission is checked (the bounds on times, the output
// limit, the queue's admission: its existence, state, access, limits and
// requires, and whether the resources could ever satisfy it). Nothing is
// written: the caller stores what it returns. Every key is checked, and
// the first refusal is returned, so a request is taken or refused whole.
func UpdateJobspec(tx *store.Tx, raw json.RawMessage, req UpdateRequest) (*Updated, error) {
	if len(req.Updates) == 0 {
		return nil, fmt.Errorf("no KEY=VALUE to update")
	}
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("stored jobspec: %w", err)
	}
	old, err := jobspec.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("stored jobspec: %w", err)
	}
	out := &Updated{Context: map[string]any{}}
	seen := map[string]bool{}
	for _, u := range req.Updates {
		key, err := UpdateKey(u.Key)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("%s is given twice", printableKey(u.Key))
		}
		seen[key] = true
		if req.Running && key != KeyDuration {
			return nil, fmt.Errorf("%s: %w", aliasOf(key), ErrUpdateRunning)
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(u.Value))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: invalid value: %v", printableKey(u.Key), err)
		}
		switch key {
		case KeyUrgency:
			n, err := urgencyValue(v)
			if err != nil {
				return nil, err
			}
			out.Urgency = &n
			continue
		case KeyDuration:
			sec, err := durationValue(v, old.Attributes.System.Duration)
			if err != nil {
				return nil, err
			}
			v = json.Number(fsdNumber(sec))
		case KeyQueue, KeyName:
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("%s: want a name, got %s", aliasOf(key), string(u.Value))
			}
		}
		if err := setPath(doc, key, v); err != nil {
			return nil, err
		}
		out.Context[key] = v
	}
	if len(out.Context) == 0 {
		return out, nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("updated jobspec: %w", err)
	}
	js, err := jobspec.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("updated jobspec: %w", err)
	}
	if err := js.CheckBounds(); err != nil {
		return nil, err
	}
	if err := checkOutputLimit(js, req.Owner); err != nil {
		return nil, err
	}
	if req.Running {
		// What it asked for is what it holds: only the time changes, and
		// who may change it which way is the job manager's to say.
		canon, err := js.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("updated jobspec: %w", err)
		}
		out.Jobspec, out.Spec = canon, SpecOf(js)
		return out, nil
	}
	set, err := QueueSet(tx)
	if err != nil {
		return nil, err
	}
	states, err := QueueStates(tx, set)
	if err != nil {
		return nil, err
	}
	if js.Attributes.System.Queue == req.Queue {
		// A job stays in a queue that stopped taking submissions: the
		// queue's state is asked only of a job that moves into it.
		st := states[req.Queue]
		st.Enabled = true
		states = mapWith(states, req.Queue, st)
	}
	u := submitter(set, req.UserID, req.Owner, map[uint32]queue.User{})
	canon, err := set.ReadmitCanonical(js, req.Queue, states, u)
	if err != nil {
		return nil, err
	}
	if err := newFeasibility(tx).check(js); err != nil {
		return nil, err
	}
	out.Jobspec, out.Spec = canon, SpecOf(js)
	return out, nil
}

// aliasOf is the short name of a key the user may know it by.
func aliasOf(key string) string {
	switch key {
	case KeyDuration:
		return "duration"
	case KeyQueue:
		return "queue"
	case KeyName:
		return "name"
	}
	return key
}

// mapWith is m with k set to v, m itself unchanged.
func mapWith(m map[string]queue.State, k string, v queue.State) map[string]queue.State {
	out := make(map[string]queue.State, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// urgencyValue reads the urgency alias's value as fluxq urgency does: a
// number 0-31, hold, default or expedite.
func urgencyValue(v any) (int, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, fmt.Errorf("urgency: want 0-31, hold, default or expedite")
	}
	return job.ParseUrgency(s)
}

// durationValue reads the duration alias's value: seconds (a number), a
// Flux standard duration ("1h"), or one relative to the current duration
// ("+10m", "-5m"). 0 and "inf" are unlimited.
func durationValue(v any, current float64) (float64, error) {
	var sec float64
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil || f < 0 || math.IsNaN(f) {
			return 0, fmt.Errorf("duration: invalid value %s", x)
		}
		if err := fsd.CheckDuration(x.String(), f); err != nil {
			return 0, fmt.Errorf("duration: %w", err)
		}
		sec = f
	case string:
		rel := 0
		s := x
		if strings.HasPrefix(s, "+") {
			rel, s = 1, s[1:]
		} else if strings.HasPrefix(s, "-") {
			rel, s = -1, s[1:]
		}
		f, err := fsd.ParseBounded(s)
		if err != nil {
			return 0, fmt.Errorf("duration: %w", err)
		}
		if rel != 0 {
			if current == 0 {
				return 0, fmt.Errorf("duration: the job has no time limit for %s to change", printableKey(x))
			}
			if math.IsInf(f, 1) {
				return 0, fmt.Errorf("duration: %s is not a change of the time limit", printableKey(x))
			}
			f = current + float64(rel)*f
			if f <= 0 {
				return 0, fmt.Errorf("duration: %s would leave the job no time (its limit is %s)", printableKey(x), fsd.Format(current))
			}
			if err := fsd.CheckDuration(x, f); err != nil {
				return 0, fmt.Errorf("duration: %w", err)
			}
		}
		sec = f
	default:
		return 0, fmt.Errorf("duration: want seconds or a duration such as 1h, +10m or -5m")
	}
	if math.IsInf(sec, 1) {
		sec = 0 // unlimited, as jobspec writes it
	}
	return sec, nil
}

// fsdNumber writes seconds as the shortest JSON number that reads back.
func fsdNumber(sec float64) string {
	b, _ := json.Marshal(sec)
	return string(b)
}

// setPath sets a period-delimited path in a JSON object, making the
// objects on the way.
func setPath(doc map[string]any, path string, v any) error {
	parts := strings.Split(path, ".")
	cur := doc
	for i, p := range parts[:len(parts)-1] {
		next, ok := cur[p]
		if !ok || next == nil {
			m := map[string]any{}
			cur[p] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is not an object in the jobspec", path, strings.Join(parts[:i+1], "."))
		}
		cur = m
	}
	cur[parts[len(parts)-1]] = v
	return nil
}
