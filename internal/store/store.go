// Package store is fluxq's state on disk: one bbolt file that the loop holds
// while it runs and the CLIs open directly while it does not.
//
// The bucket tree, schema version 3 (SchemaVersion). Keys written uint64 BE
// are big-endian, so a cursor walks them in order. docs/architecture.md
// ("The bucket tree") holds a copy of it, and TestBucketTreeDrawn holds
// both to the buckets and keys this package writes:
//
//	meta/
//	    schema              uint64 BE   schema version of this file
//	    epoch               uint64 BE   FLUID epoch, ms since the Unix epoch, fixed at creation
//	    last-jobid          uint64 BE   the last job id issued; id generators restart past it
//	    queue-config        JSON        RFC 33 [policy] and [queues] as the loop last loaded them
//	                                    (absent: one anonymous queue)
//	    last-alloc          uint64 BE   the last reservation number issued (schema 2)
//	    reservation-config  JSON        the [reservation] table as the loop last loaded it
//	    boot-id             string      the machine's boot under which the loop last took up
//	                                    the jobs (absent: never; see "Why unsynced launches")
//	    migrating           0x01        the jobs of schema 2's jobs/<id>/ are being moved
//	                                    to job/ (schema 3): absent once all are
//	job/                                (schema 3) the job records: a bucket per kind
//	                                    of record, each keyed by job id; FLUIDs lead
//	                                    with time, so a cursor walks jobs in submit
//	                                    order (jobs.go: why not a bucket per job)
//	    ids/<id uint64 BE>              0x01: the job exists
//	    jobspec/<id uint64 BE>          the jobspec, canonical JSON
//	    eventlog/<id uint64 BE>         RFC 18 lines, only ever appended (event
//	                                    names: internal/job/events.go)
//	    R/<id uint64 BE>                R v1 JSON, once allocated
//	    summary/<id uint64 BE>          the listing record, kept with the eventlog
//	                                    it is derived from, in the same transaction
//	                                    (api.JobSummary: state and result by name,
//	                                    returncode Flux's, as flux jobs prints it;
//	                                    listings recompute it from waitstatus)
//	    summary-crc/<id uint64 BE>      uint32 BE CRC-32C of summary, written with it; a
//	                                    summary that fails it reads as absent, and is
//	                                    made again from the eventlog (no migration:
//	                                    a summary without one is read as it is)
//	    usage/<id uint64 BE>            what its processes consumed (CPU, peak memory),
//	                                    JSON, from its finish
//	    waitable/<id uint64 BE>         0x01 from submission until a wait reports the job
//	                                    (Flux's waitable zombie; no migration: a job stored
//	                                    before it has none, and no wait reports it again)
//	    resubmitted/<id uint64 BE>      the jobs fluxq resubmit made from it, JSON array of
//	                                    job ids, in order (no migration: absent is none)
//	queues/
//	    <name>                          queue state JSON (enabled, started, reasons);
//	                                    the anonymous queue's key is the single byte 0x00
//	resources/
//	    inventory                       R v1 JSON of the whole instance
//	    drain/<rank uint64 BE>          drain record JSON
//	    spares/<hostname>               a spare node (schema 2): rank, cores, gpus,
//	                                    whether it is in the instance now
//	reservations/                       (schema 2)
//	    <N uint64 BE>                   reservation rN as JSON, live or ended
//	tool-events/                        (schema 2) timeout warnings directed to tools
//	    <user>/<seq uint64 BE>          one warning JSON
//
// Values returned by bbolt are valid only inside their transaction, so every
// getter here returns a copy.
package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout this code reads and writes.
const SchemaVersion = 3

// Errors callers map to exit codes and messages.
var (
	// ErrBusy: another process holds the store (docs/cli.md: exit 69).
	ErrBusy = errors.New("store is busy")
	// ErrCorrupt: the file is not a readable fluxq store.
	ErrCorrupt = errors.New("store is corrupt")
	// ErrNotFound: no such record.
	ErrNotFound = errors.New("not found")
	// ErrExists: a record that must be new already exists.
	ErrExists = errors.New("already exists")
)

