package store

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// schema1 is a store as the code of schema 1 wrote it (before node
// reservations, d62d877): meta, jobs, queues and resources with drain,
// and no summary-crc (a later key, with no migration).
var schema1 = map[string]map[string][]byte{
	"meta": {
		"schema":       u64(1),
		"epoch":        u64(1700000000000),
		"last-jobid":   u64(3 << 24),
		"queue-config": []byte(`{"queues":{"batch":{}}}`),
	},
	"jobs/" + string(u64(1<<24)): {
		"jobspec":  []byte(`{"version":1,"tasks":[{"command":["true"]}]}`),
		"eventlog": []byte("{\"timestamp\":1700000000.5,\"name\":\"submit\"}\n{\"timestamp\":1700000000.6,\"name\":\"clean\"}\n"),
		"R":        []byte(`{"version":1,"execution":{"R_lite":[]}}`),
		"summary":  []byte(`{"id":16777216,"state":"INACTIVE"}`),
	},
	"jobs/" + string(u64(3<<24)): {
		"jobspec":  []byte(`{"version":1,"tasks":[{"command":["sleep","9"]}]}`),
		"eventlog": []byte("{\"timestamp\":1700000001.5,\"name\":\"submit\"}\n"),
		"summary":  []byte(`{"id":50331648,"state":"DEPEND"}`),
	},
	"queues": {
		"\x00":  []byte(`{"enabled":true,"started":true}`),
		"batch": []byte(`{"enabled":false,"started":true,"disable_reason":"maintenance"}`),
	},
	"resources": {
		"inventory": []byte(`{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-1"}}]}}`),
	},
	"resources/drain": {
		string(u64(0)): []byte(`{"reason":"fan","timestamp":1700000002}`),
	},
}

// bucketAt is the bucket at a path of names joined with "/", made if
// need be (a job's id may hold a "/" byte, so jobs/ is split once).
func bucketAt(tx *bolt.Tx, path string, create bool) *bolt.Bucket {
	var names []string
	if rest, ok := bytes.CutPrefix([]byte(path), []byte("jobs/")); ok {
		names = []string{"jobs", string(rest)}
	} else {
		names = strings.Split(path, "/")
	}
	var b *bolt.Bucket
	for _, n := range names {
		var next *bolt.Bucket
		switch {
		case b == nil && create:
			next, _ = tx.CreateBucketIfNotExists([]byte(n))
		case b == nil:
			next = tx.Bucket([]byte(n))
		case create:
			next, _ = b.CreateBucketIfNotExists([]byte(n))
		default:
			next = b.Bucket([]byte(n))
		}
		if next == nil {
			return nil
		}
		b = next
	}
	return b
}

