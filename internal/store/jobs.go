package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The job records, schema 3: one bucket per kind of record inside job/,
// each keyed by job id, rather than schema 2's bucket per job (jobs/<id>/).
//
// Why: bbolt copies on write whole pages, and a job's own bucket was at
// least a page (its jobspec, mostly the submitter's environment, lives in
// it), so a commit that touched 100,000 jobs (a cancel of all of them)
// rewrote 100,000 pages, 420 MB. Kept by kind, the eventlogs and summaries
// of consecutive jobs share pages, and such a commit writes about what it
// changes (BenchmarkCancelLayout: 4,187 bytes a job nested, 1,036 packed
// by kind). The jobspecs, written once and never by a cancel, lie apart.
//
// ids holds the byte 0x01 for each job (present): the job exists. Every job the
// loop makes has a jobspec too, but a walk of the jobs that reads their summaries (a
// listing) would fault in every jobspec page to learn which jobs there
// are; ids is 25 bytes a job. (Not an empty value: bbolt's Get gives nil
// for one, as for no key.)
var (
	bucketJob = []byte("job")
	// bucketJobs is schema 2's bucket of job buckets, read only by the
	// migration to schema 3 (and by Salvage, from an older file).
	bucketJobs = []byte("jobs")
)

// kind is one kind of job record, a bucket of job/.
type kind int

const (
	kindIDs kind = iota
	kindJobspec
	kindEventlog
	kindR
	kindSummary
	kindSummarySum
	kindUsage
	kindWaitable
	kindResubmitted
	nKinds
)

// kindIDsName is the name of job/ids, which is no record of a job's.
const kindIDsName = "ids"

// present is every value of job/ids.
var present = []byte{1}

// kindNames are the buckets of job/, by kind: the record keys of schema
// 2's job buckets, as Tx's callers name them.
var kindNames = [nKinds]string{kindIDsName, JobJobspec, JobEventlog, JobR, JobSummary, JobSummarySum, JobUsage, JobWaitable, JobResubmitted}

// kindOf is the kind of a record key; false for a key no job has.
func kindOf(key string) (kind, bool) {
	for k := kindJobspec; k < nKinds; k++ {
		if kindNames[k] == key {
			return k, true
		}
	}
	return 0, false
}

// jobFill is the fill of job/'s buckets' pages when bbolt splits them.
// Ids only grow, so new jobs are always added at the end: at bbolt's
// default of one half every page but the last would stay half empty,
// and a commit that touches many jobs would write twice the pages.
const jobFill = 1.0

// kindBucket is job/<kind> in this transaction, looked up once.
func (t *Tx) kindBucket(k kind) *bolt.Bucket {
	if b := t.kinds[k]; b != nil {
		return b
	}
	b := t.tx.Bucket(bucketJob).Bucket([]byte(kindNames[k]))
	if t.tx.Writable() {
		b.FillPercent = jobFill
	}
	t.kinds[k] = b
	return b
}

// value is one record of a job where it lies, the summary checked
// against its sum (a summary that fails it reads as absent, which every
// reader takes as "make it again from the eventlog").
func (t *Tx) value(id []byte, k kind) []byte {
	v := t.kindBucket(k).Get(id)
	if k == kindSummary && v != nil {
		if sum := t.kindBucket(kindSummarySum).Get(id); sum != nil && !bytes.Equal(sum, SummarySum(v)) {
			return nil
		}
	}
	return v
}

func (t *Tx) has(id []byte) bool { return t.kindBucket(kindIDs).Get(id) != nil }

// put sets one record of a job, and the summary's sum with the summary.
func (t *Tx) put(id []byte, k kind, v []byte) error {
	if k == kindSummary {
		if err := t.kindBucket(kindSummarySum).Put(id, SummarySum(v)); err != nil {
			return err
		}
	}
	return t.kindBucket(k).Put(id, v)
}

func recordKind(id uint64, key string) (kind, error) {
	k, ok := kindOf(key)
	if !ok {
		return 0, fmt.Errorf("job %d: no record %q in a job", id, key)
	}
	return k, nil
}

