package jobspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate checks j against RFC 25 and reports the first defect. The
// resource graph, tasks and attributes are checked before version 1 is
// required, so a canonical (RFC 14) jobspec of another version is told
// which V1 restriction it breaks.
func (j *Jobspec) Validate() error { return j.validate(true) }

// validate is Validate; checkUTF8 false skips the walk over every string,
// for a Jobspec whose strings all came through jsonParser.str.
func (j *Jobspec) validate(checkUTF8 bool) error {
	if j == nil {
		return errorf("", "jobspec cannot be NULL")
	}
	if j.Version < 1 {
		return errorf("", "version must be >= 1")
	}
	if checkUTF8 {
		if err := validateUTF8(j); err != nil {
			return err
		}
	}
	nnodes, err := validateResources(j.Resources)
	if err != nil {
		return err
	}
	if err := validateTasks(j.Tasks, nnodes); err != nil {
		return err
	}
	if err := validateAttributes(&j.Attributes); err != nil {
		return err
	}
	if j.Version != 1 {
		return errorf("", "only version 1 jobspec is supported (got version %d)", j.Version)
	}
	return totals(j)
}

// validateUTF8 refuses strings JSON cannot carry. Parse never yields one
// (JSON and YAML input must be UTF-8); a hand-built Jobspec might.
func validateUTF8(j *Jobspec) error {
	bad := func(path string) error { return errorf(path, "string is not valid UTF-8") }
	if sub, ok := resourcesUTF8(j.Resources, 1); !ok {
		return errorf("resources"+sub, "string is not valid UTF-8, or nesting is deeper than %d levels", MaxDepth)
	}
	for i := range j.Tasks {
		t := &j.Tasks[i]
		ok := utf8.ValidString(t.Slot)
		for _, a := range t.Command {
			ok = ok && utf8.ValidString(a)
		}
		if !ok {
			return bad(lazyPath{"tasks", "", i}.String())
		}
	}
	s := &j.Attributes.System
	for _, x := range [...]string{s.Cwd, s.Queue, s.Job.Name} {
		if !utf8.ValidString(x) {
			return bad("attributes.system")
		}
	}
	for _, m := range [...]map[string]string{s.Environment, s.Job.Extra} {
		for k, v := range m {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return bad("attributes.system")
			}
		}
	}
	for i := range s.Dependencies {
		if d := &s.Dependencies[i]; !utf8.ValidString(d.Scheme) || !utf8.ValidString(d.Value) {
			return bad(lazyPath{"attributes.system.dependencies", "", i}.String())
		}
	}
	return nil
}

// resourcesUTF8 reports whether every string of rs is UTF-8, and if not
// the path to the first bad vertex, relative to rs ("[0].with[1]"). A
// graph nested deeper than MaxDepth counts as bad: recursion must end
// even on a hand-built graph.
func resourcesUTF8(rs []Resource, depth int) (string, bool) {
	for i := range rs {
		r := &rs[i]
		if depth > MaxDepth || !utf8.ValidString(r.Type) || !utf8.ValidString(r.Label) || !utf8.ValidString(r.Unit) {
			return "[" + strconv.Itoa(i) + "]", false
		}
		if sub, ok := resourcesUTF8(r.With, depth+1); !ok {
			return "[" + strconv.Itoa(i) + "].with" + sub, false
		}
	}
	return "", true
}

// validateResources checks the V1 graph, node>slot>(core[,gpu]) or
// slot>(core[,gpu]), and returns the node count (0 without a node level).
func validateResources(rs []Resource) (int, error) {
	if len(rs) != 1 {
		return 0, errorf("resources", "jobspec V1 requires exactly one top-level resource, node or slot (got %d)", len(rs))
	}
	r := &rs[0]
	const path = "resources[0]"
	switch r.Type {
	case "node":
		return r.Count, validateNode(r, path)
	case "slot":
		return 0, validateSlot(r, path)
	case "core", "gpu":
		return 0, errorf(path, "jobspec V1 requires node or slot as the top-level resource, not %s", r.Type)
	default:
		return 0, errorf(path, "unknown resource vertex type '%s': jobspec V1 allows only node, slot, core and gpu, with node or slot at the top", r.Type)
	}
}

// countError says what is wrong with r's count, "" if nothing; prefix
// ("slot ") places a slot's child, as flux-core's messages do.
func countError(r *Resource, prefix string, least int) string {
	if r.Count < least {
		return fmt.Sprintf("%s%s count must be >= %d", prefix, r.Type, least)
	}
	if r.Count > MaxCount {
		return fmt.Sprintf("%s%s count must be <= %d", prefix, r.Type, MaxCount)
	}
	return ""
}

