package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// filled is a store of n jobs, closed, with values of a real job's sizes
// (some inline in the jobs bucket, a few larger than a page's quarter so
// that they get pages of their own).
func filled(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fluxq.db")
	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		for i := 1; i <= n; i++ {
			size := 200
			if i%10 == 0 {
				size = 3000
			}
			err := tx.CreateJob(uint64(i)<<20, map[string][]byte{
				JobJobspec:  bytes.Repeat([]byte("j"), size),
				JobEventlog: []byte(`{"timestamp":1,"name":"submit"}` + "\n"),
				JobSummary:  []byte(`{"id":1}`),
			})
			if err != nil {
				return err
			}
		}
		return tx.SetLastJobID(uint64(n) << 20)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckSound(t *testing.T) {
	path := filled(t, 500)
	rep, err := CheckFile(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Notes) > 0 {
		t.Fatalf("a sound store reports %q, notes %q", rep.Problems, rep.Notes)
	}
	if rep.Jobs != 500 {
		t.Errorf("check counted %d jobs, want 500", rep.Jobs)
	}
	s, err := Open(path, Options{FullCheck: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestDamagedStoreRefused: every kind of damage is refused at Open with
// one line naming the file, never a fault or a panic, and an empty file
// is never made into a new store.
func TestDamagedStoreRefused(t *testing.T) {
	base := filled(t, 500)
	orig, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := Pages(base)
	if err != nil {
		t.Fatal(err)
	}
	var leaf, branch uint64
	for _, p := range pages {
		if p.Leaf && leaf == 0 && p.Bucket == "bucket job/ids" {
			leaf = p.ID
		}
		if !p.Leaf && branch == 0 && p.Bucket == "bucket job/ids" {
			branch = p.ID
		}
	}
	if leaf == 0 || branch == 0 {
		t.Fatalf("no leaf or branch page of jobs in %v", pages)
	}
	psz := os.Getpagesize()
	rep, err := CheckFile(base, false)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows its file ahead of its pages: only pages below the high
	// water mark are in use.
	used := int(rep.Pages) * psz
	put64 := func(b []byte, at int, v uint64) { binary.NativeEndian.PutUint64(b[at:], v) }
	for _, tc := range []struct {
		name string
		fn   func([]byte) []byte
		want string
		full bool // found by the full check only
	}{
		{"empty", func([]byte) []byte { return nil }, "the file is empty", false},
		{"8KiB", func(b []byte) []byte { return b[:8192] }, "its meta says", false},
		{"12KiB", func(b []byte) []byte { return b[:12288] }, "its meta says", false},
		{"half", func(b []byte) []byte { return b[:used/2] }, "its meta says", false},
		{"a page short", func(b []byte) []byte { return b[:used-psz] }, "its meta says", false},
		{"100 bytes", func(b []byte) []byte { return b[:100] }, "the file is 100 bytes", false},
		{"40 bytes", func(b []byte) []byte { return b[:40] }, "too short for a store", false},
		{"both metas", func(b []byte) []byte { b[16] ^= 0xff; b[psz+16] ^= 0xff; return b }, "neither meta page is valid", false},
		{"leaf id", func(b []byte) []byte { put64(b, int(leaf)*psz, leaf+1); return b }, fmt.Sprintf("page %d calls itself page %d", leaf, leaf+1), true},
		{"leaf type", func(b []byte) []byte { b[int(leaf)*psz+8] = 0x10; return b }, "not a branch or leaf page", true},
		{"leaf count", func(b []byte) []byte { b[int(leaf)*psz+10] = 0xff; b[int(leaf)*psz+11] = 0x7f; return b }, "more than it holds", true},
		{"leaf element", func(b []byte) []byte { b[int(leaf)*psz+16+4+3] = 0x7f; return b }, "points outside the page", true},
		{"branch child", func(b []byte) []byte { put64(b, int(branch)*psz+16+8, 1<<40); return b }, "outside the file's", true},
		{"branch key", func(b []byte) []byte { b[int(branch)*psz+16+4] = 0; b[int(branch)*psz+16+5] = 0; return b }, "points outside the page", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fluxq.db")
			if err := os.WriteFile(path, tc.fn(bytes.Clone(orig)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, Options{FullCheck: true, Timeout: time.Second})
			var de *DamagedError
			if !errors.As(err, &de) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want a damaged store", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, path) || strings.Contains(msg, "\n") || !strings.Contains(msg, "fluxsched store recover") {
				t.Errorf("Open says %q, want one line naming %s, %q and what to do", msg, path, tc.want)
			}
			if fi, _ := os.Stat(path); fi.Size() != int64(len(tc.fn(bytes.Clone(orig)))) {
				t.Errorf("the refused file changed: %d bytes", fi.Size())
			}
			if tc.full {
				// The quick check lets it pass; reading it must still
				// not fault or panic.
				s, err := Open(path, Options{Timeout: time.Second})
				if err != nil {
					return
				}
				defer s.Close()
				err = s.View(func(tx *Tx) error {
					return tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { return true, nil })
				})
				// bbolt meets most of this damage as it reads: its panic or
				// fault is then the damaged-store error (guard), never a
				// crash. A branch key out of place it reads in silence:
				// what the full check is for.
				if !errors.Is(err, ErrCorrupt) && !(err == nil && tc.name == "branch key") {
					t.Errorf("reading the damaged store: %v, want a damaged store", err)
				}
			}
		})
	}
}

// TestOneBadMetaIsANote: bbolt falls back on the other meta page (the
// commit before), so the store opens, and the check says so.
func TestOneBadMetaIsANote(t *testing.T) {
	path := filled(t, 10)
	b, _ := os.ReadFile(path)
	b[16] ^= 0xff
	os.WriteFile(path, b, 0o600)
	var notes []string
	s, err := Open(path, Options{FullCheck: true, Timeout: time.Second, Checked: func(r *Report) { notes = r.Notes }})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(notes) != 1 || !strings.Contains(notes[0], "meta page 0 is not valid") {
		t.Errorf("notes = %q", notes)
	}
}

func TestMissingFileIsANewStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	s, err := Open(path, Options{FullCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if rep, err := CheckFile(path, true); err != nil || !rep.OK() {
		t.Fatalf("a new store: %v %v", rep, err)
	}
}

// FuzzCheck: no bytes make the check panic, fault or loop.
func FuzzCheck(f *testing.F) {
	// Seeds of the pages in use only (bbolt grows its file ahead of
	// them): small inputs keep the fuzzer fast.
	path := filled(f, 12)
	b, _ := os.ReadFile(path)
	rep, _ := CheckMeta(bytes.NewReader(b), int64(len(b)))
	b = b[:int(rep.Pages)*rep.PageSize]
	f.Add(b)
	f.Add(b[:8192])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		rep, m := CheckMeta(r, int64(len(data)))
		if !rep.OK() {
			return
		}
		w := newWalker(data, m, rep)
		w.freelist()
		w.walk(nil)
		w.unreached()
	})
}
