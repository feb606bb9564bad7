package daemon

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/idset"
	"github.com/fluxq/fluxq/internal/jobmgr"
	"github.com/fluxq/fluxq/internal/version"
)

// What the instance logs at info, one line each, so that a terminal
// running fluxsched run says what it runs and why it stopped (issue 16):
// the start-up here, the exec agent and its containment from the exec
// service, each job exception from the loop, and the end here.

// Why an instance ends, besides a signal (fluxsched run's cause) or a
// failure.
var (
	errIdle    = errors.New("no job is active (--exit-on-idle)")
	errStopped = errors.New("stopped")
)

// logStart says what the instance serves: its config, resources and
// socket, then how it schedules.
func (d *Daemon) logStart(opts Options, s *setup, sock string, down idset.Set) {
	log, cfg := opts.Log, opts.Config
	where := opts.ConfigPath
	if abs, err := filepath.Abs(where); err == nil && where != "" {
		where = abs
	}
	if where == "" {
		where = "none (this machine, discovered)"
	}
	log.Info("fluxsched started", "version", version.String(), "config", where,
		"socket", sock, "launcher", cfg.Exec.Launcher)
	nodes, cores, gpus := s.inv.Counts()
	attrs := []any{"nodes", nodes, "cores", cores, "gpus", gpus, "nodelist", s.inv.Nodelist().String()}
	if !down.IsEmpty() {
		attrs = append(attrs, "drained", down.String())
	}
	if spares := s.schedR.Ranks().Difference(s.inv.Ranks()); !spares.IsEmpty() {
		attrs = append(attrs, "spare_nodes", spares.Count())
	}
	log.Info("resources", attrs...)
	if age, num := cfg.JobManager.Retention(); age >= 0 || num >= 0 {
		attrs = []any{}
		if age >= 0 {
			attrs = append(attrs, "inactive_age_limit", cfg.JobManager.InactiveAgeLimit)
		}
		if num >= 0 {
			attrs = append(attrs, "inactive_num_limit", num)
		}
		log.Info("retention", attrs...)
	}
	if opts.SchedCmd != "" {
		// The built-in policy and mode do not apply: the command's own
		// ready says its mode, logged when it is in ("scheduler ready").
		attrs = []any{"sched_cmd", opts.SchedCmd}
		if cfg.QueueSet != nil && cfg.QueueSet.Named() {
			attrs = append(attrs, "queues", strings.Join(cfg.QueueSet.Names(), ","))
		}
		log.Info("scheduler", attrs...)
		return
	}
	def := s.sched.Default
	mode := "unlimited"
	if opts.Limit > 0 {
		mode = "limited=" + strconv.Itoa(opts.Limit)
	}
	attrs = []any{"policy", def.Kind.String(), "match", def.Match.String(), "queue_depth", def.QueueDepth, "mode", mode}
	if cfg.QueueSet != nil && cfg.QueueSet.Named() {
		attrs = append(attrs, "queues", strings.Join(cfg.QueueSet.Names(), ","))
	}
	log.Info("scheduler", attrs...)
}

// logEnd says why the instance ends and what it leaves: active jobs
// wait for the next start, running ones go on under the exec agent. failed
// is the loop's own error, if it ended on one; else cause says why.
func logEnd(log *slog.Logger, failed, cause error, c jobmgr.QueueCounts) {
	counts := []any{"active", c.Active, "running", c.Running}
	if failed != nil {
		log.Error("fluxsched stopping", append([]any{"err", failed}, counts...)...)
		return
	}
	why := errStopped.Error()
	if cause != nil && !errors.Is(cause, context.Canceled) {
		why = cause.Error()
	}
	log.Info("fluxsched stopping", append([]any{"why", why}, counts...)...)
}
