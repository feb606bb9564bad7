package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A journal that cannot be written says so once, however many times the
// write is retried, and once that it can again when a write succeeds.
func TestFullDiskReported(t *testing.T) {
	defer func(a, b time.Duration, r int64) { retryMin, retryMax, reserveSize = a, b, r }(retryMin, retryMax, reserveSize)
	retryMin, retryMax = time.Millisecond, 5*time.Millisecond
	reserveSize = 4096 // less than the entry below
	dir := smallDisk(t)
	j, err := Open(filepath.Join(dir, "b.journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close(false)
	var mu sync.Mutex
	var told []error
	j.OnWriteError(func(err error) {
		mu.Lock()
		told = append(told, err)
		mu.Unlock()
	})
	fill := fillDisk(t, dir)
	big := Entry{Op: OpLaunch, ID: 1, Data: json.RawMessage(fmt.Sprintf(`{"v":"%08000d"}`, 1))}
	done := make(chan error, 1)
	go func() { done <- j.Commit(big) }()
	time.Sleep(200 * time.Millisecond) // dozens of retries
	mu.Lock()
	if len(told) != 1 || !errors.Is(told[0], unix.ENOSPC) {
		t.Errorf("while the disk is full: told %v, want one ENOSPC", told)
	}
	mu.Unlock()
	os.Remove(fill)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := j.Commit(launch(2, "after")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 2 || told[1] != nil {
		t.Errorf("after space returned: told %v, want ENOSPC then nil", told)
	}
}
