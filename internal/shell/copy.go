package shell

import (
	"fmt"
	"os"
	"time"
)

// Tasks write their output into pipes, and the shell copies it into the
// output files, as flux-shell does: a write that fails (a full
// filesystem, a quota) then happens in the shell, which can say so. A task
// writing straight into the file would get the error alone, and the job
// would end as if nothing was lost. One pipe per output file, shared by
// every task and stream naming it, keeps their writes in one stream as a
// shared file offset did.

// drainGrace bounds how long the shell waits, once every task has ended,
// for the last of their output: a process a task left behind may hold a
// pipe open, and what it writes later is not the job's.
const drainGrace = 500 * time.Millisecond

// copier copies one pipe into one output file.
type copier struct {
	file *os.File
	r, w *os.File // w is what the tasks get
	done chan struct{}
	err  error // the first write that failed; read after done
}

// copiers are the pipes of a job's output files.
type copiers []*copier

// pipeOutputs gives every task a pipe for each output stream, one per
// output file, and starts copying.
func pipeOutputs(tasks []*task) (copiers, error) {
	byFile := map[*os.File]*copier{}
	var cs copiers
	get := func(f *os.File) (*os.File, error) {
		if c, ok := byFile[f]; ok {
			return c.w, nil
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		c := &copier{file: f, r: r, w: w, done: make(chan struct{})}
		byFile[f] = c
		cs = append(cs, c)
		go c.run()
		return w, nil
	}
	for _, t := range tasks {
		var err error
		if t.outPipe, err = get(t.stdout); err == nil {
			t.errPipe, err = get(t.stderr)
		}
		if err != nil {
			cs.closeWriters()
			cs.finish()
			return nil, err
		}
	}
	return cs, nil
}

func (c *copier) run() {
	defer close(c.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.r.Read(buf)
		if n > 0 && c.err == nil {
			if _, werr := c.file.Write(buf[:n]); werr != nil {
				c.err = werr
			}
			// After a failure the rest is read and dropped, so that no
			// task blocks on a full pipe.
		}
		if err != nil {
			return
		}
	}
}

// closeWriters drops the shell's own ends, once the tasks have theirs:
// a pipe then ends when the last task holding it does.
func (cs copiers) closeWriters() {
	for _, c := range cs {
		c.w.Close()
	}
}

// finish waits for the tasks' last output, at most drainGrace, and
// returns the first write that failed.
func (cs copiers) finish() error {
	deadline := time.Now().Add(drainGrace)
	var first error
	for _, c := range cs {
		select {
		case <-c.done:
		case <-time.After(time.Until(deadline)):
			c.r.SetReadDeadline(time.Now())
			<-c.done
		}
		c.r.Close()
		if c.err != nil && first == nil {
			first = c.err
		}
	}
	if first != nil {
		return fmt.Errorf(msgOutputWrite, first)
	}
	return nil
}
