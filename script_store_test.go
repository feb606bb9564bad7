package fluxq_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/fluxq/fluxq/internal/store"
)

// storeDamage is the testscripts' `storedamage` command: it damages a
// store file as a failing disk would, at places it finds from the file's
// own meta and tree, so a script needs no offsets (store_damaged.txtar):
//
//	storedamage FILE truncate 0|8k|12k|64k|half|page
//	storedamage FILE flip SPOT
//
// truncate cuts the file: to a size, to half its pages in use, or to one
// page short of them. flip changes bytes of a page in use (bbolt keeps
// no checksum of its pages): SPOT is root (the root bucket's page id),
// eventlog-branch (the first child of job/eventlog's branch page),
// eventlog-leaf-type, eventlog-leaf-count, eventlog-leaf-key (the first
// key of the last leaf made smaller than its branch key),
// jobspec-page-id (the first leaf of job/jobspec; it prints "N jobs",
// the jobspecs the page holds),
// summary-page-elem (an element of job/summary's last leaf pointing past
// the page), resources (the resources bucket's page), job-summary (the
// userid in a job's stored summary, root's 0 made 7). The store must be
// free.
func storeDamage() int {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: storedamage FILE truncate SIZE | flip SPOT")
		return 2
	}
	if err := damage(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "storedamage:", err)
		return 1
	}
	return 0
}

func damage(path, op, arg string) error {
	rep, err := store.CheckFile(path, false)
	if err != nil {
		return err
	}
	psz, used := int64(rep.PageSize), int64(rep.Pages)*int64(rep.PageSize)
	if op == "truncate" {
		sizes := map[string]int64{"0": 0, "8k": 8 << 10, "12k": 12 << 10, "64k": 64 << 10, "half": used / 2 / psz * psz, "page": used - psz}
		n, ok := sizes[arg]
		if !ok {
			return fmt.Errorf("unknown size %q", arg)
		}
		if n >= used && n != 0 {
			return fmt.Errorf("the store's %d bytes in use are not more than %d: make it bigger", used, n)
		}
		return os.Truncate(path, n)
	}
	if op != "flip" {
		return fmt.Errorf("unknown operation %q", op)
	}
	pages, err := store.Pages(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// count is the number of elements of the page at offset at.
	count := func(at int64) int {
		b := make([]byte, 2)
		if _, err := f.ReadAt(b, at+10); err != nil {
			return -1
		}
		return int(binary.NativeEndian.Uint16(b))
	}
	// find is the offset of the first (or last) leaf or branch page of
	// bucket.
	find := func(leaf bool, bucket string, last bool) (int64, error) {
		var found int64 = -1
		for _, p := range pages {
			if p.Leaf == leaf && p.Bucket == bucket {
				found = int64(p.ID)
				if !last {
					break
				}
			}
		}
		if found < 0 {
			return 0, fmt.Errorf("no %v page of %s in %s", map[bool]string{true: "leaf", false: "branch"}[leaf], bucket, path)
		}
		return found * psz, nil
	}
	put := func(at int64, b []byte) error { _, err := f.WriteAt(b, at); return err }
	u64 := func(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }
	u16 := func(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }
	var at int64
	switch arg {
	case "root":
		if at, err = find(true, "the root bucket", false); err == nil {
			err = put(at, u64(uint64(at/psz)+1))
		}
	case "eventlog-branch":
		if at, err = find(false, "bucket job/eventlog", false); err == nil {
			err = put(at+16+8, u64(uint64(rep.Pages)+1000))
		}
	case "eventlog-leaf-type":
		if at, err = find(true, "bucket job/eventlog", false); err == nil {
			err = put(at+8, u16(0x10))
		}
	case "eventlog-leaf-count":
		if at, err = find(true, "bucket job/eventlog", false); err == nil {
			err = put(at+10, u16(0x7fff))
		}
	case "eventlog-leaf-key":
		// The first key of the last leaf: zeroed, below the key its
		// branch leads to it by.
		if at, err = find(true, "bucket job/eventlog", true); err == nil {
			b := make([]byte, 16)
			if _, err = f.ReadAt(b, at+16); err == nil {
				pos := int64(binary.NativeEndian.Uint32(b[4:]))
				ksize := binary.NativeEndian.Uint32(b[8:])
				err = put(at+16+pos, make([]byte, ksize))
			}
		}
	case "jobspec-page-id":
		if at, err = find(true, "bucket job/jobspec", false); err == nil {
			// The jobs it holds, which the script finds lost.
			fmt.Printf("%d jobs\n", count(at))
			err = put(at, u64(uint64(at/psz)+7))
		}
	case "summary-page-elem":
		if at, err = find(true, "bucket job/summary", true); err == nil {
			err = put(at+16+4, binary.NativeEndian.AppendUint32(nil, uint32(psz*4)))
		}
	case "job-summary":
		// A digit of the first job's userid in its stored summary: the
		// page reads, the JSON decodes, and the job is someone else's.
		if at, err = find(true, "bucket job/summary", false); err == nil {
			b := make([]byte, psz)
			if _, err = f.ReadAt(b, at); err == nil {
				i := bytes.Index(b, []byte(`"userid":0,"queue"`))
				if i < 0 {
					return fmt.Errorf("no summary of user 0 in page %d", at/psz)
				}
				err = put(at+int64(i)+len64(`"userid":`), []byte("7"))
			}
		}
	case "resources":
		if at, err = find(true, "bucket resources", false); err == nil {
			err = put(at, u64(0))
		}
	default:
		return fmt.Errorf("unknown spot %q", arg)
	}
	if err != nil {
		return err
	}
	return f.Sync()
}

func len64(s string) int64 { return int64(len(s)) }
