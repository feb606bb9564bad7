package jobspec

import (
	"encoding/json"
	"slices"
	"strconv"
)

// decode maps the free-form tree onto a Jobspec, checking what the struct
// cannot hold: key presence, value types, count ranges, unknown keys.
// Rules on values (counts, shape, version) are Validate's.
func decode(tree any) (*Jobspec, error) {
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, errorf("", "jobspec must be a mapping")
	}
	// flux-core's V1 checker unpacks the keys in this order.
	for _, k := range [...]string{"resources", "tasks", "attributes", "version"} {
		if _, ok := top[k]; !ok {
			return nil, errorf("", "missing key (%s)", k)
		}
	}
	if err := extraneous("", top, "resources", "tasks", "attributes", "version"); err != nil {
		return nil, err
	}
	j := &Jobspec{}
	v, ok := intValue(top["version"])
	if !ok {
		return nil, errorf("", "version must be an integer")
	}
	if v < 1 {
		return nil, errorf("", "version must be >= 1")
	}
	j.Version = v

	list, ok := top["resources"].([]any)
	if !ok {
		return nil, errorf("", "resources must be a sequence")
	}
	res, err := decodeResources(list, "resources")
	if err != nil {
		return nil, err
	}
	j.Resources = res

	list, ok = top["tasks"].([]any)
	if !ok {
		return nil, errorf("", "tasks must be a sequence")
	}
	j.Tasks = make([]Task, 0, len(list))
	for i, t := range list {
		task, err := decodeTask(t, "tasks["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		j.Tasks = append(j.Tasks, task)
	}

	if err := decodeAttributes(top["attributes"], &j.Attributes); err != nil {
		return nil, err
	}
	return j, nil
}

// lazyPath is base+field[index], spelled out only for an error message.
type lazyPath struct {
	base, field string
	index       int
}

func (p lazyPath) String() string { return p.base + p.field + "[" + strconv.Itoa(p.index) + "]" }

// extraneous reports the first (in sorted order, so the message is
// stable) key of m not in allowed, in Python Jobspec's wording.
func extraneous(path string, m map[string]any, allowed ...string) error {
	if len(m) <= len(allowed) {
		n := 0
		for _, k := range allowed {
			if _, ok := m[k]; ok {
				n++
			}
		}
		if n == len(m) {
			return nil
		}
	}
	var bad []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			bad = append(bad, k)
		}
	}
	slices.Sort(bad)
	return errorf(path, "extraneous key (%s)", bad[0])
}

// intValue returns v as an int if it is an integer in int range. Reals
// such as 1.0 are not integers, as jansson and Python see it.
func intValue(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok || !isIntNumber(n) {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 0)
	if err != nil {
		return 0, false
	}
	return int(i), true
}