var (
	bucketMeta      = []byte("meta")
	bucketQueues    = []byte("queues")
	bucketResources = []byte("resources")
	bucketDrain     = []byte("drain")
	bucketSpares    = []byte("spares")
	bucketRes       = []byte("reservations")
	bucketToolEv    = []byte("tool-events")

	keySchema    = []byte("schema")
	keyEpoch     = []byte("epoch")
	keyLastJobID = []byte("last-jobid")
	keyInventory = []byte("inventory")
	keyQueues    = []byte("queue-config")
	keyAnonymous = []byte{0}
	keyLastAlloc = []byte("last-alloc")
	keyResConfig = []byte("reservation-config")
	keyBootID    = []byte("boot-id")
	// keyMigrating is set from the first transaction of the move to
	// schema 3 until the last: meta/schema says 3 all along (so an older
	// fluxq refuses the half-moved file), and an open read-write resumes
	// the move where it stopped.
	keyMigrating = []byte("migrating")
)

// Job record keys.
const (
	JobJobspec  = "jobspec"
	JobEventlog = "eventlog"
	JobR        = "R"
	JobSummary  = "summary"
	// JobUsage is what the job's processes consumed (execproto.Usage as
	// JSON), from its finish; absent until then, or when not measured.
	JobUsage = "usage"
	// JobSummarySum is the CRC-32C of the summary, written with it (a new
	// key, no migration: a summary without one is read as it is). bbolt
	// keeps no checksum of its values, and a flipped byte in a summary
	// (its userid, its state) would quietly hide a job from a listing: a
	// summary that fails its sum reads as absent, which every reader
	// already takes as "make it again from the eventlog".
	JobSummarySum = "summary-crc"
	// JobWaitable marks a job its submitter has not waited for yet:
	// written with the job, deleted when a wait reports it (Flux's
	// waitable flag and zombies). A job stored before it was added has
	// none, and is not waited for again.
	JobWaitable = "waitable"
	// JobResubmitted lists the jobs fluxq resubmit made from this one
	// (JSON array of ids): the link back from the old job, which may be
	// inactive, whose eventlog takes no more events (RFC 21).
	JobResubmitted = "resubmitted"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SummarySum is the stored sum of a summary (JobSummarySum).
func SummarySum(summary []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, crc32.Checksum(summary, castagnoli))
}

// Options tune Open.
type Options struct {
	// Timeout bounds the wait for another process's lock; zero waits
	// forever, as bbolt does.
	Timeout time.Duration
	// ReadOnly opens with a shared lock (still excluded by a writer).
	ReadOnly bool
	// Now gives the creation time of a new store; nil means time.Now.
	Now func() time.Time
	// FailCommit, for tests, is asked before each commit of Update; an
	// error fails that commit as a full filesystem would.
	FailCommit func() error
	// FullCheck reads every page of the tree before the store is opened
	// (CheckFile), not only its meta: what fluxsched does once at start,
	// so that a damaged page is found before bbolt trips on it.
	FullCheck bool
	// Checked, when set, is given the report of the check made before
	// the open, sound or not (fluxsched logs its notes).
	Checked func(*Report)
	// Scratch is a store nothing needs after a crash (fluxsched sim's,
	// removed when the replay ends): its commits are not synced to disk.
	Scratch bool
}

// initialMmap is the address space mapped for the file when it opens. A
// transaction that outgrows the map makes bbolt map the file anew, and
// first copy every page the transaction has touched out of the old map:
// a submission of 10,000 jobs in one transaction did that a dozen times,
// and spent a third of its time copying. Only address space is reserved
// (pages are read in as used), and the file itself still grows as needed.
const initialMmap = 1 << 30

// Store is an open state file.
type Store struct {
	db         *bolt.DB
	failCommit func() error // Options.FailCommit
}

// migration i brings a store from schema version i to i+1. Version 0 is an
// empty file, so migrations[0] creates the layout above.
var migrations = []func(tx *bolt.Tx, now time.Time) error{
	func(tx *bolt.Tx, now time.Time) error {
		for _, name := range [][]byte{bucketMeta, bucketJobs, bucketQueues, bucketResources} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		res := tx.Bucket(bucketResources)
		if _, err := res.CreateBucketIfNotExists(bucketDrain); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if meta.Get(keyEpoch) == nil {
			return meta.Put(keyEpoch, u64(uint64(now.UnixMilli())))
		}
		return nil
	},
	// 1 -> 2: node reservations.
	func(tx *bolt.Tx, now time.Time) error {
		if _, err := tx.Bucket(bucketResources).CreateBucketIfNotExists(bucketSpares); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketRes, bucketToolEv} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	},
	// 2 -> 3: the job records by kind (jobs.go). This makes job/ and
	// marks the move begun; the jobs themselves move in transactions of
	// their own (moveJobs), after this one.
	func(tx *bolt.Tx, now time.Time) error {
		if err := createJobBuckets(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyMigrating, []byte{1})
	},
}