func validateNode(r *Resource, path string) error {
	if msg := countError(r, "", 1); msg != "" {
		return errorf(path, "%s", msg)
	}
	if len(r.With) != 1 {
		return errorf(path, "node with array must have 1 element: jobspec V1 allows only one slot under a node (got %d)", len(r.With))
	}
	c := &r.With[0]
	const cpath = "resources[0].with[0]" // V1 has one node, at the top
	switch c.Type {
	case "slot":
		return validateSlot(c, cpath)
	case "node":
		return errorf(cpath, "jobspec V1 does not allow nodes inside nodes")
	case "core", "gpu":
		return errorf(cpath, "jobspec V1 requires a slot between node and %s", c.Type)
	default:
		return errorf(cpath, "jobspec V1 does not allow resource type '%s' (only node, slot, core and gpu)", c.Type)
	}
}

func validateSlot(r *Resource, path string) error {
	if msg := countError(r, "", 1); msg != "" {
		return errorf(path, "%s", msg)
	}
	if r.Label == "" {
		return errorf(path, "slots must have labels")
	}
	if len(r.With) < 1 || len(r.With) > 3 {
		return errorf(path, "slot with array must have 1-3 elements: core, and optionally gpu and memory (got %d)", len(r.With))
	}
	var seen [3]bool // core, gpu, memory
	for i := range r.With {
		c := &r.With[i]
		cpath := lazyPath{path, ".with", i}
		var least, idx int
		switch c.Type {
		case "core":
			least, idx = 1, 0
		case "gpu":
			// Python JobspecV1 lets a gpu count be 0: "no gpus".
			least, idx = 0, 1
		case MemoryType:
			// Fluxion's jobspecs ask for memory inside the slot.
			least, idx = 1, 2
			if _, err := memoryBytes(c); err != nil {
				return errorf(cpath.String(), "%v", err)
			}
		case "node":
			return errorf(cpath.String(), "jobspec V1 does not allow nodes inside slots")
		case "slot":
			return errorf(cpath.String(), "jobspec V1 does not allow slots inside slots")
		default:
			return errorf(cpath.String(), "slot with type must be core, gpu or memory: jobspec V1 does not allow '%s' in a slot", c.Type)
		}
		if seen[idx] {
			return errorf(cpath.String(), "slot with must list %s only once", c.Type)
		}
		seen[idx] = true
		if msg := countError(c, "slot ", least); msg != "" {
			return errorf(cpath.String(), "%s", msg)
		}
		if len(c.With) > 0 {
			return errorf(cpath.String(), "jobspec V1 does not allow resources inside %s", c.Type)
		}
		if c.Exclusive != nil {
			return errorf(cpath.String(), "jobspec V1 allows exclusive only on node and slot")
		}
	}
	if !seen[0] {
		return errorf(path, "jobspec V1 requires a core in each slot")
	}
	return nil
}

func validateTasks(ts []Task, nnodes int) error {
	if len(ts) != 1 {
		return errorf("tasks", "jobspec V1 requires exactly one task (got %d)", len(ts))
	}
	t := &ts[0]
	const path = "tasks[0]"
	if len(t.Command) < 1 {
		return errorf(path, "tasks command array length must be >= 1")
	}
	for _, a := range t.Command {
		if strings.IndexByte(a, 0) >= 0 {
			return errorf(path, "tasks command array entry must not contain a NUL character")
		}
	}
	c := t.Count
	switch {
	case c.PerSlot != 0 && c.Total != 0:
		return errorf(path, "count must have exactly one key set")
	case c.PerSlot < 0:
		return errorf(path, "tasks per_slot count must be >= 1")
	case c.PerSlot > 1:
		return errorf(path, "jobspec V1 requires per_slot to be 1 (got %d): use total for more tasks", c.PerSlot)
	case c.Total < 0:
		return errorf(path, "tasks total count must be >= 1")
	case c.PerSlot == 0 && c.Total == 0:
		return errorf(path, "count per_slot or total must be set")
	case c.Total > MaxCount:
		return errorf(path, "tasks total count must be <= %d", MaxCount)
	case c.Total > 0 && c.Total < nnodes:
		// RFC 25: total must be at least the number of nodes.
		return errorf(path, "tasks total count (%d) must be >= the node count (%d)", c.Total, nnodes)
	}
	return nil
}

