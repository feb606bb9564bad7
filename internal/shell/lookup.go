package shell

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Name prefixes a job's messages (see LogLine), as "flux-shell[N]" does
// flux-shell's.
const Name = "fluxq-shell"

// Messages about a job's tasks, in flux-shell's words where it has them.
const (
	msgStartFailed = "task %d (host %s): start failed: %s: %s"
	msgBadCwd      = "host %s: Could not change dir to %s: %s. Going to /tmp instead"
	msgOutput      = "error opening output file: %v"
	msgOutputWrite = "error writing output file: %v"
	msgTooManyGPUs = "rank %d has more than %d GPUs"
)

// fallbackCwd is where tasks run when the job's cwd is unusable.
const fallbackCwd = "/tmp"

// defaultPath is what execvp searches when the environment has no PATH.
const defaultPath = "/bin:/usr/bin"

// pathOf is the PATH execvp would search in env.
func pathOf(env map[string]string) string {
	if p, ok := env["PATH"]; ok {
		return p
	}
	return defaultPath
}

// startExitCode is the exit status of a job whose task could not start,
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
