package store

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// DropMapped, called while other readers read and the loop writes (which
// grows the file and remaps it), never changes what a read sees.
func TestDropMappedKeepsReads(t *testing.T) {
	s, _ := open(t)
	value := func(id uint64) []byte { return bytes.Repeat([]byte(fmt.Sprintf("job %d;", id)), 200) }
	const batches, perBatch = 20, 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	wg.Add(2)
	go func() { // drops the mapping over and over
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.DropMapped(); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // reads every job stored so far
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := s.View(func(tx *Tx) error {
				return tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
					if got := get("jobspec"); !bytes.Equal(got, value(id)) {
						return false, fmt.Errorf("job %d: read %d bytes that differ from what was written", id, len(got))
					}
					return true, nil
				})
			})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for b := range batches {
		err := s.Update(func(tx *Tx) error {
			for i := range perBatch {
				id := uint64(b*perBatch + i + 1)
				if err := tx.CreateJob(id, map[string][]byte{"jobspec": value(id)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	if err := s.View(func(tx *Tx) error {
		return tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { n++; return true, nil })
	}); err != nil {
		t.Fatal(err)
	}
	if n != batches*perBatch {
		t.Errorf("%d jobs read back, want %d", n, batches*perBatch)
	}
}
