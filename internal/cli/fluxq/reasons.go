package fluxq

import (
	"strings"
	"time"

	"github.com/fluxq/fluxq/internal/fsd"
	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/sched"
)

// Pending reasons in a person's words (issue 16), from what the listing
// has: a begin time as a time, the reservations a job targets.

// infoBegins starts a begin time in the INFO column.
const infoBegins = "begins "

// infoUnseen is the INFO of a job in DEPEND that fluxsched has not seen.
const infoUnseen = "waiting for fluxsched"

// dependsInfo is the INFO of a job in DEPEND: the dependencies as flux
// jobs lists them, except a begin time, which reads as one ("begins
// 14:05") instead of begin-time=1795714751.27.
//
// A job in DEPEND with no dependencies is one no job manager has taken
// up yet: submitted while fluxsched was down (or in the moment before
// its next turn). Its INFO says what it waits for, not an empty
// "depends:".
func dependsInfo(deps []string, now time.Time) string {
	if len(deps) == 0 {
		return infoUnseen
	}
	var others []string
	begins := ""
	for _, d := range deps {
		dep, err := job.ParseDescription(d)
		if err != nil || dep.Scheme != job.BeginTime {
			others = append(others, d)
			continue
		}
		begins = infoBegins + beginTime(dep.Time, now)
	}
	switch {
	case len(others) == 0 && begins != "":
		return begins
	case begins != "":
		return infoDepends + strings.Join(others, ",") + ", " + begins
	}
	return infoDepends + strings.Join(others, ",")
}

// beginTime prints a moment in local time: the time of day when it is
// today ("14:05", with seconds when it has some), else with the date
// ("Nov27 14:05", and the year when it is not this one).
func beginTime(ts float64, now time.Time) string {
	t := fsd.Time(ts).In(now.Location()).Truncate(time.Second)
	clock := "15:04"
	if t.Second() != 0 {
		clock = "15:04:05"
	}
	ny, nm, nd := now.Date()
	ty, tm, td := t.Date()
	switch {
	case ty == ny && tm == nm && td == nd:
		return t.Format(clock)
	case ty == ny:
		return t.Format("Jan02 " + clock)
	}
	return t.Format("2006-01-02 " + clock)
}

// inTargets names the reservations a job targets in the scheduler's
// "insufficient resources": their nodes are busy, not the instance's.
func inTargets(reason string, targets []string) string {
	if reason != sched.ReasonInsufficient || len(targets) == 0 {
		return reason
	}
	var resv []string
	def := false
	for _, t := range targets {
		if t == jobspec.DefaultSession {
			def = true
			continue
		}
		resv = append(resv, t)
	}
	switch {
	case len(resv) == 0:
		return reason
	case len(resv) == 1:
		reason += " in reservation " + resv[0]
	default:
		reason += " in reservations " + strings.Join(resv, ",")
	}
	if def {
		reason += " and the default session"
	}
	return reason
}
