package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fluxq/fluxq/internal/state"
	"github.com/fluxq/fluxq/internal/store"
)

// backups keeps the store's backup copy (state.BackupFile) while the
// instance runs: one shortly after start (the store has just passed
// the full check), one every interval, and one at a clean stop. Each is
// bbolt's hot backup in a read transaction (store.Backup), beside the
// loop's turns, never in one: the loop does not wait for it.
type backups struct {
	st       *store.Store
	path     string
	interval time.Duration // 0: at start and at clean stops only
	log      *slog.Logger
	wg       sync.WaitGroup
	mu       sync.Mutex // one backup at a time
	lastErr  string     // the last failure logged, so a failing disk is told once
}

func newBackups(st *store.Store, dir string, interval time.Duration, log *slog.Logger) *backups {
	return &backups{st: st, path: filepath.Join(dir, state.BackupFile), interval: interval, log: log}
}

// start runs the periodic backups until ctx ends; wait waits for them.
func (b *backups) start(ctx context.Context) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		// The first a little after start: not in the way of the loop's
		// first turns, which take the jobs up.
		next := time.NewTimer(2 * time.Second)
		defer next.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-next.C:
			}
			b.once("interval")
			if b.interval == 0 {
				return
			}
			next.Reset(b.interval)
		}
	}()
}

func (b *backups) wait() { b.wg.Wait() }

// once writes one backup, and logs it: each success at debug level
// (the first and the clean stop's at info), a failure once until the
// next success.
func (b *backups) once(why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := time.Now()
	n, err := b.st.Backup(b.path)
	if err != nil {
		if msg := err.Error(); msg != b.lastErr {
			b.log.Error("store backup failed", "backup", b.path, "err", err)
			b.lastErr = msg
		}
		return
	}
	level := slog.LevelDebug
	if b.lastErr != "" || why == "stop" {
		level = slog.LevelInfo
	}
	b.lastErr = ""
	b.log.Log(context.Background(), level, "store backup", "backup", b.path, "bytes", n, "took", time.Since(start).Round(time.Millisecond), "why", why)
}
