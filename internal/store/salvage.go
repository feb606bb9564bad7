package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// Node is one bucket as Salvage read it: its keys and values, and the
// buckets inside it, each in key order.
type Node struct {
	Keys, Values [][]byte
	Names        [][]byte         // the sub-buckets' names, in key order
	Buckets      map[string]*Node // by name
	// Damaged says the bucket's pages could not all be read: what it
	// holds is what could be; Losses says what was not.
	Damaged bool
}

// Bucket returns the sub-bucket name, or nil.
func (n *Node) Bucket(name []byte) *Node {
	if n == nil {
		return nil
	}
	return n.Buckets[string(name)]
}

// Get returns the value of key, or nil.
func (n *Node) Get(key []byte) []byte {
	if n == nil {
		return nil
	}
	for i, k := range n.Keys {
		if bytes.Equal(k, key) {
			return n.Values[i]
		}
	}
	return nil
}

func (n *Node) sub(name []byte) *Node {
	if n.Buckets == nil {
		n.Buckets = map[string]*Node{}
	}
	c := n.Buckets[string(name)]
	if c == nil {
		c = &Node{}
		n.Buckets[string(name)] = c
		n.Names = append(n.Names, bytes.Clone(name))
	}
	return c
}

// Loss is a part of the tree Salvage could not read.
type Loss struct {
	Path  [][]byte // the bucket it belongs to
	Where string   // the bucket, as a report names it
	What  string   // what was wrong
}

// JobID is the job a loss belongs to (inside jobs/<id>/), else 0: a loss
// of jobs/ itself loses jobs whose ids are not known.
func (l Loss) JobID() uint64 {
	if len(l.Path) >= 2 && bytes.Equal(l.Path[0], bucketJobs) && len(l.Path[1]) == 8 {
		return binary.BigEndian.Uint64(l.Path[1])
	}
	return 0
}

// Salvaged is what could be read from a store file, damaged or not.
type Salvaged struct {
	Report *Report
	Root   *Node
	Losses []Loss
}

// Jobs is the jobs bucket as read, or nil.
func (s *Salvaged) Jobs() *Node { return s.Root.Bucket(bucketJobs) }

// Salvage reads every key and value of the store file at path that can
// be read, by the same walk as CheckFile's, skipping the pages that
// cannot (each a Loss). It never writes the file. A file whose metas are
// both damaged gives nothing (an empty Root).
func Salvage(path string) (*Salvaged, error) {
	f, rep, m, err := openMeta(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &Salvaged{Report: rep, Root: &Node{}}
	if m.pgid == 0 {
		return out, nil
	}
	// A short file: read the pages it still has.
	data, unmap, err := mapFile(f, min(rep.Size, int64(m.pgid)*int64(m.pageSize)))
	if err != nil {
		return nil, err
	}
	defer unmap()
	w := newWalker(data, m, rep)
	find := func(path [][]byte) *Node {
		n := out.Root
		for _, p := range path {
			n = n.sub(p)
		}
		return n
	}
	w.visit = func(path [][]byte, k, v []byte, bucket bool) {
		n := find(path)
		if bucket {
			n.sub(k)
			return
		}
		n.Keys = append(n.Keys, bytes.Clone(k))
		n.Values = append(n.Values, bytes.Clone(v))
	}
	w.lost = func(path [][]byte, what string) {
		find(path).Damaged = true
		p := make([][]byte, len(path))
		for i := range path {
			p[i] = bytes.Clone(path[i])
		}
		out.Losses = append(out.Losses, Loss{Path: p, Where: where(path), What: what})
	}
	err = func() (err error) {
		defer guard(path, &err)()
		w.freelist()
		w.walk(nil)
		return nil
	}()
	return out, err
}

// Write makes a new store at path from a salvaged tree (the file must not
// exist), its buckets and values as they are, a batch of jobs to a
// transaction, and syncs it. Recovery writes the tree it has put
// together this way, then checks the result like any store.
func Write(path string, root *Node) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	// Every bucket but the jobs in one transaction; the jobs 10,000 to a
	// transaction, so a million of them never make one huge commit.
	err = db.Update(func(tx *bolt.Tx) error {
		for i, name := range root.Names {
			b, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			if bytes.Equal(name, bucketJobs) {
				continue
			}
			if err := fill(b, root.Buckets[string(root.Names[i])]); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	jobs := root.Bucket(bucketJobs)
	if jobs == nil {
		return nil
	}
	for at := 0; at < len(jobs.Names); at += 10_000 {
		err := db.Update(func(tx *bolt.Tx) error {
			jb := tx.Bucket(bucketJobs)
			for _, name := range jobs.Names[at:min(at+10_000, len(jobs.Names))] {
				b, err := jb.CreateBucket(name)
				if err != nil {
					return err
				}
				if err := fill(b, jobs.Buckets[string(name)]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func fill(b *bolt.Bucket, n *Node) error {
	if n == nil {
		return nil
	}
	for i, k := range n.Keys {
		if err := b.Put(k, n.Values[i]); err != nil {
			return err
		}
	}
	for _, name := range n.Names {
		c, err := b.CreateBucket(name)
		if err != nil {
			return err
		}
		if err := fill(c, n.Buckets[string(name)]); err != nil {
			return err
		}
	}
	return nil
}

// Backup writes a consistent copy of the store to path with bbolt's hot
// backup (Tx.WriteTo in a read transaction, which runs beside the
// loop's writes): to a temporary file beside path, synced, checked as
// fluxsched checks its store at start, and only then renamed over path,
// so that the backup in place is always a whole, sound store. It returns
// the copy's size.
func (s *Store) Backup(path string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var n int64
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(tmp)
		return err
	})
	if err == nil {
		err = tmp.Sync()
	}
	if err != nil {
		return 0, &WriteError{Path: path, Err: err}
	}
	rep, err := checkOpen(tmp, n)
	if err != nil {
		return 0, err
	}
	if !rep.OK() {
		// The store itself went bad while it was open: keep the backup
		// there is, the good one, rather than replace it.
		return 0, fmt.Errorf("the copy of the store is damaged (%s): the backup %s was kept", rep.Problems[0], path)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	return n, syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// SyncDir makes a rename in dir durable (recovery's renames).
func SyncDir(dir string) error { return syncDir(dir) }
