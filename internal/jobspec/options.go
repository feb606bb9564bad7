package jobspec

import (
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Options are the `flux submit` options a jobspec is built from. Zero
// means "not given" for every field.
type Options struct {
	NTasks       int // -n: number of tasks (default 1, or -N without -n)
	CoresPerTask int // -c: cores per task (default 1)
	GPUsPerTask  int // -g: gpus per task (default none)
	// MemPerSlot is --mem: the memory of each task slot in bytes, 0 for
	// none asked. It becomes the slot's memory vertex.
	MemPerSlot  uint64
	Nodes       int // -N: number of nodes (default: the scheduler picks)
	Exclusive   bool
	Duration    float64 // -t, in seconds; 0 is unlimited
	Command     []string
	Cwd         string
	Name        string // attributes.system.job.name
	Queue       string
	Environment map[string]string // nil is an empty environment
	// Constraints is an RFC 31 object (map, json.RawMessage, or anything
	// encoding/json writes as an object), or nil.
	Constraints any
	// Dependencies are dependency URIs such as "afterok:ƒ2P4d5".
	Dependencies []string
	// BeginTime is --begin-time as seconds since the epoch, 0 if unset;
	// flux submit turns it into a begin-time dependency.
	BeginTime float64
	// Extra sets more attributes.system keys, after the options above
	// (as --setattr does), so it may override them.
	Extra map[string]any
}

// FromOptions builds the jobspec flux submit builds (flux-core's
// SubmitBaseCmd.init_jobspec and JobspecV1.from_command):
//   - -N without -n runs one task per node and implies -x;
//   - without -N, the resources are slot[ntasks]>core[c](,gpu[g]);
//   - with -N, node[N]>slot[ceil(n/N)]>core[c](,gpu[g]), and when n does
//     not divide evenly the task count is total:n, else per_slot:1.
//
// Errors use flux-core's wording.
func FromOptions(o Options) (*Jobspec, error) {
	if len(o.Command) == 0 {
		return nil, errorf("", "job command and arguments are missing")
	}
	ntasks, exclusive := o.NTasks, o.Exclusive
	if ntasks == 0 && o.Nodes != 0 {
		ntasks, exclusive = o.Nodes, true
	}
	if ntasks == 0 {
		ntasks = 1
	}
	cores := o.CoresPerTask
	if cores == 0 {
		cores = 1
	}
	switch {
	case ntasks < 1:
		return nil, errorf("", "task count must be an integer >= 1")
	case cores < 1:
		return nil, errorf("", "cores per task must be an integer >= 1")
	case o.GPUsPerTask < 0:
		return nil, errorf("", "gpus per task must be an integer >= 0")
	case o.Nodes < 0:
		return nil, errorf("", "node count must be an integer >= 1 (if set)")
	case o.Nodes > ntasks:
		return nil, errorf("", "node count must not be greater than task count")
	case o.Nodes == 0 && exclusive:
		return nil, errorf("", "exclusive can only be set with a node count")
	case ntasks > MaxCount || cores > MaxCount || o.GPUsPerTask > MaxCount:
		return nil, errorf("", "counts must be <= %d", MaxCount)
	}
	if math.IsNaN(o.Duration) || math.IsInf(o.Duration, 0) {
		return nil, errorf("", "duration must be a normal, finite value")
	}
	if o.Duration < 0 {
		return nil, errorf("", "duration must not be negative")
	}

	children := []Resource{{Type: "core", Count: cores}}
	if o.GPUsPerTask > 0 {
		children = append(children, Resource{Type: "gpu", Count: o.GPUsPerTask})
	}
	if o.MemPerSlot > 0 {
		m, err := memoryVertex(o.MemPerSlot)
		if err != nil {
			return nil, errorf("", "%v", err)
		}
		children = append(children, m)
	}
	task := Task{Command: append([]string(nil), o.Command...), Slot: "task", Count: Count{PerSlot: 1}}
	var top Resource
	if o.Nodes > 0 {
		slots := (ntasks + o.Nodes - 1) / o.Nodes
		if ntasks%o.Nodes != 0 {
			// Uneven distribution wastes slots; flux says so too.
			task.Count = Count{Total: ntasks}
		}
		top = Resource{Type: "node", Count: o.Nodes,
			With: []Resource{{Type: "slot", Count: slots, Label: "task", With: children}}}
		if exclusive {
			t := true
			top.Exclusive = &t
		}
	} else {
		top = Resource{Type: "slot", Count: ntasks, Label: "task", With: children}
	}

	// attributes.system is assembled as a free-form object and decoded
	// like a parsed one, so Extra keys get the same checks.
	sys := map[string]any{"duration": json.Number(formatFloat(o.Duration))}
	env := make(map[string]string, len(o.Environment))
	for k, v := range o.Environment {
		env[k] = v
	}
	sys["environment"] = env
	if o.Cwd != "" {
		sys["cwd"] = o.Cwd
	}
	if o.Name != "" {
		sys["job"] = map[string]any{"name": o.Name}
	}
	if o.Queue != "" {
		sys["queue"] = o.Queue
	}
	if o.Constraints != nil {
		c, err := canonicalValue(o.Constraints)
		if err != nil {
			return nil, errorf("constraints", "%v", err)
		}
		if _, ok := c.(map[string]any); !ok {
			return nil, errorf("", "constraints must be a mapping")
		}
		sys["constraints"] = c
	}
	uris := o.Dependencies
	if o.BeginTime != 0 {
		if math.IsNaN(o.BeginTime) || math.IsInf(o.BeginTime, 0) || o.BeginTime < 0 {
			return nil, errorf("", "begin-time must be a finite time after the epoch")
		}
		uris = append(append([]string(nil), uris...), "begin-time:"+formatFloat(o.BeginTime))
	}
	if len(uris) > 0 {
		deps := make([]any, 0, len(uris))
		for _, u := range uris {
			d, err := dependencyEntry(u)
			if err != nil {
				return nil, err
			}
			deps = append(deps, d)
		}
		sys["dependencies"] = deps
	}
	for k, v := range o.Extra {
		c, err := canonicalValue(v)
		if err != nil {
			return nil, errorf("attributes.system."+k, "%v", err)
		}
		sys[k] = c
	}

	j := &Jobspec{Version: 1, Resources: []Resource{top}, Tasks: []Task{task}}
	if err := decodeSystem(sys, &j.Attributes.System); err != nil {
		return nil, err
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return j, nil
}

// dependencyEntry turns a dependency URI into an RFC 26 entry the way
// flux submit's URIArg does: "scheme:value?key=val", the scheme lowercased
// and query values turned into numbers where they parse as one.
func dependencyEntry(uri string) (map[string]any, error) {
	invalid := errorf("", "invalid dependency URI \"%s\"", uri)
	scheme, rest, _ := strings.Cut(uri, ":")
	if !validScheme(scheme) {
		return nil, invalid
	}
	rest, _, _ = strings.Cut(rest, "#")
	value, query, _ := strings.Cut(rest, "?")
	entry := map[string]any{"scheme": strings.ToLower(scheme), "value": value}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, invalid
		}
		for k, vals := range q {
			kept := make([]any, 0, len(vals))
			for _, v := range vals {
				if v != "" { // parse_qs drops blank values
					kept = append(kept, queryNumber(v))
				}
			}
			switch {
			case len(kept) == 1:
				entry[k] = kept[0]
			case len(kept) > 1:
				entry[k] = kept
			}
		}
	}
	return entry, nil
}

// validScheme is urllib's rule: a letter, then letters, digits, + - . .
func validScheme(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isASCIILetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func queryNumber(v string) any {
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10))
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return json.Number(formatFloat(f))
	}
	return v
}
