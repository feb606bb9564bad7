// Package shell is the job shell, `fluxsched job-shell JOBDIR`: the process
// the exec service (internal/exec) starts once per job, in a session of its
// own so that it outlives a scheduler that crashes or restarts. It plays the
// part of flux-core's flux-shell with the "local" launcher: it reads the
// job's jobspec and R from the job folder, lays the tasks out over R's ranks
// as flux-shell does, runs every task on this machine (a many-node R on one
// box runs all its ranks here, like `flux start --test-size=N`), and records
// the job's wait status durably for the exec service to report.
//
// # The job folder
//
// The folder <JobsDir>/<job id in decimal>/ is the contract between the
// exec service, the shell and the commands that read a job's output:
//
//	spec.json   written by exec before the shell starts: {version, id,
//	            userid, jobspec, R, t_launch}. Its presence means a launch
//	            was attempted, so a job is never launched twice.
//	(the lock)  the folder itself is flock(2)ed by exec before the shell is
//	            forked, and stays locked through the open folder the shell
//	            inherits on fd 3, for the shell's whole life: the lock is
//	            held exactly while a shell of this job runs, whoever its
//	            parent is, and no reused pid can fake it.
//	shell.pid   the shell's pid, which is also its process group and
//	            session id; the shell writes it before starting a task.
//	.reserve    room the shell holds from its start, and frees just before
//	            it writes exception and status, so that those are written
//	            even on a filesystem that filled up meanwhile.
//	shell.log   the shell's own messages from before the job's stderr is
//	            open (created only then: the shell's standard streams are
//	            /dev/null); afterwards its messages, and anything the Go
//	            runtime prints, go to the job's stderr.
//	stdout      the tasks' standard output, unless the jobspec names a path
//	stderr      the tasks' standard error and the shell's messages, likewise
//	exception   {type, severity, note}: a fatal error the shell hit (a task
//	            that could not start, an output file that could not be
//	            opened), which exec raises as a job exception. Written
//	            before status, durably.
//	status      the job's wait status in decimal: the greatest of the tasks'
//	            wait statuses (RFC 32 "finish"). Written last, atomically
//	            and durably (temp file, fsync, rename, fsync of the folder).
//
// Tasks write their output into pipes, one per output file, which the
// shell copies into the files, as flux-shell does; so a write that fails
// (a full filesystem, a quota) is the shell's to report: the job ends with
// a fatal "exec" exception, "error writing output file: write PATH: no
// space left on device", and keeps its tasks' wait status. Once every task
// has ended, output still coming from processes they left behind is
// waited for half a second at most.
//
// Output paths come from attributes.system.shell.options.output.stdout.path
// and .stderr.path (flux submit --output/--error); stderr follows stdout's
// path when only stdout has one, and output.mode "append" appends instead of
// truncating, as in flux-shell's output plugin. Paths are mustache
// templates with flux-shell's tags: {{id}} and {{jobid}} (F58, or
// {{id.dec}}, {{id.hex}}, {{id.dothex}}, {{id.words}}, {{id.f58plain}}),
// {{name}}, {{nnodes}}, {{ntasks}} or {{size}}, {{taskid}} and {{task.id}},
// {{task.rank}}, {{task.index}}, {{task.localid}}, and {{node.id}},
// {{node.name}}, {{node.broker_rank}}, {{node.ntasks}}, {{node.cores}},
// {{node.gpus}}, {{node.ncores}}; an unknown tag is left as written. A
// relative path is relative to the job's working directory.
//
// # Tasks
//
// Each task gets attributes.system.environment and nothing of the shell's
// own environment, plus FLUXQ_JOB_ID (F58, ASCII "f" when the job's
// environment sets FLUXQ_F58_FORCE_ASCII), FLUXQ_JOB_NNODES (R's ranks),
// FLUXQ_JOB_SIZE (tasks), FLUXQ_TASK_RANK, FLUXQ_TASK_LOCAL_ID (index on
// its rank) and CUDA_VISIBLE_DEVICES (its rank's GPU ids, or -1 without
// GPUs, as flux-shell's gpu-affinity plugin sets it; shell option
// gpu-affinity "off" or "per-task" as in Flux). It runs in
// attributes.system.cwd (or /tmp, with an error message, when that is not a
// directory, as flux-shell does), in the shell's process group, with
// standard input from /dev/null. It is bound with sched_setaffinity to its
// rank's cores (shell option cpu-affinity "off" or "per-task" as in Flux)
// when every one of those core ids is a CPU this shell may run on; R's core
// ids are the kernel's logical CPU ids (internal/resource discovers them
// so). When they are not (a test cluster with more configured cores than
// the machine has), the task runs unbound and nothing is reported.
//
// A command is looked up in the PATH of the task's environment, as execvp
// would. A task that cannot start ends the job as flux-shell does: the
// message "task N (host H): start failed: CMD: No such file or directory"
// on the job's stderr, an exec exception, the tasks already started killed,
// and wait status exit 127 (126 for a permission error, 1 otherwise).
//
// # Signals
//
// The exec service signals the shell's whole process group, so every task
// gets a signal exactly once and the shell forwards nothing: it catches the
// signals that would end it, so it stays to collect the tasks' statuses. A
// SIGTERM, SIGINT or SIGHUP that arrives before every task has started stops
// the launch; tasks never started count as killed by that signal. SIGKILL
// cannot be caught: exec sends it to the group after the kill grace period,
// and then the shell dies with its tasks and writes no status.
package shell
