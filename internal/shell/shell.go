package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/jobspec"
	"github.com/fluxq/fluxq/internal/rset"
)

// Name prefixes the shell's messages, as "flux-shell[N]" does flux-shell's.
const Name = "fluxq-shell"

// ExceptionType is the type of the exceptions the shell raises (flux-shell
// raises "exec" on a fatal error).
const ExceptionType = "exec"

// Messages the shell writes, in flux-shell's words where it has them.
const (
	msgUsage          = "usage: %s JOBDIR"
	msgAlreadyRunning = "a job shell of this job is already running"
	msgStartFailed    = "task %d (host %s): start failed: %s: %s"
	msgBadCwd         = "host %s: Could not change dir to %s: %s. Going to /tmp instead"
	msgBadJobspec     = "error parsing jobspec: %v"
	msgBadR           = "error decoding R: %v"
	msgBadSpec        = "error reading the job: %v"
	msgOutput         = "error opening output file: %v"
	msgOutputWrite    = "error writing output file: %v"
	msgTooManyGPUs    = "rank %d has more than %d GPUs"
)

// fallbackCwd is where tasks run when the job's cwd is unusable.
const fallbackCwd = "/tmp"

// defaultPath is what execvp searches when the environment has no PATH.
const defaultPath = "/bin:/usr/bin"

// maxGPUs bounds the GPU ids listed in CUDA_VISIBLE_DEVICES for one rank.
const maxGPUs = 4096

// Signals the shell catches so that it lives on to collect its tasks'
// statuses: every catchable signal whose default action would end or stop
// it. The tasks get them from the exec service's kill of the group.
var caught = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGABRT, unix.SIGTERM,
	unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM, unix.SIGVTALRM, unix.SIGXCPU,
	unix.SIGXFSZ, unix.SIGIO, unix.SIGPWR, unix.SIGSTKFLT,
	unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU,
}

// isTermination reports whether sig asks the job to end, so that tasks not
// yet started should not be.
func isTermination(sig os.Signal) bool {
	return sig == unix.SIGTERM || sig == unix.SIGINT || sig == unix.SIGHUP
}

// Main runs the job shell on the job folder args[1] (args are os.Args:
// args[0] names the program) and returns its exit status: 0 once the job's
// wait status is recorded, nonzero, with a message on stderr and in
// shell.log, when the shell could not even do that.
func Main(args []string) int {
	if len(args) != 2 || args[1] == "" {
		prog := Name
		if len(args) > 0 {
			prog = args[0]
		}
		fmt.Fprintf(os.Stderr, msgUsage+"\n", prog)
		return 2
	}
	dir, err := filepath.Abs(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
		return 1
	}
	// The exec service gives the shell /dev/null for output: shell.log
	// is created only when there is something to say, before the job's
	// stderr is open.
	sh := &shell{dir: dir, log: io.MultiWriter(os.Stderr, &lazyFile{path: filepath.Join(dir, LogFile)})}
	lock, err := takeLock(dir)
	if err != nil {
		fmt.Fprintf(sh.log, "%s: %s: %v\n", Name, dir, err)
		return 1
	}
	// The lock is held until the process exits; keep the file reachable
	// so that no finalizer closes it sooner.
	defer runtime.KeepAlive(lock)
	// Before any task starts, so that a later exec service can signal
	// the job's process group.
	if err := WritePID(dir, os.Getpid()); err != nil {
		fmt.Fprintf(sh.log, "%s: %v\n", Name, err)
	}
	reserve(dir)

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, caught...)
	go func() {
		for sig := range sigs {
			if s, ok := sig.(syscall.Signal); ok && isTermination(sig) {
				sh.terminated.CompareAndSwap(0, int32(s))
			}
		}
	}()

	status, exc := sh.run()
	unreserve(dir)
	if exc != nil {
		if err := writeException(dir, exc); err != nil {
			fmt.Fprintf(sh.log, "%s: %v\n", Name, err)
			return 1
		}
	}
	if err := writeFileAtomic(dir, StatusFile, []byte(strconv.Itoa(status)+"\n"), true); err != nil {
		fmt.Fprintf(sh.log, "%s: %v\n", Name, err)
		return 1
	}
	return 0
}

// lazyFile is a log file created on the first write. A message that
// cannot be written is dropped: there is nowhere else to put it.
type lazyFile struct {
	path string
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return len(p), nil
		}
		l.f = f
	}
	l.f.Write(p)
	return len(p), nil
}

