package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/fluxq/fluxq/internal/store"
)

// How often fluxsched looks at the store's pages it holds resident, and
// how many it may hold before it lets them go (store.DropMapped). The
// pages a turn touches are few and come back at once; a listing of every
// job touches them all, and so does taking up 100,000 jobs at start,
// which reads the 430 MB store at about 600 MB a second from the page
// cache: checked every 2 s, that start peaked at 514 MB resident. A check
// is one read of /proc/self/statm, about 20 µs.
const (
	mappedCheck = 100 * time.Millisecond
	mappedMax   = 64 << 20
)

// dropMapped keeps the store's mapped pages out of fluxsched's resident
// memory until ctx ends: during and after a read of many jobs, every
// mappedCheck, they are let go. File-backed resident memory is read from
// /proc/self/statm ("shared": the binary's text too, which stays far below
// mappedMax).
func dropMapped(ctx context.Context, st *store.Store, log *slog.Logger) {
	t := time.NewTicker(mappedCheck)
	defer t.Stop()
	page := int64(os.Getpagesize())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		shared, ok := sharedPages()
		if !ok || shared*page < mappedMax {
			continue
		}
		if err := st.DropMapped(); err != nil {
			log.Debug("letting go of the store's mapped pages", "err", err)
		}
	}
}

// sharedPages is the third field of /proc/self/statm: resident pages
// backed by a file (or shared memory).
func sharedPages() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[2]), 10, 64)
	return n, err == nil
}
