package store

import (
	"bytes"
	"path/filepath"
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

// A schema 1 store opens as schema 2: every record it held is there as
// it was, readable through Tx, and the buckets of node reservations are
// made empty beside them.
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
		for bucket, kv := range schema1 {
			b := bucketAt(tx, bucket, false)
			if b == nil {
				t.Errorf("bucket %q is gone", bucket)
				continue
			}
			for k, v := range kv {
				want := v
				if bucket == "meta" && k == "schema" {
					want = u64(2)
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