func decodeResources(list []any, path string) ([]Resource, error) {
	out := make([]Resource, 0, len(list))
	for i, v := range list {
		r, err := decodeResource(v, path, i)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// decodeResource decodes list element i; its path is built only for an
// error, as building it for every vertex would cost allocations.
func decodeResource(v any, list string, i int) (Resource, error) {
	var r Resource
	path := lazyPath{list, "", i}
	m, ok := v.(map[string]any)
	if !ok {
		return r, errorf(path.String(), "resource must be a mapping")
	}
	t, ok := m["type"]
	if !ok {
		return r, errorf(path.String(), "type is a required key for resources")
	}
	if r.Type, ok = t.(string); !ok {
		return r, errorf(path.String(), "type must be a string")
	}
	c, ok := m["count"]
	if !ok {
		return r, errorf(path.String(), "count is a required key for resources")
	}
	if r.Count, ok = intValue(c); !ok {
		switch c.(type) {
		case string, map[string]any:
			return r, errorf(path.String(), "count must be an integer: jobspec V1 does not allow count ranges")
		case json.Number:
			if isIntNumber(c.(json.Number)) {
				return r, errorf(path.String(), "count %s is out of range", c)
			}
		}
		return r, errorf(path.String(), "count must be an integer")
	}
	if x, ok := m["label"]; ok {
		if r.Label, ok = x.(string); !ok {
			return r, errorf(path.String(), "label must be a string")
		}
	}
	if x, ok := m["unit"]; ok {
		if r.Unit, ok = x.(string); !ok {
			return r, errorf(path.String(), "unit must be a string")
		}
	}
	if x, ok := m["exclusive"]; ok {
		b, ok := x.(bool)
		if !ok {
			return r, errorf(path.String(), "exclusive must be a boolean")
		}
		r.Exclusive = &b
	}
	if x, ok := m["with"]; ok {
		list, ok := x.([]any)
		if !ok {
			return r, errorf(path.String(), "%s with must be an array", r.Type)
		}
		with, err := decodeResources(list, path.String()+".with")
		if err != nil {
			return r, err
		}
		r.With = with
	}
	if _, ok := m["id"]; ok {
		return r, errorf(path.String(), "jobspec V1 does not allow key 'id' in a resource vertex")
	}
	if err := extraneous(path.String(), m, "type", "count", "label", "unit", "exclusive", "with"); err != nil {
		return r, err
	}
	return r, nil
}

func decodeTask(v any, path string) (Task, error) {
	var t Task
	m, ok := v.(map[string]any)
	if !ok {
		return t, errorf(path, "task must be a mapping")
	}
	for _, k := range [...]string{"command", "slot", "count"} {
		if _, ok := m[k]; !ok {
			return t, errorf(path, "missing key (%s)", k)
		}
	}
	for _, k := range [...]string{"attributes", "distribution"} {
		if _, ok := m[k]; ok {
			return t, errorf(path, "jobspec V1 does not allow key '%s' in a task", k)
		}
	}
	if err := extraneous(path, m, "command", "slot", "count"); err != nil {
		return t, err
	}
	cmd, ok := m["command"].([]any)
	if !ok {
		return t, errorf(path, "tasks command must be an array")
	}
	t.Command = make([]string, len(cmd))
	for i, a := range cmd {
		if t.Command[i], ok = a.(string); !ok {
			return t, errorf(path, "tasks command array entry must be a string")
		}
	}
	if t.Slot, ok = m["slot"].(string); !ok {
		return t, errorf(path, "slot must be a string")
	}
	count, ok := m["count"].(map[string]any)
	if !ok {
		return t, errorf(path, "count must be a mapping")
	}
	if len(count) != 1 {
		return t, errorf(path, "count must have exactly one key set")
	}
	if _, ok := count["per_resource"]; ok {
		return t, errorf(path, "count per_slot or total must be set: jobspec V1 does not allow per_resource")
	}
	if x, ok := count["per_slot"]; ok {
		if t.Count.PerSlot, ok = intValue(x); !ok {
			return t, errorf(path, "count per_slot must be an int")
		}
		if t.Count.PerSlot < 1 {
			return t, errorf(path, "tasks per_slot count must be >= 1")
		}
	} else if x, ok := count["total"]; ok {
		if t.Count.Total, ok = intValue(x); !ok {
			return t, errorf(path, "count total must be an int")
		}
		if t.Count.Total < 1 {
			return t, errorf(path, "tasks total count must be >= 1")
		}
	} else {
		return t, errorf(path, "count per_slot or total must be set")
	}
	return t, nil
}

func decodeAttributes(v any, a *Attributes) error {
	m, ok := v.(map[string]any)
	if !ok {
		return errorf("", "attributes must be a mapping")
	}
	n := 0
	for _, k := range [...]string{"system", "user"} {
		if _, ok := m[k]; ok {
			n++
		}
	}
	if n != len(m) {
		for _, k := range sortedKeys(m) {
			if k != "system" && k != "user" {
				return errorf("", "unknown attributes section %s", k)
			}
		}
	}
	if u, ok := m["user"]; ok {
		user, ok := u.(map[string]any)
		if !ok {
			return errorf("", "attributes.user must be a mapping")
		}
		if len(user) == 0 {
			return errorf("", "if present, attributes.user must contain values")
		}
		a.User = user
	}
	s, ok := m["system"]
	if !ok {
		return errorf("", "attributes.system is a required key in jobspec V1")
	}
	sys, ok := s.(map[string]any)
	if !ok {
		return errorf("", "attributes.system must be a mapping")
	}
	return decodeSystem(sys, &a.System)
}

func decodeSystem(m map[string]any, s *System) error {
	known := 0
	if v, ok := m["cwd"]; ok {
		known++
		if s.Cwd, ok = v.(string); !ok {
			return errorf("", "attributes.system.cwd must be a string")
		}
	}
	if v, ok := m["environment"]; ok {
		known++
		switch env := v.(type) {
		case map[string]string: // the JSON parser's fast path
			s.Environment = env
		case map[string]any:
			s.Environment = make(map[string]string, len(env))
			for k, x := range env {
				str, ok := x.(string)
				if !ok {
					return envValueError(env)
				}
				s.Environment[k] = str
			}
		default:
			return errorf("", "attributes.system.environment must be a dictionary")
		}
	}
	if v, ok := m["queue"]; ok {
		known++
		if s.Queue, ok = v.(string); !ok {
			return errorf("", "attributes.system.queue must be a string")
		}
	}
	if v, ok := m["constraints"]; ok {
		known++
		if _, ok := v.(map[string]any); !ok {
			return errorf("", "attributes.system.constraints must be a mapping")
		}
		b, err := appendValue(nil, v, 0)
		if err != nil {
			return errorf("attributes.system.constraints", "%v", err)
		}
		s.Constraints = b
	}
	if v, ok := m["dependencies"]; ok {
		known++
		list, ok := v.([]any)
		if !ok {
			return errorf("", "attributes.system.dependencies must be a list")
		}
		s.Dependencies = make([]Dependency, 0, len(list))
		for i, x := range list {
			dep, err := decodeDependency(x, "attributes.system.dependencies["+strconv.Itoa(i)+"]")
			if err != nil {
				return err
			}
			s.Dependencies = append(s.Dependencies, dep)
		}
	}
	if v, ok := m["shell"]; ok {
		known++
		sh, ok := v.(map[string]any)
		if !ok {
			return errorf("", "attributes.system.shell must be a dictionary")
		}
		for k, x := range sh {
			if k == "options" {
				opts, ok := x.(map[string]any)
				if !ok {
					return errorf("", "attributes.system.shell.options must be a dictionary")
				}
				s.Shell.Options = opts
				continue
			}
			if s.Shell.Extra == nil {
				s.Shell.Extra = make(map[string]any)
			}
			s.Shell.Extra[k] = x
		}
	}
	if v, ok := m["job"]; ok {
		known++
		job, ok := v.(map[string]any)
		if !ok {
			return errorf("", "attributes.system.job must be a dictionary")
		}
		for _, k := range sortedKeys(job) {
			str, ok := job[k].(string)
			if !ok {
				return errorf("", "attributes.system.job.%s must be a string", k)
			}
			if k == "name" {
				s.Job.Name = str
				continue
			}
			if s.Job.Extra == nil {
				s.Job.Extra = make(map[string]string)
			}
			s.Job.Extra[k] = str
		}
	}
	// Python JobspecV1 checks the V1-only requirement last.
	d, ok := m["duration"]
	if !ok {
		return errorf("", "attributes.system.duration is a required key in jobspec V1")
	}
	known++
	n, ok := d.(json.Number)
	if !ok {
		return errorf("", "attributes.system.duration must be a number")
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return errorf("", "attributes.system.duration must be a number")
	}
	s.Duration = f
	if len(m) > known {
		s.Extra = make(map[string]any, len(m)-known)
		for k, v := range m {
			if !isSystemField(k) {
				s.Extra[k] = v
			}
		}
	}
	return nil
}

// systemFields are the attributes.system keys System has a field for.
var systemFields = [...]string{"constraints", "cwd", "dependencies", "duration", "environment", "job", "queue", "shell"}

func isSystemField(k string) bool { return slices.Contains(systemFields[:], k) }

func envValueError(env map[string]any) error {
	for _, k := range sortedKeys(env) {
		if _, ok := env[k].(string); !ok {
			return errorf("", "attributes.system.environment.%s must be a string", k)
		}
	}
	return nil
}

func decodeDependency(v any, path string) (Dependency, error) {
	var d Dependency
	m, ok := v.(map[string]any)
	if !ok {
		return d, errorf(path, "dependency must be a mapping")
	}
	for _, k := range [...]string{"scheme", "value"} {
		if _, ok := m[k]; !ok {
			return d, errorf(path, "missing key (%s)", k)
		}
	}
	if d.Scheme, ok = m["scheme"].(string); !ok {
		return d, errorf(path, "dependency scheme must be a string")
	}
	if d.Value, ok = m["value"].(string); !ok {
		return d, errorf(path, "dependency value must be a string")
	}
	for k, x := range m {
		if k == "scheme" || k == "value" {
			continue
		}
		if d.Extra == nil {
			d.Extra = make(map[string]any)
		}
		d.Extra[k] = x
	}
	return d, nil
}
