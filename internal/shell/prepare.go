package shell

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fluxq/fluxq/internal/jobspec"
)

// maxGPUs bounds the GPU ids listed in CUDA_VISIBLE_DEVICES for one rank.
const maxGPUs = 4096

// task is one process of the job, as a Plan works it out.
type task struct {
	id        taskID
	node      *RankTasks
	argv, env []string
	cpus      *unix.CPUSet // nil: not bound
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
func prepare(tasks []*task, js *jobspec.Jobspec, env map[string]string, opts map[string]any, data tmplData) error {
	jobID, _ := data.jobID("f58")
	base := make(map[string]string, len(env)+8)
	for k, v := range env {
		base[k] = v
	}
	base["FLUXQ_JOB_ID"] = jobID
	base["FLUXQ_JOB_NNODES"] = strconv.Itoa(data.nnodes)
	base["FLUXQ_JOB_SIZE"] = strconv.Itoa(data.ntasks)
	// Flux's own names, the same values, so a program written for Flux
	// (an MPI's flux PMI plugin, a script reading FLUX_TASK_RANK) runs.
	base["FLUX_JOB_NNODES"] = base["FLUXQ_JOB_NNODES"]
	base["FLUX_JOB_SIZE"] = base["FLUXQ_JOB_SIZE"]

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
		e["FLUX_TASK_RANK"] = e["FLUXQ_TASK_RANK"]
		e["FLUX_TASK_LOCAL_ID"] = e["FLUXQ_TASK_LOCAL_ID"]
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