// CreateJob makes the record for a new job with its first values.
func (t *Tx) CreateJob(id uint64, values map[string][]byte) error {
	key := u64(id)
	if t.has(key) {
		return fmt.Errorf("job %d: %w", id, ErrExists)
	}
	if err := t.kindBucket(kindIDs).Put(key, present); err != nil {
		return fmt.Errorf("job %d: %w", id, err)
	}
	for name, v := range values {
		k, err := recordKind(id, name)
		if err != nil {
			return err
		}
		if err := t.put(key, k, v); err != nil {
			return fmt.Errorf("job %d: %s: %w", id, name, err)
		}
	}
	return nil
}

// HasJob reports whether the job exists.
func (t *Tx) HasJob(id uint64) bool { return t.has(u64(id)) }

// record is the kind of key for job id, which must exist.
func (t *Tx) record(id uint64, key string) ([]byte, kind, error) {
	k, err := recordKind(id, key)
	if err != nil {
		return nil, 0, err
	}
	b := u64(id)
	if !t.has(b) {
		return nil, 0, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	return b, k, nil
}

// JobValue returns a copy of one value of a job's record; ErrNotFound when
// the job does not exist, nil when the job has no such value.
func (t *Tx) JobValue(id uint64, key string) ([]byte, error) {
	b, k, err := t.record(id, key)
	if err != nil {
		return nil, err
	}
	return clone(t.value(b, k)), nil
}

// JobValues is JobValue for several keys of each of ids: dst[i*len(keys)+j]
// is a copy of keys[j]'s value of ids[i] (nil when the job has none).
// The take-up of every job reads five values of each (state.LoadAll),
// in id order: each bucket is walked by a cursor of its own, a job a few
// past the last one reached by stepping to it rather than by a search
// from the root for every value (what a Get costs), and each job looked
// up once rather than once a value.
func (t *Tx) JobValues(ids []uint64, keys []string, dst [][]byte) error {
	var kinds [nKinds]kind
	ks := kinds[:0]
	for _, key := range keys {
		k, ok := kindOf(key)
		if !ok {
			return fmt.Errorf("no record %q in a job", key)
		}
		ks = append(ks, k)
	}
	var walks [nKinds]valueWalk
	for k := range walks {
		walks[k].b = t.kindBucket(kind(k))
	}
	var b [8]byte
	for i, id := range ids {
		binary.BigEndian.PutUint64(b[:], id)
		if walks[kindIDs].at(b[:]) == nil {
			return fmt.Errorf("job %d: %w", id, ErrNotFound)
		}
		for j, k := range ks {
			v := walks[k].at(b[:])
			if k == kindSummary && v != nil {
				if sum := walks[kindSummarySum].at(b[:]); sum != nil && !bytes.Equal(sum, SummarySum(v)) {
					v = nil // as value reads it
				}
			}
			dst[i*len(keys)+j] = clone(v)
		}
	}
	return nil
}

// valueWalk reads one bucket's values at the keys asked, by a cursor: a key
// at most walkSteps past the one before is reached by Next, any other by
// Seek. Its values are valid as a cursor's are: until the transaction's
// next write.
type valueWalk struct {
	b    *bolt.Bucket
	c    *bolt.Cursor
	k, v []byte
	last []byte // the key asked before, nil at first
}

// walkSteps is how far a valueWalk steps before it searches instead: ids of
// jobs taken up are mostly consecutive, with the inactive ones between.
const walkSteps = 4

// at is the value at key, nil for none.
func (w *valueWalk) at(key []byte) []byte {
	switch {
	case w.c == nil:
		w.c = w.b.Cursor()
		w.k, w.v = w.c.Seek(key)
	case bytes.Compare(key, w.last) <= 0:
		w.k, w.v = w.c.Seek(key)
	default:
		for n := 0; w.k != nil && bytes.Compare(w.k, key) < 0; n++ {
			if n == walkSteps {
				w.k, w.v = w.c.Seek(key)
				break
			}
			w.k, w.v = w.c.Next()
		}
	}
	w.last = append(w.last[:0], key...)
	if w.k == nil || !bytes.Equal(w.k, key) {
		return nil
	}
	return w.v
}

// InJobValue calls fn with one value of a job's record where it lies in
// the store, not copied: fn must keep no part of it, since it is valid
// only until fn returns. For a read that looks at a value of many jobs
// and keeps none of them (a listing's judgement of each pending job's
// jobspec: 100,000 copies of its environment were a tenth of a listing).
// ErrNotFound when the job does not exist; fn sees nil when the job has
// no such value.
func (t *Tx) InJobValue(id uint64, key string, fn func(v []byte)) error {
	b, k, err := t.record(id, key)
	if err != nil {
		return err
	}
	fn(t.value(b, k))
	return nil
}

// PutJobValue sets one value of an existing job's record.
func (t *Tx) PutJobValue(id uint64, key string, value []byte) error {
	b, k, err := t.record(id, key)
	if err != nil {
		return err
	}
	return t.put(b, k, value)
}

// DeleteJobValue removes one value of an existing job's record.
func (t *Tx) DeleteJobValue(id uint64, key string) error {
	b, k, err := t.record(id, key)
	if err != nil {
		return err
	}
	if k == kindSummary {
		if err := t.kindBucket(kindSummarySum).Delete(b); err != nil {
			return err
		}
	}
	return t.kindBucket(k).Delete(b)
}

// AppendJobValue appends to one value of an existing job's record (the
// eventlog: RFC 18 logs are only ever appended).
func (t *Tx) AppendJobValue(id uint64, key string, more []byte) error {
	k, err := recordKind(id, key)
	if err != nil {
		return err
	}
	b := u64(id)
	old := t.kindBucket(k).Get(b)
	// Every job has an eventlog: only a missing one needs the lookup
	// that tells a job without the record from no job.
	if old == nil && !t.has(b) {
		return fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	v := make([]byte, 0, len(old)+len(more))
	v = append(append(v, old...), more...)
	return t.put(b, k, v)
}

// ForEachJob calls fn for each job in id (submit) order, starting at the
// first id >= from, until fn returns false or an error. A damaged job/ids
// is ErrCorrupt (orphans).
func (t *Tx) ForEachJob(from uint64, fn func(id uint64, get func(key string) []byte) (bool, error)) error {
	c := t.kindBucket(kindIDs).Cursor()
	o := t.orphans(u64(from))
	var last []byte
	for k, v := c.Seek(u64(from)); k != nil; k, v = c.Next() {
		if err := checkID(last, k, v); err != nil {
			return err
		}
		last = k
		if _, err := o.at(k); err != nil {
			return err
		}
		get := func(key string) []byte {
			kd, ok := kindOf(key)
			if !ok {
				return nil
			}
			return clone(t.value(k, kd))
		}
		more, err := fn(binary.BigEndian.Uint64(k), get)
		if err != nil || !more {
			return err
		}
	}
	_, err := o.at(nil)
	return err
}

// orphans walks job/summary beside a walk of job/ids. Every job has a
// summary, and no summary outlives its job (DeleteJob), so a summary
// whose id job/ids lacks is damage to job/ids: a leaf whose element
// count was made smaller, or whose elements bbolt read past its end
// (for it trusts its file), reads as fewer jobs and no error at all,
// and a listing would leave jobs out in silence. The full check at
// fluxsched's start finds such a page; a command on the direct path
// with a large store reads without it (internal/client, fullCheckMax).
type orphans struct {
	c    *bolt.Cursor
	k, v []byte
}

func (t *Tx) orphans(from []byte) *orphans {
	c := t.kindBucket(kindSummary).Cursor()
	k, v := c.Seek(from)
	return &orphans{c: c, k: k, v: v}
}

// at returns the summary of job id where it lies (nil when it has none)
// and passes it; with id nil, it checks that none is left. A summary
// before id is one of no job: damage.
func (o *orphans) at(id []byte) ([]byte, error) {
	if o.k != nil && (id == nil || bytes.Compare(o.k, id) < 0) {
		return nil, fmt.Errorf("%w: job/summary holds a job that job/ids lacks", ErrCorrupt)
	}
	if o.k == nil || id == nil || !bytes.Equal(o.k, id) {
		return nil, nil
	}
	v := o.v
	o.k, o.v = o.c.Next()
	return v, nil
}

// ForEachJobSummary calls fn with each job's summary, in id order, where
// it lies in the store, not copied (nil when the job has none, or one
// that fails its sum). A summary stays valid until the read transaction
// ends (in a read-write one, until its next write): a listing reads all
// of them, then decodes them on every core, and keeps no byte of them
// (100,000 copies were 40 MB of a listing's garbage). It walks job/ids,
// job/summary and job/summary-crc side by side, each page once; a
// damaged job/ids is ErrCorrupt (checkID).
func (t *Tx) ForEachJobSummary(fn func(id uint64, summary []byte)) error {
	ids := t.kindBucket(kindIDs).Cursor()
	o := t.orphans(u64(0))
	crcs := t.kindBucket(kindSummarySum).Cursor()
	ck, cv := crcs.First()
	var last []byte
	for k, v := ids.First(); k != nil; k, v = ids.Next() {
		if err := checkID(last, k, v); err != nil {
			return err
		}
		last = k
		sum, err := o.at(k)
		if err != nil {
			return err
		}
		for ck != nil && bytes.Compare(ck, k) < 0 {
			ck, cv = crcs.Next()
		}
		if sum != nil && ck != nil && bytes.Equal(ck, k) && !bytes.Equal(cv, SummarySum(sum)) {
			sum = nil
		}
		fn(binary.BigEndian.Uint64(k), sum)
	}
	_, err := o.at(nil)
	return err
}

// checkID is what every key of job/ids must be, after last (nil for the
// first): a job id, in order, present. bbolt reads a damaged page's
// elements as they lie, past its end if its count says so, without a
// fault for many of them; what no store holds is damage, and reads as
// ErrCorrupt rather than as fewer jobs.
func checkID(last, k, v []byte) error {
	if len(k) != 8 || !bytes.Equal(v, present) || (last != nil && bytes.Compare(last, k) >= 0) {
		return fmt.Errorf("%w: job/ids holds a key that is not a job id in order", ErrCorrupt)
	}
	return nil
}

// DeleteJob removes a job's whole record (RFC 21 invalidate, or a purge).
func (t *Tx) DeleteJob(id uint64) error {
	b := u64(id)
	if !t.has(b) {
		return fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	for k := kind(0); k < nKinds; k++ {
		if err := t.kindBucket(k).Delete(b); err != nil {
			return fmt.Errorf("job %d: %w", id, err)
		}
	}
	return nil
}

// createJobBuckets makes job/ and its buckets, as schema 3 has them.
func createJobBuckets(tx *bolt.Tx) error {
	job, err := tx.CreateBucketIfNotExists(bucketJob)
	if err != nil {
		return err
	}
	for _, name := range kindNames {
		if _, err := job.CreateBucketIfNotExists([]byte(name)); err != nil {
			return err
		}
	}
	return nil
}

// migrateBatch is how many jobs one transaction of the migration to
// schema 3 moves: a million jobs never make one huge commit.
const migrateBatch = 10_000

// moveJobs moves up to migrateBatch jobs of schema 2's jobs/ into job/,
// each job whole in the one transaction (so no job is ever in both, or in
// neither), and reports whether jobs/ is empty now, in which case it is
// deleted. A bucket of jobs/ that is not a job's (a key of the wrong
// length), or a record no job has, fails the migration rather than be
// dropped.
func moveJobs(tx *bolt.Tx) (done bool, err error) {
	old := tx.Bucket(bucketJobs)
	if old == nil {
		return true, nil
	}
	t := &Tx{tx: tx}
	c := old.Cursor()
	var moved [][]byte
	for k, v := c.First(); k != nil && len(moved) < migrateBatch; k, v = c.Next() {
		jb := old.Bucket(k)
		if len(k) != 8 || v != nil || jb == nil {
			return false, fmt.Errorf("jobs/%q is not a job's bucket", k)
		}
		if t.has(k) {
			return false, fmt.Errorf("job %d is in both jobs/ and job/", binary.BigEndian.Uint64(k))
		}
		if err := t.kindBucket(kindIDs).Put(k, present); err != nil {
			return false, err
		}
		err := jb.ForEach(func(name, val []byte) error {
			kd, ok := kindOf(string(name))
			if !ok || val == nil {
				return fmt.Errorf("job %d: record %q is not one this fluxq knows", binary.BigEndian.Uint64(k), name)
			}
			// Put as it is: a summary keeps the sum it had (or none).
			return t.kindBucket(kd).Put(k, val)
		})
		if err != nil {
			return false, err
		}
		moved = append(moved, bytes.Clone(k))
	}
	for _, k := range moved {
		if err := old.DeleteBucket(k); err != nil {
			return false, err
		}
	}
	if k, _ := old.Cursor().First(); k != nil {
		return false, nil
	}
	return true, tx.DeleteBucket(bucketJobs)
}
