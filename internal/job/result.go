package job

import (
	"fmt"
	"strings"
)

// Result is how an inactive job ended. Like State it is a bit, so a filter
// may name several.
type Result uint

// The results flux-core reports.
const (
	Completed Result = 1 << iota
	Failed
	Canceled
	Timeout
)

var resultNames = []struct {
	r          Result
	name, abbr string
}{
	{Completed, "COMPLETED", "CD"},
	{Failed, "FAILED", "F"},
	{Canceled, "CANCELED", "CA"},
	{Timeout, "TIMEOUT", "TO"},
}

// String returns the result's name ("COMPLETED"), or "" for none.
func (r Result) String() string {
	for _, n := range resultNames {
		if n.r == r {
			return n.name
		}
	}
	return ""
}

// Abbrev returns the ST column form `flux jobs` prints for inactive jobs.
func (r Result) Abbrev() string {
	for _, n := range resultNames {
		if n.r == r {
			return n.abbr
		}
	}
	return "?"
}

// ParseResult reads a result by name or abbreviation, case ignored, as
// flux_job_strtoresult does.
func ParseResult(s string) (Result, error) {
	for _, n := range resultNames {
		if strings.EqualFold(s, n.name) || strings.EqualFold(s, n.abbr) {
			return n.r, nil
		}
	}
	return 0, fmt.Errorf("invalid result %q", s)
}

// ExitCode turns a POSIX wait status into the exit code a shell would show:
// the exit status, or 128+N for a job killed by signal N.
func ExitCode(waitstatus int) int {
	if sig := waitstatus & 0x7f; sig != 0 && sig != 0x7f {
		return 128 + sig
	}
	return (waitstatus >> 8) & 0xff
}

// WaitStatusExited is the wait status of a process that exited with code.
func WaitStatusExited(code int) int { return (code & 0xff) << 8 }

// WaitStatusSignaled is the wait status of a process killed by sig.
func WaitStatusSignaled(sig int) int { return sig & 0x7f }
