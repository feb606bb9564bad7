package daemon

import (
	"context"
	"log/slog"
	"sync"

	"github.com/fluxq/fluxq/internal/fluid"
	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// folderRemover removes the folders of the jobs retention purged, beside
// the loop: a guest's folder may hold any number of files, and the loop
// must not wait on them. Ids wait in a list (the loop never blocks on a
// full channel); a wake-up says there are some.
type folderRemover struct {
	dir string
	log *slog.Logger

	mu   sync.Mutex
	ids  []fluid.ID
	wake chan struct{}
}

func newFolderRemover(jobsDir string, log *slog.Logger) *folderRemover {
	return &folderRemover{dir: jobsDir, log: log, wake: make(chan struct{}, 1)}
}

// add takes purged ids; the loop calls it after a committed turn.
func (r *folderRemover) add(ids []fluid.ID) {
	r.mu.Lock()
	r.ids = append(r.ids, ids...)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// sweep removes the folders whose job the store no longer has: a purge
// that a crash interrupted before its folders went. Called before the
// loop runs, and done before it does (such folders are few: those of one
// turn).
func (r *folderRemover) sweep(st *store.Store) {
	var orphans []fluid.ID
	err := st.View(func(tx *store.Tx) error {
		var err error
		orphans, err = state.OrphanFolders(tx, r.dir)
		return err
	})
	if err != nil {
		r.log.Warn("listing the folders of purged jobs", "err", err)
	}
	if len(orphans) > 0 {
		// Said, not done in silence: these are folders of jobs the
		// store no longer has.
		r.log.Info("removing the folders of purged jobs", "jobs", len(orphans), "first", orphans[0].String())
		if err := state.RemoveJobFolders(r.dir, orphans); err != nil {
			r.log.Warn("removing purged job folders", "jobs", len(orphans), "err", err)
		}
	}
}

// run removes folders until ctx ends; those still listed then are found
// at the next start (sweep). A folder that cannot be removed is
// logged once per batch, and left.
func (r *folderRemover) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		ids := r.ids
		r.ids = nil
		r.mu.Unlock()
		if err := state.RemoveJobFolders(r.dir, ids); err != nil {
			r.log.Warn("removing purged job folders", "jobs", len(ids), "err", err)
		}
	}
}