// takeLock returns the job's lock: the open, locked folder the exec
// service passed on LockFD, or, for a shell started by hand, the folder
// locked here.
func takeLock(dir string) (*os.File, error) {
	var fdStat, dirStat unix.Stat_t
	if unix.Fstat(LockFD, &fdStat) == nil &&
		unix.Stat(dir, &dirStat) == nil &&
		fdStat.Dev == dirStat.Dev && fdStat.Ino == dirStat.Ino {
		// The tasks must not inherit it: a task outliving the shell
		// would make the shell look alive.
		unix.CloseOnExec(LockFD)
		return os.NewFile(LockFD, dir), nil
	}
	return Lock(dir)
}

// shell is one run of the job shell.
type shell struct {
	dir      string
	log      io.Writer // the shell's messages: shell.log, then the job's stderr
	hostname string
	// terminated is the first SIGTERM, SIGINT or SIGHUP received, or 0.
	terminated atomic.Int32
}

// task is one process of the job.
type task struct {
	id             taskID
	node           *RankTasks
	argv           []string
	env            []string
	stdout, stderr *os.File
	// outPipe and errPipe are what the task writes into: pipes the shell
	// copies into stdout and stderr (see copiers).
	outPipe, errPipe *os.File
	cpus             *unix.CPUSet // nil: not bound
	pid              int          // once started
}

// logf writes one message in flux-shell's form: "NAME[N]: LEVEL: message".
func (sh *shell) logf(node int, level, format string, args ...any) {
	fmt.Fprintf(sh.log, "%s[%d]: %5s: %s\n", Name, node, level, fmt.Sprintf(format, args...))
}

// run runs the job and returns its wait status, and the exception to raise
// if the shell failed.
func (sh *shell) run() (int, *Exception) {
	sh.hostname, _ = os.Hostname()
	spec, err := ReadSpec(sh.dir)
	if err != nil {
		return sh.fatal(0, 1, nil, msgBadSpec, err)
	}
	js, err := jobspec.Parse(spec.Jobspec)
	if err != nil {
		return sh.fatal(0, 1, nil, msgBadJobspec, err)
	}
	r, err := rset.Parse(spec.R)
	if err != nil {
		return sh.fatal(0, 1, nil, msgBadR, err)
	}
	ranks, err := Layout(js, r)
	if err != nil {
		return sh.fatal(0, 1, nil, "%v", err)
	}
	sys := &js.Attributes.System
	opts := sys.Shell.Options
	env := sys.Environment
	_, ascii := env["FLUXQ_F58_FORCE_ASCII"]
	ntasks := 0
	for _, rk := range ranks {
		ntasks += rk.NTasks
	}
	data := tmplData{id: spec.ID, ascii: ascii, name: jobName(sys.Job.Name, js.Tasks[0].Command),
		nnodes: len(ranks), ntasks: ntasks}

	cwd, cwdErr := sys.Cwd, error(nil)
	if cwd != "" {
		if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
			if err == nil {
				err = unix.ENOTDIR
			}
			cwd, cwdErr = fallbackCwd, err
		}
	}

	tasks := make([]*task, 0, ntasks)
	for i := range ranks {
		rk := &ranks[i]
		for l := 0; l < rk.NTasks; l++ {
			tasks = append(tasks, &task{id: taskID{rank: rk.Basis + l, local: l}, node: rk})
		}
	}
	outs := outputFiles{}
	defer outs.close()
	if err := sh.openOutputs(tasks, opts, data, cwd, outs); err != nil {
		return sh.fatal(0, 1, nil, msgOutput, err)
	}
	// From here the shell speaks on the job's stderr, and so would a
	// crash of the shell itself.
	sh.log = tasks[0].stderr
	unix.Dup3(int(tasks[0].stderr.Fd()), 2, 0)
	if cwdErr != nil {
		sh.logf(0, "ERROR", msgBadCwd, sh.host(tasks[0].node), sys.Cwd, strerror(cwdErr))
	}

	if err := sh.prepare(tasks, js, env, opts, data); err != nil {
		return sh.fatal(0, 1, nil, "%v", err)
	}
	pipes, err := pipeOutputs(tasks)
	if err != nil {
		return sh.fatal(0, 1, nil, msgOutput, err)
	}
	status, exc := sh.runTasks(tasks, js, env, cwd, pipes)
	if err := pipes.finish(); err != nil && exc == nil {
		// The job ran, but lost output: it ends with an exception that
		// says where and why, and keeps its tasks' status.
		sh.logf(0, "FATAL", "%v", err)
		exc = &Exception{Type: ExceptionType, Severity: 0, Note: err.Error()}
	}
	return status, exc
}