// Open opens or creates the store at path (mode 0600: the instance is
// private to its owner) and brings its schema up to date.
//
// Only a missing file is a new store. An existing file is checked first
// (Precheck): an empty, short or damaged one is refused with a
// *DamagedError, never given to bbolt, which would fault on it, panic, or
// (an empty file) silently make a new store in its place.
func Open(path string, opts Options) (*Store, error) {
	if err := Precheck(path, opts); err != nil {
		return nil, err
	}
	db, err := openCurrent(path, opts)
	if err != nil {
		return nil, openError(path, err)
	}
	s := &Store{db: db, failCommit: opts.FailCommit}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if err := s.migrate(now(), opts.ReadOnly); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// openCurrent opens the file at path with bbolt and takes its lock, and
// makes sure it is still the file at path once the lock is held: a
// compaction (CompactIfSparse) renames a new file over the old one while
// it holds the old one's lock, and a process that opened the old file
// meanwhile would otherwise write where no one will ever read.
func openCurrent(path string, opts Options) (*bolt.DB, error) {
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(path)
		db, err := openBolt(path, &bolt.Options{Timeout: opts.Timeout, ReadOnly: opts.ReadOnly, InitialMmapSize: initialMmap, NoSync: opts.Scratch, NoFreelistSync: opts.Scratch})
		if err != nil {
			return nil, err
		}
		after, err := os.Stat(path)
		if err == nil && (before == nil || os.SameFile(before, after)) {
			return db, nil
		}
		db.Close()
		if err != nil {
			return nil, err
		}
		if attempt == 8 {
			return nil, fmt.Errorf("%s keeps being replaced while it is opened", path)
		}
	}
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%s: %w (another process holds it)", path, ErrBusy)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("%s: %w: %v", path, ErrCorrupt, err)
	case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %w", path, err)
	case NoSpace(err):
		// A new store's first pages found no room: not a damaged file.
		return writeError(path, err)
	}
	// bbolt reports a short or garbage file in several ways; all mean the
	// file is not a store we can read.
	return fmt.Errorf("%s: %w: %v", path, ErrCorrupt, err)
}

func (s *Store) migrate(now time.Time, readOnly bool) error {
	var version uint64
	var moving bool
	err := s.db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			version = getU64(meta, keySchema)
			moving = meta.Get(keyMigrating) != nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case version > SchemaVersion:
		return fmt.Errorf("store schema version %d is newer than this fluxq understands (%d)", version, SchemaVersion)
	case version == SchemaVersion && !moving:
		return s.verify()
	case readOnly && moving:
		return fmt.Errorf("the store's move to schema version %d stopped half way; open it read-write once (start fluxsched) to finish it", SchemaVersion)
	case readOnly:
		return fmt.Errorf("store schema version %d needs an upgrade to %d; open it read-write once", version, SchemaVersion)
	}
	if version < SchemaVersion {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for v := version; v < SchemaVersion; v++ {
				if err := migrations[v](tx, now); err != nil {
					return fmt.Errorf("migrating store schema %d to %d: %w", v, v+1, err)
				}
			}
			return tx.Bucket(bucketMeta).Put(keySchema, u64(SchemaVersion))
		})
		if err != nil {
			return err
		}
	}
	// The jobs of schema 2, a batch to a transaction; the last one ends
	// the move.
	for done := false; !done; {
		err := s.db.Update(func(tx *bolt.Tx) error {
			var err error
			if done, err = moveJobs(tx); err != nil || !done {
				return err
			}
			return tx.Bucket(bucketMeta).Delete(keyMigrating)
		})
		if err != nil {
			return fmt.Errorf("migrating store schema 2 to 3: moving the jobs: %w", err)
		}
	}
	return s.verify()
}

// verify checks that the buckets every Tx method relies on exist, so a
// damaged file is reported once here instead of failing deep in a command.
func (s *Store) verify() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketJob, bucketQueues, bucketResources, bucketRes, bucketToolEv} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: bucket %q is missing", ErrCorrupt, name)
			}
		}
		for _, name := range kindNames {
			if tx.Bucket(bucketJob).Bucket([]byte(name)) == nil {
				return fmt.Errorf("%w: bucket \"job/%s\" is missing", ErrCorrupt, name)
			}
		}
		if tx.Bucket(bucketJobs) != nil {
			return fmt.Errorf("%w: bucket \"jobs\" of schema 2 is still there", ErrCorrupt)
		}
		for _, name := range [][]byte{bucketDrain, bucketSpares} {
			if tx.Bucket(bucketResources).Bucket(name) == nil {
				return fmt.Errorf("%w: bucket \"resources/%s\" is missing", ErrCorrupt, name)
			}
		}
		return nil
	})
}