func validateAttributes(a *Attributes) error {
	if a.User != nil {
		if len(a.User) == 0 {
			return errorf("", "if present, attributes.user must contain values")
		}
		if err := checkValue(a.User, 1); err != nil {
			return errorf("attributes.user", "%v", err)
		}
	}
	s := &a.System
	if math.IsNaN(s.Duration) || math.IsInf(s.Duration, 0) {
		return errorf("", "attributes.system.duration must be a normal, finite value")
	}
	if s.Duration < 0 {
		return errorf("", "attributes.system.duration must not be negative")
	}
	if s.Cwd != "" && !strings.HasPrefix(s.Cwd, "/") {
		return errorf("", "attributes.system.cwd must be an absolute path")
	}
	for k, v := range s.Environment {
		if badEnvName(k) || strings.IndexByte(v, 0) >= 0 {
			return envNameError(s.Environment)
		}
	}
	if s.Constraints != nil {
		tree, err := parseJSONValue(s.Constraints)
		if err != nil {
			return errorf("attributes.system.constraints", "%v", err)
		}
		if _, ok := tree.(map[string]any); !ok {
			return errorf("", "attributes.system.constraints must be a mapping")
		}
	}
	for i := range s.Dependencies {
		d := &s.Dependencies[i]
		path := "attributes.system.dependencies[" + strconv.Itoa(i) + "]"
		if _, ok := d.Extra["scheme"]; ok {
			return errorf(path, "extraneous key (scheme) in Extra duplicates Scheme")
		}
		if _, ok := d.Extra["value"]; ok {
			return errorf(path, "extraneous key (value) in Extra duplicates Value")
		}
		if err := checkValue(d.Extra, 1); err != nil {
			return errorf(path, "%v", err)
		}
	}
	if _, ok := s.Shell.Extra["options"]; ok {
		return errorf("attributes.system.shell", "extraneous key (options) in Extra duplicates Options")
	}
	if err := checkValue(s.Shell.Options, 2); err != nil {
		return errorf("attributes.system.shell.options", "%v", err)
	}
	if err := checkValue(s.Shell.Extra, 2); err != nil {
		return errorf("attributes.system.shell", "%v", err)
	}
	if _, ok := s.Job.Extra["name"]; ok {
		return errorf("attributes.system.job", "extraneous key (name) in Extra duplicates Name")
	}
	for k := range s.Extra {
		if isSystemField(k) {
			return errorf("attributes.system", "extraneous key (%s) in Extra duplicates a System field", k)
		}
	}
	if err := checkValue(s.Extra, 1); err != nil {
		return errorf("attributes.system", "%v", err)
	}
	return nil
}

// badEnvName reports whether k is empty or holds '=' or NUL. It is a loop
// rather than strings.ContainsAny, which builds a set for every call: the
// environment is most of a jobspec's strings.
func badEnvName(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] == '=' || k[i] == 0 {
			return true
		}
	}
	return k == ""
}

// envNameError reports the first bad environment entry in sorted order.
func envNameError(env map[string]string) error {
	for _, k := range sortedKeys(env) {
		switch {
		case k == "":
			return errorf("", "attributes.system.environment: variable names must not be empty")
		case strings.ContainsAny(k, "=\x00"):
			return errorf("", "attributes.system.environment: variable name %q must not contain '=' or NUL", k)
		case strings.IndexByte(env[k], 0) >= 0:
			return errorf("", "attributes.system.environment.%s must not contain a NUL character", k)
		}
	}
	return nil
}

// totals refuses whole-job counts beyond MaxCount, so Counts never
// overflows. Products of two counts <= MaxCount fit in int64.
func totals(j *Jobspec) error {
	node, slot := j.levels()
	nslots := int64(slot.Count)
	if node != nil {
		nslots *= int64(node.Count)
	}
	if nslots > MaxCount {
		return errorf("resources", "total slot count must be <= %d", MaxCount)
	}
	for _, c := range slot.With {
		if c.Type == MemoryType {
			if b, _ := memoryBytes(&c); uint64(nslots) > MaxMemory/b {
				return errorf("resources", "total memory must be at most 1E")
			}
			continue
		}
		if nslots*int64(c.Count) > MaxCount {
			return errorf("resources", "total %s count must be <= %d", c.Type, MaxCount)
		}
	}
	if t := &j.Tasks[0].Count; t.Total == 0 && nslots*int64(t.PerSlot) > MaxCount {
		return errorf("tasks", "total task count must be <= %d", MaxCount)
	}
	return nil
}
