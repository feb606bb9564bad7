package job

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// Dependency schemes fluxq knows (RFC 26, as flux submit --dependency and
// --begin-time write them).
const (
	AfterOK    = "afterok"    // the target completed successfully
	AfterAny   = "afterany"   // the target ended, however
	AfterNotOK = "afternotok" // the target ended other than successfully
	AfterStart = "afterstart" // the target started running
	BeginTime  = "begin-time" // not before a time
)

// Dependency is one condition a job waits for in DEPEND.
type Dependency struct {
	Scheme string
	Target fluid.ID // for the after* schemes
	Time   float64  // for begin-time, seconds since the epoch
}

// ParseDependency reads an RFC 26 dependency (scheme and value).
func ParseDependency(scheme, value string) (Dependency, error) {
	d := Dependency{Scheme: scheme}
	switch scheme {
	case AfterOK, AfterAny, AfterNotOK, AfterStart:
		id, err := fluid.Parse(value)
		if err != nil {
			return d, fmt.Errorf("dependency %s:%s: %v", scheme, value, err)
		}
		d.Target = id
	case BeginTime:
		t, err := strconv.ParseFloat(value, 64)
		if err != nil || t < 0 || t != t {
			return d, fmt.Errorf("dependency begin-time:%s: not a time", value)
		}
		d.Time = t
	default:
		return d, fmt.Errorf("dependency scheme %q is not supported (want afterok, afterany, afternotok, afterstart or begin-time)", scheme)
	}
	return d, nil
}

// Description is the dependency as its dependency-add and
// dependency-remove events name it (RFC 21's "begin-time=1552594348").
func (d Dependency) Description() string {
	if d.Scheme == BeginTime {
		return d.Scheme + "=" + strconv.FormatFloat(d.Time, 'f', -1, 64)
	}
	return d.Scheme + "=" + d.Target.String()
}

// ParseDescription reads a Description back.
func ParseDescription(s string) (Dependency, error) {
	scheme, value, ok := strings.Cut(s, "=")
	if !ok {
		return Dependency{}, fmt.Errorf("dependency %q has no value", s)
	}
	return ParseDependency(scheme, value)
}

// Resolve says what an after* dependency's target means for it: met,
// impossible (with the reason for the dependent's exception), or neither
// yet. target is nil when no such job exists.
func (d Dependency) Resolve(target *Job) (met bool, impossible string) {
	if target == nil {
		return false, fmt.Sprintf("dependency: job %s not found", d.Target)
	}
	done := target.State == Inactive
	switch d.Scheme {
	case AfterStart:
		if target.Started {
			return true, ""
		}
		if done || target.State == Cleanup {
			return false, fmt.Sprintf("dependency: %s: job %s never started", d.Scheme, d.Target)
		}
	case AfterAny:
		return done, ""
	case AfterOK:
		if done && target.Result == Completed {
			return true, ""
		}
		if done {
			return false, fmt.Sprintf("dependency: %s: job %s ended %s", d.Scheme, d.Target, target.Result)
		}
	case AfterNotOK:
		if done && target.Result != Completed {
			return true, ""
		}
		if done {
			return false, fmt.Sprintf("dependency: %s: job %s completed", d.Scheme, d.Target)
		}
	}
	return false, ""
}
