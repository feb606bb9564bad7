package fluxres

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/fluxq/fluxq/internal/hostlist"
)

// SrunTemplate is the command launcher's template inside a Slurm
// allocation: one task on the host, beside the allocation's other steps
// (--overlap), as Flux's own start under Slurm uses srun.
const SrunTemplate = "srun --nodes=1 --ntasks=1 --overlap -w {host} {command}"

// slurm is the Slurm allocation fluxres runs in.
type slurm struct {
	job   string // SLURM_JOB_ID, "?" if unset
	nodes string // SLURM_JOB_NODELIST, as Slurm wrote it
	count int
}

// slurmAllocation reads SLURM_JOB_NODELIST; nil outside an allocation or
// with --this-machine.
func slurmAllocation(c *cli.Context) (*slurm, error) {
	list := os.Getenv("SLURM_JOB_NODELIST")
	if list == "" || c.Bool("this-machine") {
		return nil, nil
	}
	hl, err := hostlist.Parse(list)
	if err != nil || hl.IsEmpty() {
		return nil, fmt.Errorf("SLURM_JOB_NODELIST %q is not a hostlist (--this-machine describes this machine alone)", list)
	}
	job := os.Getenv("SLURM_JOB_ID")
	if job == "" {
		job = "?"
	}
	return &slurm{job: job, nodes: hl.String(), count: hl.Count()}, nil
}

// allocExec is the [exec] table printed for an allocation.
type allocExec struct {
	Launcher       string `json:"launcher"`
	Command        string `json:"command"`
	RemotePath     string `json:"remote-path,omitempty"`
	RemoteStateDir string `json:"remote-state-dir"`
}

func (s *slurm) exec() *allocExec {
	e := &allocExec{Launcher: "command", Command: SrunTemplate,
		// Node-local, and one per job: an allocation's nodes often
		// share a home directory, which the agents must not.
		RemoteStateDir: "/tmp/fluxq-" + s.job + "-{host}"}
	// fluxsched beside this fluxres, as installed: srun runs it by this
	// path on every node (a shared install, as Slurm clusters have).
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "fluxsched")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			e.RemotePath = p
		}
	}
	return e
}

func (s *slurm) writeExec(w io.Writer) error {
	e := s.exec()
	_, err := fmt.Fprintf(w, "\n[exec]\nlauncher = %s\ncommand = %s\n", strconv.Quote(e.Launcher), strconv.Quote(e.Command))
	if err == nil && e.RemotePath != "" {
		_, err = fmt.Fprintf(w, "remote-path = %s\n", strconv.Quote(e.RemotePath))
	}
	if err == nil {
		_, err = fmt.Fprintf(w, "remote-state-dir = %s\n", strconv.Quote(e.RemoteStateDir))
	}
	return err
}
