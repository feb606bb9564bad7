package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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
	// Lo and Hi bound the keys the lost part could hold, from Lo up to
	// Hi (nil: unbounded): which jobs lost a record of job/<kind>.
	Lo, Hi []byte
}

// JobID is the job a loss belongs to (inside schema 2's jobs/<id>/), else
// 0: a loss of jobs/ itself loses jobs whose ids are not known, and a loss
// in schema 3's job/ is of a kind of record, for the jobs it Covers.
func (l Loss) JobID() uint64 {
	if len(l.Path) >= 2 && bytes.Equal(l.Path[0], bucketJobs) && len(l.Path[1]) == 8 {
		return binary.BigEndian.Uint64(l.Path[1])
	}
	return 0
}

// Record is the kind of job record a loss inside job/ is of ("eventlog",
// "ids", ...; "" for a loss of job/ itself or elsewhere).
func (l Loss) Record() string {
	if len(l.Path) == 2 && bytes.Equal(l.Path[0], bucketJob) {
		return string(l.Path[1])
	}
	return ""
}

// Covers reports whether job id may have lost a record in the loss: a
// loss in job/ (any kind, or job/ itself) whose key bounds hold the id.
func (l Loss) Covers(id uint64) bool {
	if len(l.Path) == 0 || !bytes.Equal(l.Path[0], bucketJob) {
		return false
	}
	if len(l.Path) == 1 {
		return true
	}
	k := u64(id)
	return (l.Lo == nil || bytes.Compare(k, l.Lo) >= 0) && (l.Hi == nil || bytes.Compare(k, l.Hi) < 0)
}

// Salvaged is what could be read from a store file, damaged or not.
type Salvaged struct {
	Report *Report
	Root   *Node
	Losses []Loss
	jobs   *Node
}

// Jobs is the job records as read, one bucket a job named by its id
// (uint64 BE) with its records as keys, in id order, whatever the
// layout of the file (schema 3's job/<kind>/<id>, schema 2's jobs/<id>/,
// or both, in a file whose move between them stopped half way); nil when
// the file has neither. Damaged when part of either could not be read.
func (s *Salvaged) Jobs() *Node { return s.jobs }

// IsJobRecord reports whether key names a record a job has (JobJobspec,
// JobEventlog, ...): a store can hold no other (Write).
func IsJobRecord(key string) bool {
	_, ok := kindOf(key)
	return ok
}

// assemble makes the jobs' view (Jobs) from the tree as read.
func (s *Salvaged) assemble() {
	nested, flat := s.Root.Bucket(bucketJobs), s.Root.Bucket(bucketJob)
	if nested == nil && flat == nil {
		return
	}
	jobs := &Node{Buckets: map[string]*Node{}}
	if nested != nil {
		jobs.Damaged = nested.Damaged
		for _, name := range nested.Names {
			jobs.Names = append(jobs.Names, name)
			jobs.Buckets[string(name)] = nested.Buckets[string(name)]
		}
	}
	if flat != nil {
		jobs.Damaged = jobs.Damaged || flat.Damaged
		for _, kind := range flat.Names {
			n := flat.Buckets[string(kind)]
			jobs.Damaged = jobs.Damaged || n.Damaged || len(n.Names) > 0
			for i, id := range n.Keys {
				j := jobs.Buckets[string(id)]
				if j == nil {
					j = &Node{}
					jobs.Buckets[string(id)] = j
					jobs.Names = append(jobs.Names, id)
				}
				if string(kind) != kindIDsName {
					j.Keys = append(j.Keys, kind)
					j.Values = append(j.Values, n.Values[i])
				}
			}
		}
	}
	slices.SortFunc(jobs.Names, bytes.Compare)
	s.jobs = jobs
}

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
	w.lost = func(path [][]byte, lo, hi []byte, what string) {
		find(path).Damaged = true
		p := make([][]byte, len(path))
		for i := range path {
			p[i] = bytes.Clone(path[i])
		}
		out.Losses = append(out.Losses, Loss{Path: p, Where: where(path), What: what, Lo: bytes.Clone(lo), Hi: bytes.Clone(hi)})
	}
	err = func() (err error) {
		defer guard(path, &err)()
		w.freelist()
		w.walk(nil)
		return nil
	}()
	out.assemble()
	return out, err
}

// Write makes a new store at path from a salvaged tree (the file must not
// exist), its buckets and values as they are, but for the jobs: root's
// bucket "jobs" holds them as Salvaged.Jobs gives them, a bucket a job,
// and they are written as this schema lays them out, 10,000 jobs to a
// transaction, so a million of them never make one huge commit; meta
// says this schema. It syncs the file. Recovery writes the tree it has
// put together this way, then checks the result like any store.
func Write(path string, root *Node) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for i, name := range root.Names {
			if bytes.Equal(name, bucketJobs) || bytes.Equal(name, bucketJob) {
				continue
			}
			b, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			if err := fill(b, root.Buckets[string(root.Names[i])]); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if bytes.Equal(name, bucketMeta) {
				if err := b.Put(keySchema, u64(SchemaVersion)); err != nil {
					return err
				}
				if err := b.Delete(keyMigrating); err != nil {
					return err
				}
			}
		}
		return createJobBuckets(tx)
	})
	if err != nil {
		return err
	}
	jobs := root.Bucket(bucketJobs)
	if jobs == nil {
		return nil
	}
	for at := 0; at < len(jobs.Names); at += migrateBatch {
		err := db.Update(func(tx *bolt.Tx) error {
			t := &Tx{tx: tx}
			for _, name := range jobs.Names[at:min(at+migrateBatch, len(jobs.Names))] {
				if len(name) != 8 {
					return fmt.Errorf("jobs/%q is not a job id", name)
				}
				if err := t.kindBucket(kindIDs).Put(name, present); err != nil {
					return err
				}
				n := jobs.Buckets[string(name)]
				for i, k := range n.Keys {
					kd, ok := kindOf(string(k))
					if !ok {
						return fmt.Errorf("job %d: no record %q in a job", binary.BigEndian.Uint64(name), k)
					}
					// As it is: a summary comes with its sum, or none.
					if err := t.kindBucket(kd).Put(name, n.Values[i]); err != nil {
						return err
					}
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
