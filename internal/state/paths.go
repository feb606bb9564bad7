package state

import (
	"path/filepath"
	"strconv"

	"github.com/fluxq/fluxq/internal/fluid"
)

// The files of an instance's state directory (docs/architecture.md).
const (
	StoreFile = "fluxq.db"
	// BackupFile is fluxsched's backup copy of the store: a whole,
	// checked store, rotated at [store] backup-interval and at clean
	// stops, that `fluxsched store recover` restores from.
	BackupFile = "fluxq.db.backup"
	SocketFile = "fluxsched.sock"
	JobsFolder = "jobs"
)

// JobDir is where a job's shell keeps its files and output.
func JobDir(jobsDir string, id fluid.ID) string {
	return filepath.Join(jobsDir, strconv.FormatUint(uint64(id), 10))
}
