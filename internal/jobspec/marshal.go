package jobspec

import (
	"fmt"
	"slices"
	"strconv"
)

// MarshalJSON writes j as canonical JSON: compact, object keys sorted,
// integers in decimal and reals as Python's repr (3600.0), strings escaped
// as json.dumps(ensure_ascii=False) does. Absent optional keys stay absent;
// duration is always written.
func (j *Jobspec) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, j.sizeHint())
	b = append(b, `{"attributes":`...)
	b, err := appendAttributes(b, &j.Attributes)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"resources":`...)
	if b, err = appendResources(b, j.Resources, 1); err != nil {
		return nil, err
	}
	b = append(b, `,"tasks":[`...)
	for i := range j.Tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTask(b, &j.Tasks[i])
	}
	b = append(b, `],"version":`...)
	b = strconv.AppendInt(b, int64(j.Version), 10)
	return append(b, '}'), nil
}

// sizeHint is about what MarshalJSON writes: its fixed part, and the
// strings that make most of a jobspec's length (the environment, the
// working directory, the commands, the constraints). A buffer of 1,024
// bytes whatever the jobspec was four times what a jobspec without an
// environment needs (each one zeroed, and kept as the job's jobspec
// while it is active), and grew, a copy each time, for a submission's
// whole environment.
func (j *Jobspec) sizeHint() int {
	n := 256
	sys := &j.Attributes.System
	n += len(sys.Cwd) + len(sys.Constraints)
	for k, v := range sys.Environment {
		n += len(k) + len(v) + 6 // quotes, colon, comma
	}
	for i := range j.Tasks {
		for _, arg := range j.Tasks[i].Command {
			n += len(arg) + 3
		}
	}
	return n
}

func appendResources(b []byte, rs []Resource, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("resources nest deeper than %d levels", MaxDepth)
	}
	b = append(b, '[')
	for i := range rs {
		r := &rs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"count":`...)
		b = strconv.AppendInt(b, int64(r.Count), 10)
		if r.Exclusive != nil {
			b = append(b, `,"exclusive":`...)
			b = strconv.AppendBool(b, *r.Exclusive)
		}
		if r.Label != "" {
			b = append(b, `,"label":`...)
			b = appendString(b, r.Label)
		}
		b = append(b, `,"type":`...)
		b = appendString(b, r.Type)
		if r.Unit != "" {
			b = append(b, `,"unit":`...)
			b = appendString(b, r.Unit)
		}
		if r.With != nil {
			b = append(b, `,"with":`...)
			var err error
			if b, err = appendResources(b, r.With, depth+1); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendTask(b []byte, t *Task) []byte {
	b = append(b, `{"command":[`...)
	for i, a := range t.Command {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a)
	}
	b = append(b, `],"count":{`...)
	if t.Count.PerSlot != 0 {
		b = append(b, `"per_slot":`...)
		b = strconv.AppendInt(b, int64(t.Count.PerSlot), 10)
	}
	if t.Count.Total != 0 {
		if t.Count.PerSlot != 0 {
			b = append(b, ',')
		}
		b = append(b, `"total":`...)
		b = strconv.AppendInt(b, int64(t.Count.Total), 10)
	}
	b = append(b, `},"slot":`...)
	b = appendString(b, t.Slot)
	return append(b, '}')
}

func appendAttributes(b []byte, a *Attributes) ([]byte, error) {
	b = append(b, `{"system":`...)
	b, err := appendSystem(b, &a.System)
	if err != nil {
		return nil, err
	}
	if a.User != nil {
		b = append(b, `,"user":`...)
		if b, err = appendValue(b, a.User, 2); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendMerged writes an object whose keys are the named fields present
// plus extra's, in sorted order; named writes one named field's value.
func appendMerged(b []byte, names []string, extra map[string]any, depth int,
	named func([]byte, string) ([]byte, error)) ([]byte, error) {
	keys := names
	if len(extra) > 0 {
		keys = make([]string, 0, len(names)+len(extra))
		keys = append(keys, names...)
		for k := range extra {
			if !slices.Contains(names, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if slices.Contains(names, k) {
			b, err = named(b, k)
		} else {
			b, err = appendValue(b, extra[k], depth+1)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendSystem(b []byte, s *System) ([]byte, error) {
	names := make([]string, 0, len(systemFields))
	if s.Constraints != nil {
		names = append(names, "constraints")
	}
	if s.Cwd != "" {
		names = append(names, "cwd")
	}
	if s.Dependencies != nil {
		names = append(names, "dependencies")
	}
	names = append(names, "duration")
	if s.Environment != nil {
		names = append(names, "environment")
	}
	if s.Job.Name != "" || s.Job.Extra != nil {
		names = append(names, "job")
	}
	if s.Queue != "" {
		names = append(names, "queue")
	}
	if s.Shell.Options != nil || s.Shell.Extra != nil {
		names = append(names, "shell")
	}
	return appendMerged(b, names, s.Extra, 2, func(b []byte, k string) ([]byte, error) {
		switch k {
		case "constraints":
			return appendValue(b, s.Constraints, 3)
		case "cwd":
			return appendString(b, s.Cwd), nil
		case "dependencies":
			b = append(b, '[')
			for i := range s.Dependencies {
				if i > 0 {
					b = append(b, ',')
				}
				d := &s.Dependencies[i]
				var err error
				b, err = appendMerged(b, []string{"scheme", "value"}, d.Extra, 4, func(b []byte, k string) ([]byte, error) {
					if k == "scheme" {
						return appendString(b, d.Scheme), nil
					}
					return appendString(b, d.Value), nil
				})
				if err != nil {
					return nil, err
				}
			}
			return append(b, ']'), nil
		case "duration":
			return appendValue(b, s.Duration, 3)
		case "environment":
			return appendValue(b, s.Environment, 3)
		case "job":
			names := []string{}
			if s.Job.Name != "" {
				names = append(names, "name")
			}
			extra := make(map[string]any, len(s.Job.Extra))
			for k, v := range s.Job.Extra {
				extra[k] = v
			}
			return appendMerged(b, names, extra, 3, func(b []byte, _ string) ([]byte, error) {
				return appendString(b, s.Job.Name), nil
			})
		case "queue":
			return appendString(b, s.Queue), nil
		default: // shell
			names := []string{}
			if s.Shell.Options != nil {
				names = append(names, "options")
			}
			return appendMerged(b, names, s.Shell.Extra, 3, func(b []byte, _ string) ([]byte, error) {
				return appendValue(b, s.Shell.Options, 4)
			})
		}
	})
}