// runTasks starts the tasks and waits for them, returning the job's wait
// status and the exception a failed start raises.
func (sh *shell) runTasks(tasks []*task, js *jobspec.Jobspec, env map[string]string, cwd string, pipes copiers) (int, *Exception) {
	prog, err := lookPath(js.Tasks[0].Command[0], pathOf(env), cwd)
	var started int
	if err == nil {
		started, err = sh.launch(tasks, prog, cwd)
	}
	pipes.closeWriters()
	if err != nil {
		failed := tasks[started]
		return sh.fatal(failed.node.NodeID, startExitCode(err), tasks[:started],
			msgStartFailed, failed.id.rank, sh.host(failed.node), failed.argv[0], strerror(err))
	}
	status := sh.wait(tasks[:started])
	if started < len(tasks) {
		// Stopped by a signal before they ran: they count as killed by it.
		status = max(status, job.WaitStatusSignaled(int(sh.terminated.Load())))
	}
	return status, nil
}

// pathOf is the PATH execvp would search in env.
func pathOf(env map[string]string) string {
	if p, ok := env["PATH"]; ok {
		return p
	}
	return defaultPath
}

// host names the machine of a rank in messages: its name in R, else ours.
func (sh *shell) host(rk *RankTasks) string {
	if rk != nil && rk.Hostname != "" {
		return rk.Hostname
	}
	return sh.hostname
}

// fatal ends the job as flux-shell's shell_die does: the message on the
// job's stderr, the tasks already started killed, an exec exception, and
// exit status code.
func (sh *shell) fatal(node, code int, started []*task, format string, args ...any) (int, *Exception) {
	msg := fmt.Sprintf(format, args...)
	sh.logf(node, "FATAL", "%s", msg)
	for _, t := range started {
		unix.Kill(t.pid, unix.SIGKILL)
	}
	status := max(job.WaitStatusExited(code), sh.wait(started))
	return status, &Exception{Type: ExceptionType, Severity: 0, Note: msg}
}

// wait reaps tasks and returns the greatest of their wait statuses (RFC 32
// "finish").
func (sh *shell) wait(tasks []*task) int {
	status := 0
	for _, t := range tasks {
		var ws unix.WaitStatus
		for {
			_, err := unix.Wait4(t.pid, &ws, 0, nil)
			if err != unix.EINTR {
				break
			}
		}
		status = max(status, int(ws))
	}
	return status
}

// outputFiles holds the open output files by path, so that tasks and
// streams naming one path share one file and its offset.
type outputFiles map[string]*os.File

