package shell

// Names of the default output files in a job folder, where a task's output
// goes when the jobspec names no path (see outputPaths; the job folder is
// described in internal/runner's package doc).
const (
	StdoutFile = "stdout"
	StderrFile = "stderr"
)
