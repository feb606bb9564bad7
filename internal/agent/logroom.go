package agent

import (
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// logRoom is the room kept allocated past the end of the agent's log
// file (agent.log, in the agents' folder of the state directory). The
// lines that matter most, that the journal cannot be written, come when
// that filesystem is full, when a plain append finds no block to write
// into: they are written into this room instead.
const logRoom = 64 << 10

// LogWriter is the agent's log file as slog writes to it, keeping room
// allocated past its end (fallocate, the file's size unchanged). A file
// that is not a regular one (a terminal, a pipe) is written as it is.
func LogWriter(f *os.File) io.Writer {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return f
	}
	w := &roomyLog{f: f}
	w.keepRoom()
	return w
}

type roomyLog struct {
	mu  sync.Mutex
	f   *os.File
	end int64 // end of the room allocated
}

func (w *roomyLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.f.Write(p)
	w.keepRoom()
	return n, err
}

// keepRoom renews the room once half of it is used. It may fail (the
// disk is full): the room left is then used, and it is tried again at
// the next line.
func (w *roomyLog) keepRoom() {
	fi, err := w.f.Stat()
	if err != nil {
		return
	}
	size := fi.Size()
	if w.end-size >= logRoom/2 {
		return
	}
	if unix.Fallocate(int(w.f.Fd()), unix.FALLOC_FL_KEEP_SIZE, size, logRoom) == nil {
		w.end = size + logRoom
	}
}
