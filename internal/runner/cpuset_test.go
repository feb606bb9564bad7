package runner

import "golang.org/x/sys/unix"

// unixCPUSet is this thread's CPU mask, for tests.
type unixCPUSet struct{ s unix.CPUSet }

func (c *unixCPUSet) get() bool  { return unix.SchedGetaffinity(0, &c.s) == nil }
func (c *unixCPUSet) count() int { return c.s.Count() }