// Close releases the file and its lock.
func (s *Store) Close() error { return s.db.Close() }

// Path is the store's file.
func (s *Store) Path() string { return s.db.Path() }

// Update runs fn in one read-write transaction: all of it commits, or none.
// The loop calls it once per turn, so a turn's events cost one fsync. An
// error of fn is returned as it is; a commit that fails (the file cannot
// be written) is a *WriteError naming the file.
func (s *Store) Update(fn func(*Tx) error) (uerr error) {
	defer guard(s.Path(), &uerr)()
	var fnErr error
	err := s.db.Update(func(tx *bolt.Tx) error {
		if fnErr = fn(&Tx{tx: tx}); fnErr != nil {
			return fnErr
		}
		if stats := tx.Stats(); stats.GetNodeCount() == 0 {
			// bbolt materializes a node for every write and for no
			// read: nothing was written, so there is nothing to commit,
			// and a turn that only reads needs neither the disk nor
			// room on it.
			return errNothingWritten
		}
		if s.failCommit != nil {
			// As a failed write would: bbolt rolls the transaction back.
			return s.failCommit()
		}
		return nil
	})
	if err == errNothingWritten {
		return nil
	}
	if err != nil && fnErr == nil {
		if errors.Is(err, ErrCorrupt) {
			return err
		}
		return writeError(s.Path(), err)
	}
	return err
}

// errNothingWritten rolls back an Update that wrote nothing.
var errNothingWritten = errors.New("nothing written")