// A schema 1 store opens as schema 3: every record it held is there as
// it was (a job's records moved to job/<kind>/<id>), readable through
// Tx, and the buckets of node reservations are made empty beside them.
func TestMigrateSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for bucket, kv := range schema1 {
			b := bucketAt(tx, bucket, true)
			for k, v := range kv {
				if err := b.Put([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("opening a schema 1 store: %v", err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs) != nil {
			t.Error("jobs/ is still there after the move to schema 3")
		}
		if tx.Bucket(bucketMeta).Get(keyMigrating) != nil {
			t.Error("meta/migrating is still there after the move to schema 3")
		}
		for bucket, kv := range schema1 {
			if id, ok := strings.CutPrefix(bucket, "jobs/"); ok {
				if v := tx.Bucket(bucketJob).Bucket([]byte(kindIDsName)).Get([]byte(id)); !bytes.Equal(v, present) {
					t.Errorf("job %x: ids = %q", id, v)
				}
				for k, v := range kv {
					if got := tx.Bucket(bucketJob).Bucket([]byte(k)).Get([]byte(id)); !bytes.Equal(got, v) {
						t.Errorf("job/%s/%x = %q, want %q", k, id, got, v)
					}
				}
				continue
			}
			b := bucketAt(tx, bucket, false)
			if b == nil {
				t.Errorf("bucket %q is gone", bucket)
				continue
			}
			for k, v := range kv {
				want := v
				if bucket == "meta" && k == "schema" {
					want = u64(3)
				}
				if got := b.Get([]byte(k)); !bytes.Equal(got, want) {
					t.Errorf("%q/%q = %q, want %q", bucket, k, got, want)
				}
			}
		}
		for _, p := range []string{"resources/spares", "reservations", "tool-events"} {
			b := bucketAt(tx, p, false)
			if b == nil {
				t.Errorf("no bucket %s after the migration", p)
			} else if k, _ := b.Cursor().First(); k != nil {
				t.Errorf("bucket %s is not empty: %q", p, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		if tx.LastJobID() != 3<<24 || tx.Epoch().UnixMilli() != 1700000000000 {
			t.Errorf("last job id %d, epoch %v", tx.LastJobID(), tx.Epoch())
		}
		// A summary with no sum (schema 1 wrote none) is read as it is.
		if v, err := tx.JobValue(1<<24, JobSummary); err != nil || string(v) != `{"id":16777216,"state":"INACTIVE"}` {
			t.Errorf("summary of the first job: %q, %v", v, err)
		}
		if tx.LastAlloc() != 0 || tx.BootID() != "" {
			t.Errorf("last-alloc %d, boot-id %q in a migrated store", tx.LastAlloc(), tx.BootID())
		}
		if string(tx.Queue("batch")) != `{"enabled":false,"started":true,"disable_reason":"maintenance"}` || tx.Inventory() == nil || tx.Drain(0) == nil {
			t.Errorf("queue %q, inventory %q, drain %q", tx.Queue("batch"), tx.Inventory(), tx.Drain(0))
		}
		n := 0
		err := tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { n++; return true, nil })
		if n != 2 {
			t.Errorf("%d jobs after the migration, want 2", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Migrated once: it opens again as it is, read-only too.
	s, err = Open(path, Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatalf("opening the migrated store again: %v", err)
	}
	s.Close()
}

// schema2 writes a store as the code of schema 2 left it, with n jobs in
// jobs/<id>/ (ids 1..n), each with a jobspec, an eventlog, a summary
// and its sum.
func schema2(t *testing.T, path string, n int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for _, m := range migrations[:2] {
			if err := m(tx, time.UnixMilli(1700000000000)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(2))
	})
	if err != nil {
		t.Fatal(err)
	}
	for from := 1; from <= n; from += 5000 {
		err := db.Update(func(tx *bolt.Tx) error {
			for id := from; id < from+5000 && id <= n; id++ {
				b, err := tx.Bucket(bucketJobs).CreateBucket(u64(uint64(id)))
				if err != nil {
					return err
				}
				sum := []byte(`{"id":` + strconv.Itoa(id) + `}`)
				for k, v := range map[string][]byte{JobJobspec: []byte(`{"j":` + strconv.Itoa(id) + `}`), JobEventlog: []byte("{}\n"), JobSummary: sum, JobSummarySum: SummarySum(sum)} {
					if err := b.Put([]byte(k), v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A schema 2 store moves to schema 3 a batch of jobs to a transaction:
// stopped after the first batch, it holds every job once, in one layout
// or the other (the check counts them all); an open read-only refuses it,
// saying what to do; an older fluxq would refuse it (meta says 3); and
// the next open read-write finishes the move, every job's records as
// they were.
func TestMigrateSchema2Resumes(t *testing.T) {
	const n = migrateBatch + 2500
	path := filepath.Join(t.TempDir(), "fluxq.db")
	schema2(t, path, n)
	// The move's first transactions, as Open makes them, then a stop.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := migrations[2](tx, time.Now()); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(3))
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			done, err := moveJobs(tx)
			if err == nil && done {
				t.Error("the first batch moved every job")
			}
			return err
		})
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckFile(path, true)
	if err != nil || !rep.OK() || rep.Jobs != n {
		t.Fatalf("check of the half-moved store: %v, %v, %d jobs, want %d", err, rep.Problems, rep.Jobs, n)
	}
	if _, err := Open(path, Options{ReadOnly: true, Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "open it read-write once") {
		t.Errorf("read-only open of a half-moved store: %v", err)
	}
	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("finishing the move: %v", err)
	}
	defer s.Close()
	seen := 0
	err = s.View(func(tx *Tx) error {
		return tx.ForEachJob(0, func(id uint64, get func(string) []byte) (bool, error) {
			seen++
			if id != uint64(seen) || string(get(JobJobspec)) != `{"j":`+strconv.Itoa(seen)+`}` || string(get(JobSummary)) != `{"id":`+strconv.Itoa(seen)+`}` || string(get(JobEventlog)) != "{}\n" {
				t.Fatalf("job %d (the %dth): jobspec %q, summary %q", id, seen, get(JobJobspec), get(JobSummary))
			}
			return true, nil
		})
	})
	if err != nil || seen != n {
		t.Fatalf("%d jobs after the move (%v), want %d", seen, err, n)
	}
	s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs) != nil || tx.Bucket(bucketMeta).Get(keyMigrating) != nil {
			t.Error("jobs/ or meta/migrating is left after the move")
		}
		return nil
	})
}

// A record no job has, in a schema 2 job bucket, stops the move rather
// than be dropped, and the store is left as it was.
func TestMigrateRefusesUnknownRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fluxq.db")
	schema2(t, path, 3)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).Bucket(u64(2)).Put([]byte("color"), []byte("blue"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), `record "color"`) {
		t.Fatalf("moving a job with an unknown record: %v", err)
	}
	// Nothing of the batch moved: the next try meets the same job.
	if _, err := Open(path, Options{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), `job 2: record "color"`) {
		t.Fatalf("second try: %v", err)
	}
}

// A job's key gone from job/ids while its summary stays (what a damaged
// leaf of job/ids reads as, when bbolt reads it without a fault) is
// damage to both walks of the jobs, never a job left out in silence,
// whether it is the first, a middle or the last one.
func TestWalksFindOrphanSummaries(t *testing.T) {
	for _, gone := range []uint64{1, 2, 3} {
		path := filepath.Join(t.TempDir(), "fluxq.db")
		schema2(t, path, 3)
		s, err := Open(path, Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketJob).Bucket([]byte(kindIDsName)).Delete(u64(gone))
		})
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *Tx) error {
			if err := tx.ForEachJob(0, func(uint64, func(string) []byte) (bool, error) { return true, nil }); !errors.Is(err, ErrCorrupt) {
				t.Errorf("job %d gone from job/ids: ForEachJob = %v, want a damaged store", gone, err)
			}
			if err := tx.ForEachJobSummary(func(uint64, []byte) {}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("job %d gone from job/ids: ForEachJobSummary = %v, want a damaged store", gone, err)
			}
			return nil
		})
		s.Close()
	}
}
