// Package shell is the library of how a job's tasks are laid out and
// prepared, as flux-core's flux-shell would prepare them: the exec agent's
// runner (internal/runner) asks it for a Plan and forks the tasks itself.
// The name is flux-shell's, whose part it plays; there is no shell process.
// The job folder the runner writes (stdout, stderr) is described in
// internal/runner's package doc.
//
// # Layout
//
// Layout spreads the jobspec's tasks over R's ranks as flux-shell does
// (per-slot, or per-resource with the per-resource shell option). Every
// rank runs on this machine: a many-node R on one box runs all its ranks
// here, like `flux start --test-size=N`.
//
// # Tasks
//
// Each task gets attributes.system.environment and nothing of its
// starter's own environment, plus FLUXQ_JOB_ID (F58, ASCII "f" when the
// job's environment sets FLUXQ_F58_FORCE_ASCII), FLUXQ_JOB_NNODES (R's
// ranks), FLUXQ_JOB_SIZE (tasks), FLUXQ_TASK_RANK, FLUXQ_TASK_LOCAL_ID
// (index on its rank), the same four under Flux's names (FLUX_JOB_NNODES,
// FLUX_JOB_SIZE, FLUX_TASK_RANK, FLUX_TASK_LOCAL_ID) and CUDA_VISIBLE_DEVICES (its rank's GPU ids, or -1
// without GPUs, as flux-shell's gpu-affinity plugin sets it; shell option
// gpu-affinity "off" or "per-task" as in Flux). Its CPU binding is its
// rank's cores (shell option cpu-affinity "off" or "per-task" as in Flux)
// when every one of those core ids is a CPU the caller may run on; R's
// core ids are the kernel's logical CPU ids (internal/resource discovers
// them so). When they are not (a test cluster with more configured cores
// than the machine has), the task runs unbound and nothing is reported;
// so does a task whose cores another host on the same machine names too
// (the runner's SetSharedCPUs: local hosts laid over the same cores).
//
// A job runs in attributes.system.cwd, or in /tmp with a message when that
// is not a directory, as flux-shell falls back (CheckCwd, BadCwdMessage).
// Its command is looked up in the PATH of the task's environment, as
// execvp would (LookPath). A task that cannot start ends the job as
// flux-shell does: "task N (host H): start failed: CMD: No such file or
// directory" (StartFailedMessage) and wait status exit 127, 126 for a
// permission error, 1 otherwise (StartExitCode). Messages take
// flux-shell's form, "fluxq-shell[N]: LEVEL: message" (LogLine).
//
// # Output paths
//
// Output paths come from attributes.system.shell.options.output.stdout.path
// and .stderr.path (flux submit --output/--error); stderr follows stdout's
// path when only stdout has one, and output.mode "append" appends instead
// of truncating, as in flux-shell's output plugin. Without a path, output
// goes to the job folder's stdout and stderr (StdoutFile, StderrFile).
// Paths are mustache templates with flux-shell's tags: {{id}} and
// {{jobid}} (F58, or {{id.dec}}, {{id.hex}}, {{id.dothex}}, {{id.words}},
// {{id.f58plain}}), {{name}}, {{nnodes}}, {{ntasks}} or {{size}},
// {{taskid}} and {{task.id}}, {{task.rank}}, {{task.index}},
// {{task.localid}}, and {{node.id}}, {{node.name}}, {{node.broker_rank}},
// {{node.ntasks}}, {{node.cores}}, {{node.gpus}}, {{node.ncores}}; an
// unknown tag is left as written. A relative path is relative to the
// job's working directory.
//
// OpenOutput opens a job's output for a reader (fluxq attach) without
// following what a guest may have put in its own job folder.
package shell
