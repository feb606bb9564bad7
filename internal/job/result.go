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

// returncodeCanceled is flux's returncode for a job canceled before its
// tasks ran.
const returncodeCanceled = -128

// ReturnCode is a job's returncode as flux-core's JobInfo.returncode (and
// so `flux jobs`) defines it, the one meaning fluxq gives the word in its
// summaries, on the socket and in every listing. Flux reads it off the
// job shell's wait status, and its shell exits 128+N when a task is
// killed by signal N; fluxq's wait status is the tasks' own (there is no
// shell process between), so a task killed by N reads 128+N here too:
// 143 for a job canceled while it ran (SIGTERM), 142 for one that ran out
// of time (SIGALRM), 137 for SIGKILL. Otherwise the exit code; with no
// wait status (the tasks never ran), -128 for a job canceled and 1 for a
// job that failed; no returncode for a job still active, or timed out
// before it started. A command's own exit status follows the same rule
// for tasks: see ExitCode.
func ReturnCode(waitstatus *int, r Result) (int, bool) {
	if waitstatus != nil {
		return ExitCode(*waitstatus), true
	}
	switch r {
	case Canceled:
		return returncodeCanceled, true
	case Failed:
		return 1, true
	}
	return 0, false
}

// ExitCode turns a POSIX wait status into the exit code a shell would show:
// the exit status, or 128+N for a job killed by signal N. It is what
// fluxq run, attach and wait exit with, as flux run does with the shell's.
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
