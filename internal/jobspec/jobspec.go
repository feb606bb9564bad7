package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Limits on input. They bound the memory Parse may use, whatever it is fed.
const (
	// MaxSize is the largest jobspec Parse reads, in bytes. Jobspecs that
	// flux submit writes are a few kilobytes; 1 MiB leaves room for
	// embedded files (RFC 37).
	MaxSize = 1 << 20
	// MaxYAMLSize is the largest YAML jobspec Parse reads. The YAML
	// library builds a node tree of ~100 bytes per node before any
	// check can run, so YAML (the hand-written form) gets a smaller cap.
	MaxYAMLSize = 256 << 10
	// MaxDepth is the deepest nesting of objects and arrays accepted.
	MaxDepth = 64
	// MaxNodes is the most values (objects, arrays, scalars, counting
	// YAML alias expansions) a jobspec may hold; a flux submit jobspec
	// holds about a hundred.
	MaxNodes = 1 << 17
	// MaxCount is the largest count accepted, per vertex and in total
	// (nodes, slots, cores, gpus, tasks): flux-core reads counts as a C int.
	MaxCount = math.MaxInt32
)

// Jobspec is a version 1 jobspec (RFC 25).
type Jobspec struct {
	Version    int
	Resources  []Resource
	Tasks      []Task
	Attributes Attributes
}

// Resource is a resource vertex: node, slot, core or gpu in V1.
type Resource struct {
	Type  string
	Count int
	// Unit is the optional unit of Count ("" when absent).
	Unit string
	// Label names a slot; tasks refer to it. Required on slots.
	Label string
	// Exclusive is nil when the key is absent (RFC 14 defaults apply).
	Exclusive *bool
	With      []Resource
}

// IsExclusive reports whether exclusive is present and true.
func (r *Resource) IsExclusive() bool { return r.Exclusive != nil && *r.Exclusive }

// Task is the one task of a V1 jobspec.
type Task struct {
	Command []string
	Slot    string
	Count   Count
}

// Count is a task count: exactly one of PerSlot or Total is set (non-zero).
type Count struct {
	PerSlot int
	Total   int
}

// Attributes holds attributes.system and attributes.user.
type Attributes struct {
	System System
	// User is attributes.user, nil when absent; if present it must hold
	// at least one key.
	User map[string]any
}

// System holds attributes.system. Keys without a field of their own are
// kept in Extra, since RFC 14 lets instances define more.
type System struct {
	// Duration is the time limit in seconds; 0 means unlimited.
	Duration float64
	// Cwd is the absolute working directory ("" when absent).
	Cwd string
	// Environment is nil when absent. Values are strings.
	Environment map[string]string
	// Queue names the target queue ("" when absent).
	Queue string
	// Constraints is the RFC 31 constraint object as canonical JSON, nil
	// when absent. Only its being an object is checked here.
	Constraints json.RawMessage
	// Dependencies is the RFC 26 list, nil when absent.
	Dependencies []Dependency
	// Shell is attributes.system.shell.
	Shell Shell
	// Job is attributes.system.job.
	Job JobMeta
	// Extra holds every other key of attributes.system, nil if none.
	Extra map[string]any
}

// Dependency is one RFC 26 dependency.
type Dependency struct {
	Scheme string
	Value  string
	// Extra holds the dependency's other keys, nil if none.
	Extra map[string]any
}

// Shell holds attributes.system.shell.
type Shell struct {
	// Options is shell.options, nil when absent.
	Options map[string]any
	// Extra holds shell's other keys, nil if none.
	Extra map[string]any
}

// JobMeta holds attributes.system.job, whose values are all strings.
type JobMeta struct {
	// Name is the job name ("" when absent).
	Name string
	// Extra holds the other keys, nil if none.
	Extra map[string]string
}

// Error is a jobspec defect: Path says where ("" for the whole document
// or when Msg names the place itself), Msg what is wrong.
type Error struct {
	Path string
	Msg  string
}

// Error returns "path: message", or the message alone without a path.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a jobspec in JSON or YAML and validates it. JSON is tried
// first so numbers keep their exact text; anything else is read as one
// YAML document.
func Parse(data []byte) (*Jobspec, error) {
	if len(data) <= MaxSize {
		if j := parseFast(data); j != nil {
			return j, nil
		}
	}
	return parseFull(data)
}

// parseFull is Parse for any input: a free-form tree first, then the
// Jobspec, so that every defect is reported as it is.
func parseFull(data []byte) (*Jobspec, error) {
	if len(data) > MaxSize {
		return nil, errorf("", "jobspec is too large: %d bytes, the limit is %d", len(data), MaxSize)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	var tree any
	var err error
	if len(trimmed) > 0 && trimmed[0] == '{' {
		tree, err = parseJSONValue(data)
		if err != nil {
			// A YAML flow mapping also starts with '{'.
			if t, yerr := parseYAML(data); yerr == nil {
				tree, err = t, nil
			}
		}
	} else {
		tree, err = parseYAML(data)
	}
	if err != nil {
		return nil, err
	}
	j, err := decode(tree)
	if err != nil {
		return nil, err
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return j, nil
}