// View runs fn in a read-only transaction: a consistent snapshot.
func (s *Store) View(fn func(*Tx) error) (err error) {
	defer guard(s.Path(), &err)()
	return s.db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// Tx is one transaction over the store.
type Tx struct {
	tx    *bolt.Tx
	kinds [nKinds]*bolt.Bucket // job/'s buckets, once looked up (kindBucket)
}

// Writable reports whether the transaction may write.
func (t *Tx) Writable() bool { return t.tx.Writable() }

// Epoch is the FLUID epoch fixed when the store was created.
func (t *Tx) Epoch() time.Time {
	return time.UnixMilli(int64(getU64(t.tx.Bucket(bucketMeta), keyEpoch)))
}

// LastJobID is the last job id issued.
func (t *Tx) LastJobID() uint64 { return getU64(t.tx.Bucket(bucketMeta), keyLastJobID) }

// SetLastJobID records the last job id issued; it never moves backwards.
func (t *Tx) SetLastJobID(id uint64) error {
	if id < t.LastJobID() {
		return fmt.Errorf("last job id would move backwards (%d < %d)", id, t.LastJobID())
	}
	return t.tx.Bucket(bucketMeta).Put(keyLastJobID, u64(id))
}

// BootID is the boot of the machine (internal/boot) under which the job
// manager last took up the jobs; "" before the first time.
func (t *Tx) BootID() string { return string(t.tx.Bucket(bucketMeta).Get(keyBootID)) }

// PutBootID records the boot under which the jobs are taken up.
func (t *Tx) PutBootID(id string) error { return t.tx.Bucket(bucketMeta).Put(keyBootID, []byte(id)) }

// QueueConfig returns a copy of the saved queue configuration, or nil.
func (t *Tx) QueueConfig() []byte { return clone(t.tx.Bucket(bucketMeta).Get(keyQueues)) }

// PutQueueConfig saves the queue configuration.
func (t *Tx) PutQueueConfig(cfg []byte) error { return t.tx.Bucket(bucketMeta).Put(keyQueues, cfg) }

// queueKey maps a queue name to its key; "" is the anonymous queue.
func queueKey(name string) []byte {
	if name == "" {
		return keyAnonymous
	}
	return []byte(name)
}

// Queue returns a copy of a queue's saved state, or nil; "" is the
// anonymous queue.
func (t *Tx) Queue(name string) []byte {
	return clone(t.tx.Bucket(bucketQueues).Get(queueKey(name)))
}

// PutQueue saves a queue's state; "" is the anonymous queue.
func (t *Tx) PutQueue(name string, state []byte) error {
	return t.tx.Bucket(bucketQueues).Put(queueKey(name), state)
}

// ForEachQueue calls fn for each saved queue in key order ("" is the
// anonymous queue).
func (t *Tx) ForEachQueue(fn func(name string, state []byte) error) error {
	return t.tx.Bucket(bucketQueues).ForEach(func(k, v []byte) error {
		name := string(k)
		if bytes.Equal(k, keyAnonymous) {
			name = ""
		}
		return fn(name, clone(v))
	})
}

// Inventory returns a copy of the saved resource inventory, or nil.
func (t *Tx) Inventory() []byte {
	return clone(t.tx.Bucket(bucketResources).Get(keyInventory))
}

// PutInventory saves the resource inventory.
func (t *Tx) PutInventory(r []byte) error {
	return t.tx.Bucket(bucketResources).Put(keyInventory, r)
}

// Drain returns the drain record of a rank, or nil when it is not drained.
func (t *Tx) Drain(rank uint64) []byte {
	return clone(t.drain().Get(u64(rank)))
}

// PutDrain records a rank as drained; a nil record undrains it.
func (t *Tx) PutDrain(rank uint64, record []byte) error {
	if record == nil {
		return t.drain().Delete(u64(rank))
	}
	return t.drain().Put(u64(rank), record)
}

// ForEachDrain calls fn for each drained rank in rank order.
func (t *Tx) ForEachDrain(fn func(rank uint64, record []byte) error) error {
	return t.drain().ForEach(func(k, v []byte) error {
		return fn(binary.BigEndian.Uint64(k), clone(v))
	})
}

func (t *Tx) drain() *bolt.Bucket { return t.tx.Bucket(bucketResources).Bucket(bucketDrain) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func getU64(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func clone(v []byte) []byte {
	if v == nil {
		return nil
	}
	return bytes.Clone(v)
}

// LastAlloc is the last reservation number issued (rN), 0 for none.
func (t *Tx) LastAlloc() uint64 { return getU64(t.tx.Bucket(bucketMeta), keyLastAlloc) }

// PutReservation saves reservation number n, and raises the last number
// issued to n.
func (t *Tx) PutReservation(n uint64, record []byte) error {
	meta := t.tx.Bucket(bucketMeta)
	if n > getU64(meta, keyLastAlloc) {
		if err := meta.Put(keyLastAlloc, u64(n)); err != nil {
			return err
		}
	}
	return t.tx.Bucket(bucketRes).Put(u64(n), record)
}

// ForEachReservation calls fn for each reservation in number order.
func (t *Tx) ForEachReservation(fn func(n uint64, record []byte) error) error {
	return t.tx.Bucket(bucketRes).ForEach(func(k, v []byte) error {
		return fn(binary.BigEndian.Uint64(k), clone(v))
	})
}

// PutSpare saves a spare node's record.
func (t *Tx) PutSpare(name string, record []byte) error {
	if name == "" {
		return errors.New("spare node has no name")
	}
	return t.spares().Put([]byte(name), record)
}

// ForEachSpare calls fn for each spare node, in name order.
func (t *Tx) ForEachSpare(fn func(name string, record []byte) error) error {
	return t.spares().ForEach(func(k, v []byte) error { return fn(string(k), clone(v)) })
}

func (t *Tx) spares() *bolt.Bucket { return t.tx.Bucket(bucketResources).Bucket(bucketSpares) }

// AppendToolEvent appends an event to a tool user's list and returns its
// sequence number (from 1).
func (t *Tx) AppendToolEvent(user string, record []byte) (uint64, error) {
	if user == "" {
		return 0, errors.New("tool event has no user")
	}
	b, err := t.tx.Bucket(bucketToolEv).CreateBucketIfNotExists([]byte(user))
	if err != nil {
		return 0, err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, b.Put(u64(seq), record)
}

// ForEachToolEvent calls fn for a tool user's events after sequence
// number after, in order.
func (t *Tx) ForEachToolEvent(user string, after uint64, fn func(seq uint64, record []byte) error) error {
	b := t.tx.Bucket(bucketToolEv).Bucket([]byte(user))
	if b == nil || user == "" {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(u64(after + 1)); k != nil; k, v = c.Next() {
		if err := fn(binary.BigEndian.Uint64(k), clone(v)); err != nil {
			return err
		}
	}
	return nil
}

// ReservationConfig returns the [reservation] table as the loop last
// loaded it (JSON), or nil.
func (t *Tx) ReservationConfig() []byte { return clone(t.tx.Bucket(bucketMeta).Get(keyResConfig)) }

// PutReservationConfig saves the [reservation] table.
func (t *Tx) PutReservationConfig(cfg []byte) error {
	return t.tx.Bucket(bucketMeta).Put(keyResConfig, cfg)
}
