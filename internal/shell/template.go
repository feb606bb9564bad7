package shell

import (
	"path"
	"strconv"
	"strings"

	"github.com/fluxq/fluxq/internal/fluid"
)

// tmplData is what a mustache template in a shell option can name: the
// job, and, when rendering for one task, that task and its rank.
type tmplData struct {
	id     fluid.ID
	ascii  bool // FLUXQ_F58_FORCE_ASCII: F58 with "f"
	name   string
	nnodes int
	ntasks int
	node   *RankTasks // nil outside a task
	task   *taskID
}

// taskID numbers a task: globally and on its rank.
type taskID struct{ rank, local int }

// render expands flux-shell's mustache tags in tmpl. As in flux-shell, a
// tag it cannot expand is left as written, and a "{{" without "}}" ends
// the expansion.
func render(tmpl string, d tmplData) string {
	if !strings.Contains(tmpl, "{{") {
		return tmpl
	}
	var b strings.Builder
	for {
		start := strings.Index(tmpl, "{{")
		if start < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		end := strings.Index(tmpl[start+2:], "}}")
		if end < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:start])
		tag := tmpl[start+2 : start+2+end]
		if v, ok := d.tag(tag); ok {
			b.WriteString(v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
		tmpl = tmpl[start+2+end+2:]
	}
}

func (d tmplData) tag(tag string) (string, bool) {
	// flux-shell: "jobid" is a synonym for "id", "taskid" for "task.id".
	if strings.HasPrefix(tag, "jobid") {
		tag = tag[3:]
	} else if tag == "taskid" {
		tag = "task.id"
	}
	switch {
	case tag == "id":
		return d.jobID("f58")
	case strings.HasPrefix(tag, "id."):
		return d.jobID(tag[len("id."):])
	case tag == "name":
		return d.name, true
	case tag == "nnodes":
		return strconv.Itoa(d.nnodes), true
	case tag == "ntasks" || tag == "size":
		return strconv.Itoa(d.ntasks), true
	case strings.HasPrefix(tag, "task."):
		if d.task == nil {
			return "", false
		}
		switch tag[len("task."):] {
		case "id", "rank":
			return strconv.Itoa(d.task.rank), true
		case "index", "localid":
			return strconv.Itoa(d.task.local), true
		}
	case strings.HasPrefix(tag, "node."):
		if d.node == nil {
			return "", false
		}
		n := d.node
		switch tag[len("node."):] {
		case "id":
			return strconv.Itoa(n.NodeID), true
		case "name":
			return n.Hostname, n.Hostname != ""
		case "broker_rank":
			return strconv.FormatUint(uint64(n.Rank), 10), true
		case "ntasks":
			return strconv.Itoa(n.NTasks), true
		case "cores", "resources.cores":
			return n.Cores.String(), true
		case "gpus", "resources.gpus":
			return n.GPUs.String(), true
		case "ncores", "resources.ncores":
			return strconv.Itoa(n.Cores.Count()), true
		}
	}
	return "", false
}

// jobID encodes the job ID as flux_job_id_encode does for the named
// encoding.
func (d tmplData) jobID(enc string) (string, bool) {
	f := map[string]fluid.Format{
		"f58": fluid.F58, "f58plain": fluid.F58Plain, "dec": fluid.Dec,
		"hex": fluid.Hex, "dothex": fluid.Dothex, "words": fluid.Words,
	}
	format, ok := f[enc]
	if !ok {
		return "", false
	}
	if format == fluid.F58 && d.ascii {
		format = fluid.F58Plain
	}
	s, err := d.id.Encode(format)
	return s, err == nil
}

// jobName is {{name}}: the job name, else the command's base name.
func jobName(name string, command []string) string {
	if name != "" {
		return name
	}
	if len(command) > 0 && command[0] != "" {
		return path.Base(command[0])
	}
	return "unknown"
}

// UnknownTag returns the first mustache tag in tmpl, braces and all,
// that no job, task or node could expand ("" if there is none), so that a submission with an
// output path naming one is refused instead of making a file with braces
// in its name. A "{{" without "}}" is text, as render leaves it.
func UnknownTag(tmpl string) string {
	all := tmplData{id: 1, name: "x", node: &RankTasks{Hostname: "x"}, task: &taskID{}}
	for {
		start := strings.Index(tmpl, "{{")
		if start < 0 {
			return ""
		}
		end := strings.Index(tmpl[start+2:], "}}")
		if end < 0 {
			return ""
		}
		tag := tmpl[start+2 : start+2+end]
		if _, ok := all.tag(tag); !ok {
			return "{{" + tag + "}}"
		}
		tmpl = tmpl[start+2+end+2:]
	}
}

// Tags lists the tags of an output path, for messages.
const Tags = "{{id}} (or {{id.dec}}, {{id.hex}}, {{id.words}}...), {{name}}, {{nnodes}}, {{ntasks}}, {{taskid}}, {{node.name}}, {{node.id}}"
