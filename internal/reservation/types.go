package reservation

import (
	"fmt"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Class is what kind of requester is asking (spec "Allocation behavior").
type Class int

// The requester classes.
const (
	// Tool is a caller outside any job: namespace tool:USER, which never
	// terminates.
	Tool Class = iota
	// Application is a process inside a running job: its namespace is
	// that job.
	Application
	// Scheduler is fluxsched itself, or the instance owner acting with
	// --as-scheduler: the implicit owner of every session.
	Scheduler
)

var classNames = []string{"tool", "application", "scheduler"}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("class(%d)", int(c))
	}
	return classNames[c]
}

// MarshalText writes the class name.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a class name.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("unknown requester class %q", b)
}

// Namespace is a job or a tool: "every job is its own namespace"; a tool's
// namespace is tool:USER (docs/reservations.md).
type Namespace struct {
	Job  fluid.ID // non-zero for a job
	Tool string   // the user name, for a tool
}

// JobNS is the namespace of job id.
func JobNS(id fluid.ID) Namespace { return Namespace{Job: id} }

// ToolNS is the namespace of a tool run by user.
func ToolNS(user string) Namespace { return Namespace{Tool: user} }

// IsJob reports whether the namespace is a job's.
func (n Namespace) IsJob() bool { return n.Job != 0 }

// IsZero reports whether n names nothing.
func (n Namespace) IsZero() bool { return n.Job == 0 && n.Tool == "" }

const toolPrefix = "tool:"

// String is "tool:USER" for a tool and the F58 job id for a job.
func (n Namespace) String() string {
	if n.IsJob() {
		return n.Job.String()
	}
	return toolPrefix + n.Tool
}

// MarshalText writes String, and nothing for the zero namespace (say, a
// scheduler request with no tool behind it) so that it reads back.
func (n Namespace) MarshalText() ([]byte, error) {
	if n.IsZero() {
		return []byte{}, nil
	}
	return []byte(n.String()), nil
}

// UnmarshalText reads "tool:USER", any job id form fluid.Parse takes, or
// nothing for the zero namespace.
func (n *Namespace) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*n = Namespace{}
		return nil
	}
	if user, ok := strings.CutPrefix(s, toolPrefix); ok {
		if user == "" {
			return fmt.Errorf("namespace %q has no user", s)
		}
		*n = ToolNS(user)
		return nil
	}
	id, err := fluid.Parse(s)
	if err != nil || id == 0 {
		return fmt.Errorf("namespace %q is neither tool:USER nor a job id", s)
	}
	*n = JobNS(id)
	return nil
}

// Requester is who makes a request: a class and its namespace. A
// scheduler's namespace is that of the tool acting as it.
type Requester struct {
	Class Class
	NS    Namespace
}

// Inheritance is a PMIX_ALLOC_INHERITANCE disposition. The zero value is
// InheritDefault, the disposition when the attribute is absent.
type Inheritance int

// The four dispositions (spec "Namespace-termination disposition").
const (
	InheritDefault Inheritance = iota
	InheritNone
	InheritChild
	InheritChildDefault
)

var inheritNames = []string{"default", "none", "child", "child-default"}

func (i Inheritance) String() string {
	if i < 0 || int(i) >= len(inheritNames) {
		return fmt.Sprintf("inheritance(%d)", int(i))
	}
	return inheritNames[i]
}

// ParseInheritance reads none, child, default or child-default.
func ParseInheritance(s string) (Inheritance, error) {
	for i, n := range inheritNames {
		if n == s {
			return Inheritance(i), nil
		}
	}
	return 0, fmt.Errorf("inheritance %q is not one of none, child, default, child-default", s)
}

// MarshalText writes the disposition's name.
func (i Inheritance) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText reads a disposition's name.
func (i *Inheritance) UnmarshalText(b []byte) error {
	v, err := ParseInheritance(string(b))
	*i = v
	return err
}

// Returns reports whether the disposition returns the nodes to the
// scheduler (NONE, CHILD) rather than unreserving them in the session.
func (i Inheritance) Returns() bool { return i == InheritNone || i == InheritChild }

// AwaitsChildren reports whether the disposition fires only after the last
// derived child has terminated (CHILD, CHILD_DEFAULT).
func (i Inheritance) AwaitsChildren() bool { return i == InheritChild || i == InheritChildDefault }

// Status is the PMIx status of a rejection; its value is the exit code
// docs/cli.md gives it (the magnitude of the PMIx constant).
type Status int

// The statuses the specification's error table uses, and the one for a
// request the nodes cannot satisfy (docs/reservations.md decision 2).
const (
	NoPermissions Status = 23
	BadParam      Status = 27
	OutOfResource Status = 29
	NotFound      Status = 46
	NotSupported  Status = 47
)

func (s Status) String() string {
	switch s {
	case NoPermissions:
		return "PMIX_ERR_NO_PERMISSIONS"
	case BadParam:
		return "PMIX_ERR_BAD_PARAM"
	case OutOfResource:
		return "PMIX_ERR_OUT_OF_RESOURCE"
	case NotFound:
		return "PMIX_ERR_NOT_FOUND"
	case NotSupported:
		return "PMIX_ERR_NOT_SUPPORTED"
	}
	return fmt.Sprintf("PMIX_ERR(%d)", int(s))
}

// Error is a rejected request: its status and one line saying why.
type Error struct {
	Status Status
	Msg    string
}

func (e *Error) Error() string { return e.Status.String() + ": " + e.Msg }

func reject(s Status, format string, a ...any) error {
	return &Error{Status: s, Msg: fmt.Sprintf(format, a...)}
}

// Attr names an attribute of the specification that a host may lack
// (spec "Backward compatibility"; config [reservation] unsupported).
type Attr string

// The five attributes.
const (
	AttrAllocTarget      Attr = "alloc-target"
	AttrAllocShare       Attr = "alloc-share"
	AttrAllocInheritance Attr = "alloc-inheritance"
	AttrAllocWarnTimeout Attr = "alloc-warn-timeout"
	AttrSpawnTarget      Attr = "spawn-target"
)

// Attrs lists every attribute, in the specification's order.
var Attrs = []Attr{AttrAllocTarget, AttrAllocShare, AttrAllocInheritance, AttrAllocWarnTimeout, AttrSpawnTarget}

// Support says which attributes the host lacks; the zero value supports
// them all.
type Support struct {
	Unsupported map[Attr]bool
}

// ParseUnsupported reads the [reservation] unsupported list.
func ParseUnsupported(names []string) (Support, error) {
	s := Support{}
	for _, n := range names {
		ok := false
		for _, a := range Attrs {
			if string(a) == n {
				ok = true
			}
		}
		if !ok {
			return Support{}, fmt.Errorf("unsupported: %q is not one of alloc-target, alloc-share, alloc-inheritance, alloc-warn-timeout, spawn-target", n)
		}
		if s.Unsupported == nil {
			s.Unsupported = map[Attr]bool{}
		}
		s.Unsupported[Attr(n)] = true
	}
	return s, nil
}

// Has reports whether the host supports a.
func (s Support) Has(a Attr) bool { return !s.Unsupported[a] }