func (o outputFiles) open(path string, appendMode bool) (*os.File, error) {
	if f, ok := o[path]; ok {
		return f, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendMode {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, err
	}
	o[path] = f
	return f, nil
}

func (o outputFiles) close() {
	for _, f := range o {
		f.Close()
	}
}

// openOutputs gives every task its stdout and stderr (see outputPaths).
func (sh *shell) openOutputs(tasks []*task, opts map[string]any, data tmplData, cwd string, outs outputFiles) error {
	appendMode, paths := outputPaths(sh.dir, tasks, opts, data, cwd)
	for i, t := range tasks {
		var err error
		if t.stdout, err = outs.open(paths[i][0], appendMode); err != nil {
			return err
		}
		if t.stderr, err = outs.open(paths[i][1], appendMode); err != nil {
			return err
		}
	}
	return nil
}

// outputPaths returns each task's stdout and stderr paths, as flux-shell's
// output plugin reads its options: output.stdout.path and
// output.stderr.path (stderr follows stdout when it has no path of its
// own; type "kvs" means the default, a file of the job folder dir),
// output.mode truncate or append.
func outputPaths(dir string, tasks []*task, opts map[string]any, data tmplData, cwd string) (appendMode bool, paths [][2]string) {
	o, _ := opts["output"].(map[string]any)
	mode, _ := o["mode"].(string)
	appendMode = mode == "append"
	stream := func(name, inherit string) string {
		s, ok := o[name].(map[string]any)
		if !ok {
			return inherit
		}
		if t, _ := s["type"].(string); t == "kvs" {
			return ""
		}
		if p, ok := s["path"].(string); ok {
			return p
		}
		return inherit
	}
	outTmpl := stream("stdout", "")
	errTmpl := stream("stderr", outTmpl)
	resolve := func(tmpl, def string, d tmplData) string {
		if tmpl == "" {
			return filepath.Join(dir, def)
		}
		p := render(tmpl, d)
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		return p
	}
	paths = make([][2]string, len(tasks))
	for i, t := range tasks {
		d := data
		d.node, d.task = t.node, &t.id
		paths[i] = [2]string{resolve(outTmpl, StdoutFile, d), resolve(errTmpl, StderrFile, d)}
	}
	return appendMode, paths
}

// prepare gives each task its arguments, environment and CPU binding.
func (sh *shell) prepare(tasks []*task, js *jobspec.Jobspec, env map[string]string, opts map[string]any, data tmplData) error {
	jobID, _ := data.jobID("f58")
	base := make(map[string]string, len(env)+8)
	for k, v := range env {
		base[k] = v
	}
	base["FLUXQ_JOB_ID"] = jobID
	base["FLUXQ_JOB_NNODES"] = strconv.Itoa(data.nnodes)
	base["FLUXQ_JOB_SIZE"] = strconv.Itoa(data.ntasks)

	gpuMode, _ := opts["gpu-affinity"].(string)
	cpuMode, _ := opts["cpu-affinity"].(string)
	var allowed unix.CPUSet
	canBind := unix.SchedGetaffinity(0, &allowed) == nil

	for _, t := range tasks {
		rk := t.node
		e := make(map[string]string, len(base)+4)
		for k, v := range base {
			e[k] = v
		}
		e["FLUXQ_TASK_RANK"] = strconv.Itoa(t.id.rank)
		e["FLUXQ_TASK_LOCAL_ID"] = strconv.Itoa(t.id.local)
		if gpuMode != "off" {
			gpus, err := idList(rk.GPUs, maxGPUs)
			if err != nil {
				return fmt.Errorf(msgTooManyGPUs, rk.Rank, maxGPUs)
			}
			// flux-shell: -1 keeps a job without GPUs off the node's GPUs.
			e["CUDA_VISIBLE_DEVICES"] = "-1"
			if len(gpus) > 0 {
				if _, set := e["CUDA_DEVICE_ORDER"]; !set {
					e["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
				}
				if gpuMode == "per-task" {
					gpus = share(gpus, rk.NTasks, t.id.local, false)
				}
				e["CUDA_VISIBLE_DEVICES"] = joinIDs(gpus)
			}
		}
		t.env = flatten(e)
		t.argv = slices.Clone(js.Tasks[0].Command)
		if canBind && cpuMode != "off" {
			t.cpus = cpuSet(rk.Cores, &allowed, cpuMode == "per-task", rk.NTasks, t.id.local)
		}
	}
	return nil
}

// launch starts the tasks in order, running prog in cwd, and returns how
// many started, and why the next one did not. It stops early, without an
// error, when a termination signal arrived.
func (sh *shell) launch(tasks []*task, prog, cwd string) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	type result struct {
		started int
		err     error
	}
	done := make(chan result, 1)
	go func() {
		// A child inherits the CPU mask of the thread that forks it, so
		// each task is forked from this thread with the task's mask set.
		// The thread is never unlocked: it ends with this goroutine,
		// taking its altered mask with it.
		runtime.LockOSThread()
		var orig unix.CPUSet
		haveOrig := unix.SchedGetaffinity(0, &orig) == nil
		bound := false
		for i, t := range tasks {
			if sh.terminated.Load() != 0 {
				done <- result{started: i}
				return
			}
			switch {
			case t.cpus != nil:
				if unix.SchedSetaffinity(0, t.cpus) == nil {
					bound = true
				} else if bound && haveOrig {
					unix.SchedSetaffinity(0, &orig)
					bound = false
				}
			case bound && haveOrig:
				unix.SchedSetaffinity(0, &orig)
				bound = false
			}
			// syscall.ForkExec rather than os/exec: the shell reaps its
			// own children, and a process per job spares the extra fork
			// os/exec spends probing for pidfd support.
			pid, err := syscall.ForkExec(prog, t.argv, &syscall.ProcAttr{
				Dir:   cwd,
				Env:   t.env,
				Files: []uintptr{devnull.Fd(), t.outPipe.Fd(), t.errPipe.Fd()},
			})
			if err != nil {
				done <- result{started: i, err: err}
				return
			}
			t.pid = pid
		}
		done <- result{started: len(tasks)}
	}()
	res := <-done
	return res.started, res.err
}

// startExitCode is the exit status of a shell whose task could not start,
// as flux-shell (and bash) choose it.
func startExitCode(err error) int {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return 126
	case errors.Is(err, unix.ENOENT):
		return 127
	}
	return 1
}

// strerror words err as C's strerror does ("No such file or directory").
func strerror(err error) string {
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// lookPath finds file in pathEnv as execvp does; relative entries are
// relative to cwd (the task's working directory). A name with a slash is
// not searched: starting it reports any error.
func lookPath(file, pathEnv, cwd string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	if file == "" {
		return "", unix.ENOENT
	}
	denied := false
	for _, dir := range strings.Split(pathEnv, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + file
		full := p
		if !filepath.IsAbs(p) && cwd != "" {
			full = filepath.Join(cwd, p)
		}
		fi, err := os.Stat(full)
		if err != nil {
			if errors.Is(err, unix.EACCES) {
				denied = true
			}
			continue
		}
		if fi.IsDir() || unix.Access(full, unix.X_OK) != nil {
			denied = true
			continue
		}
		return p, nil
	}
	if denied {
		return "", unix.EACCES
	}
	return "", unix.ENOENT
}
