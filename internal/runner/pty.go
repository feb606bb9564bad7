package runner

import "golang.org/x/sys/unix"

// PtyOption is the shell option that asks for the first task to be run on
// a terminal, as flux-shell's pty option does: fluxq makes the terminal
// and names it as the tasks' input and output; the runner only makes it
// the task's controlling terminal (see fork).
const PtyOption = "pty"

// ptyTask reports whether a task whose stdin is fd is run as a terminal's
// session leader: the job asks for it, and fd is a terminal. A pty option
// with no terminal behind it (an --input file) runs the task as any other.
func ptyTask(opts map[string]any, fd int) bool {
	v, ok := opts[PtyOption]
	if !ok || v == nil || v == false {
		return false
	}
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
