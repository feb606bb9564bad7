package fluxq

import (
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/cli/fluxformat"
	"github.com/fluxq/fluxq/internal/cli/output"
	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/state"
)

// jobPrefixes are flux jobs' short names: {sched.reason_pending} is
// {annotations.sched.reason_pending}.
var jobPrefixes = map[string]string{
	"sched.": "annotations.sched.",
	"user.":  "annotations.user.",
}

// jobFields are the fields of `fluxq jobs -o` and `fluxq info -o` in
// flux jobs' names (flux-jobs(1), OUTPUT FORMAT), with its headings: the
// computed ones Flux has and --json does not, and the headings and
// meanings of the --json ones.
func (e *env) jobFields(now time.Time) []output.Field[*api.JobSummary] {
	type f = output.Field[*api.JobSummary]
	id := func(format fluid.Format) func(*api.JobSummary) any {
		return func(s *api.JobSummary) any {
			v, err := s.ID.Encode(format)
			if err != nil {
				return nil
			}
			return v
		}
	}
	// {id} and {id.f58} print F58, {id:d} the number, as in Flux.
	f58 := func(s *api.JobSummary) any { return fluxformat.IntText{N: uint64(s.ID), Text: e.fmtID(s.ID)} }
	// A job a job is linked to (again_of, retried_as) prints as {id}
	// does; none prints as an absent field.
	linked := func(id *fluid.ID) any {
		if id == nil {
			return nil
		}
		return fluxformat.IntText{N: uint64(*id), Text: e.fmtID(*id)}
	}
	return []f{
		// Computed: flux jobs' names for what --json has in other forms.
		{Name: "id", Heading: "JOBID", Help: "job ID in F58; {id:d} in decimal ({{.id}} is the number)", Value: f58},
		{Name: "id.f58", Heading: "JOBID", Help: "job ID in F58: ƒ and base58 (f with FLUXQ_F58_FORCE_ASCII)", Value: f58},
		{Name: "id.f58plain", Heading: "JOBID", Help: "job ID in F58 with an ASCII f", Value: id(fluid.F58Plain)},
		{Name: "id.dec", Heading: "JOBID", Help: "job ID in decimal", Value: id(fluid.Dec)},
		{Name: "id.hex", Heading: "JOBID", Help: "job ID in hexadecimal, 0x...", Value: id(fluid.Hex)},
		{Name: "id.dothex", Heading: "JOBID", Help: "job ID in dotted hexadecimal, xxxx.xxxx.xxxx.xxxx", Value: id(fluid.Dothex)},
		{Name: "id.words", Heading: "JOBID", Help: "job ID in mnemonic words", Value: id(fluid.Words)},
		{Name: "state_single", Heading: "S", Help: "state in one letter: D P S R C I", Value: func(s *api.JobSummary) any {
			return s.State.Abbrev()
		}},
		{Name: "status_abbrev", Heading: "ST", Help: "status in at most two letters (the ST column)", Value: func(s *api.JobSummary) any { return statusAbbrev(s) }},
		{Name: "result_abbrev", Heading: "RS", Help: "result in at most two letters: CD F CA TO", Value: func(s *api.JobSummary) any {
			if s.Result == 0 {
				return ""
			}
			return s.Result.Abbrev()
		}},
		{Name: "success", Heading: "SUCCESS", Help: "True if the job completed, False if it ended otherwise, empty while active", Value: func(s *api.JobSummary) any {
			if s.State != job.Inactive {
				return nil
			}
			return s.Result == job.Completed
		}},
		{Name: "contextual_info", Heading: "INFO", Help: "why a pending job waits, where a running one runs (the INFO column)", Value: func(s *api.JobSummary) any { return contextualInfo(s, now) }},
		{Name: "contextual_time", Heading: "TIME", Help: "time limit while pending, runtime after, in seconds (the TIME column: {contextual_time!F})", Value: func(s *api.JobSummary) any {
			if pending(s) {
				return s.Duration
			}
			return runtime(s, now)
		}},
		{Name: "inactive_reason", Heading: "INACTIVE-REASON", Help: "how an inactive job ended (the REASON column of -o long)", Value: func(s *api.JobSummary) any { return inactiveReason(s) }},
		{Name: "endreason", Heading: "INACTIVE-REASON", Help: "how an inactive job ended: Exit N, a signal's name, Canceled, Timeout or the fatal exception (as {inactive_reason}; -o endreason shows it with when)", Value: func(s *api.JobSummary) any { return inactiveReason(s) }},
		{Name: "expiration", Heading: "EXPIRATION", Help: "when a started job's time limit expires (seconds since the epoch)", Value: func(s *api.JobSummary) any {
			if s.TRun > 0 && s.Duration > 0 {
				return s.TRun + s.Duration
			}
			return nil
		}},
		{Name: "t_remaining", Heading: "T_REMAINING", Help: "seconds left before a running job's time limit", Value: func(s *api.JobSummary) any {
			if s.State&job.Running == 0 || s.TRun == 0 || s.Duration == 0 {
				return nil
			}
			return max(0, s.TRun+s.Duration-state.Timestamp(now))
		}},
		{Name: "command", Heading: "COMMAND", Help: "the command line, quoted as a shell would need it (--json: a list)", Value: func(s *api.JobSummary) any { return commandLine(s.Command) }},

		// The --json fields, as flux jobs heads them.
		{Name: "id_f58", Heading: "JOBID", Help: "job ID in F58"},
		{Name: "userid", Heading: "UID", Help: "submitter's user ID"},
		{Name: "username", Heading: "USER", Help: "submitter's user name"},
		{Name: "urgency", Heading: "URG", Help: "urgency, 0 (held) to 31 (expedited)"},
		{Name: "priority", Heading: "PRI", Help: "priority the scheduler orders by"},
		{Name: "state", Help: "state: DEPEND PRIORITY SCHED RUN CLEANUP INACTIVE"},
		{Name: "status", Help: "state while active, result after"},
		{Name: "result", Help: "COMPLETED FAILED CANCELED TIMEOUT, once inactive"},
		{Name: "name", Help: "job name"},
		{Name: "queue", Help: "queue"},
		{Name: "cwd", Help: "working directory"},
		{Name: "ntasks", Help: "tasks"},
		{Name: "nnodes", Help: "nodes, asked for or held"},
		{Name: "ncores", Help: "cores, asked for or held"},
		{Name: "ngpus", Help: "GPUs, asked for or held"},
		{Name: "duration", Help: "time limit in seconds (0: none)"},
		{Name: "nodelist", Help: "nodes held, once allocated"},
		{Name: "t_submit", Help: "when submitted (seconds since the epoch: {t_submit!d:%H:%M})"},
		{Name: "t_depend", Help: "when it entered DEPEND"},
		{Name: "t_run", Help: "when it started"},
		{Name: "t_cleanup", Help: "when it entered CLEANUP"},
		{Name: "t_inactive", Help: "when it became inactive"},
		{Name: "runtime", Help: "seconds it has run ({runtime!F}, {runtime!H})"},
		{Name: "waitstatus", Heading: "WSTATUS", Help: "wait status, once it exited"},
		{Name: "returncode", Heading: "RC", Help: "exit code (128+signal if killed: 143 canceled, 142 timed out; -128 if canceled before it ran), once inactive"},
		{Name: "exception.occurred", Heading: "EXCEPTION-OCCURRED", Help: "True if an exception was raised"},
		{Name: "exception.severity", Heading: "EXCEPTION-SEVERITY", Help: "its severity (0 is fatal)"},
		{Name: "exception.type", Heading: "EXCEPTION-TYPE", Help: "its type: cancel, timeout, exec..."},
		{Name: "exception.note", Heading: "EXCEPTION-NOTE", Help: "its note"},
		{Name: "annotations", Help: "annotations; a key with a dot: {annotations.sched.reason_pending}"},
		{Name: "sched.reason_pending", Heading: "REASON", Help: "why the scheduler has not started it (annotations.sched.reason_pending)"},
		{Name: "sched.t_estimate", Heading: "T_ESTIMATE", Help: "when the scheduler expects to start it"},
		{Name: "dependencies", Help: "outstanding dependencies, comma-separated"},
		{Name: "targets", Help: "reservation sessions it may run in"},
		{Name: "parent", Help: "job it was submitted from, if any"},
		{Name: "again_of", Heading: "AGAIN-OF", Help: "job it was resubmitted from, or the run it retries, as {id} prints it", Value: func(s *api.JobSummary) any { return linked(s.AgainOf) }},
		{Name: "retry", Help: "which retry of its chain it is (0: a first run; submit --retry)"},
		{Name: "retried_as", Heading: "RETRIED-AS", Help: "the retry that followed it, once it failed, as {id} prints it", Value: func(s *api.JobSummary) any { return linked(s.RetriedAs) }},
		{Name: "user_cpu", Help: "CPU seconds in user mode, once finished"},
		{Name: "sys_cpu", Help: "CPU seconds in the kernel, once finished"},
		{Name: "max_rss", Help: "largest resident size of one process in bytes, once finished"},
	}
}

// commandLine joins a command's words as a shell would read them back:
// a word with anything but letters, digits and @%+=:,./_- is quoted.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellQuote(a)
	}
	return strings.Join(words, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("@%+=:,./_-", c)) {
			return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
		}
	}
	return s
}
