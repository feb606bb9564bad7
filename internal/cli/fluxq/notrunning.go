package fluxq

import (
	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/api"
	"github.com/fluxq/fluxq/internal/client"
	"github.com/fluxq/fluxq/internal/job"
)

// Jobs can be submitted, and waited for, while no fluxsched runs: they
// wait for it. These notices say so once, on stderr, so that a submit
// that seems to do nothing, or a run that hangs, is not a mystery. Each
// applies only when the call just made was answered by the store itself
// (client.Unserved): a running loop holds the store, so none ran then.

// msgNotRunning ends each notice.
const msgNotRunning = "fluxsched is not running"

// noteSubmitUnserved follows a submission of n jobs.
func noteSubmitUnserved(c *cli.Context, cl client.Client, n int) {
	if !client.Unserved(cl) {
		return
	}
	what := "the job"
	if n > 1 {
		what = "the jobs"
	}
	notef(c, "%s: %s will start when it does", msgNotRunning, what)
}

// noteWaitUnserved precedes a wait (run, attach, wait ID) for the job s,
// just read through cl; an inactive job is not waited for.
func (e *env) noteWaitUnserved(c *cli.Context, cl client.Client, s *api.JobSummary) {
	if !client.Unserved(cl) {
		return
	}
	switch st := s.State; {
	case st&job.Active == 0:
	case st&job.Pending != 0:
		notef(c, "waiting for fluxsched to start %s (%s)", e.fmtID(s.ID), msgNotRunning)
	default:
		notef(c, "waiting for fluxsched to finish %s (%s)", e.fmtID(s.ID), msgNotRunning)
	}
}

// noteWaitAllUnserved precedes wait --all for n active jobs, just listed
// through cl.
func noteWaitAllUnserved(c *cli.Context, cl client.Client, n int) {
	if n > 0 && client.Unserved(cl) {
		notef(c, "waiting for fluxsched to run %s (%s)", plural(n, "job"), msgNotRunning)
	}
}
