package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkCancelLayout measures what a cancel of every pending job
// rewrites under three layouts of the job records (issue 28): the bytes
// of the pages the commit writes (tx.Stats().PageAlloc), its pages, and
// the time of the transaction with its fdatasync. The records are the
// sizes of a real store's (`fluxq submit --cc 1-N true` taken up, then
// cancelled): jobspec 1,969 bytes, eventlog 225 growing to 434, summary
// 478, its CRC, the waitable mark.
//
//	nested   jobs/<id>/{jobspec,eventlog,summary,summary-crc,waitable} (schema 2)
//	jobspec  jobspecs/<id> apart, the rest nested as before
//	flat     one top-level bucket per kind of record, keyed by id
//	packed   flat, its buckets' FillPercent 1.0 (ids only grow: a page
//	         split at bbolt's default half leaves half of each page empty)
//
// CANCEL_JOBS sets the number of jobs (20,000). CANCEL_STORE names a
// real store (a copy: it is written) on which the same cancel is made,
// as a fourth case, "store": the tx stats of today's layout as the jobs
// really lie.
func BenchmarkCancelLayout(b *testing.B) {
	if p := os.Getenv("CANCEL_STORE"); p != "" {
		b.Run("store", func(b *testing.B) { cancelRealStore(b, p) })
	}
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("CANCEL_JOBS")); err == nil && v > 0 {
		n = v
	}
	jobspec := bytes.Repeat([]byte("j"), 1969)
	eventlog := bytes.Repeat([]byte("e"), 225)
	more := bytes.Repeat([]byte("x"), 434-225)
	summary := bytes.Repeat([]byte("s"), 478)
	for _, layout := range []string{"nested", "jobspec", "flat", "packed"} {
		b.Run(layout, func(b *testing.B) {
			var bytesW, pages, secs float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				path := filepath.Join(b.TempDir(), "l.db")
				db, err := bolt.Open(path, 0o600, &bolt.Options{InitialMmapSize: initialMmap})
				if err != nil {
					b.Fatal(err)
				}
				put := func(tx *bolt.Tx, bucket string, id uint64, v []byte) error {
					bk, err := tx.CreateBucketIfNotExists([]byte(bucket))
					if err != nil {
						return err
					}
					if layout == "packed" {
						bk.FillPercent = 1.0
					}
					return bk.Put(u64(id), v)
				}
				for from := 0; from < n; from += 10000 {
					err := db.Update(func(tx *bolt.Tx) error {
						for id := uint64(from + 1); id <= uint64(min(from+10000, n)); id++ {
							switch layout {
							case "flat", "packed":
								for _, kv := range []struct {
									b string
									v []byte
								}{{"jobspecs", jobspec}, {"eventlogs", eventlog}, {"summaries", summary}, {"waitable", []byte{1}}} {
									if err := put(tx, kv.b, id, kv.v); err != nil {
										return err
									}
								}
							default:
								jobs, _ := tx.CreateBucketIfNotExists(bucketJobs)
								jb, err := jobs.CreateBucket(u64(id))
								if err != nil {
									return err
								}
								if layout == "nested" {
									jb.Put([]byte(JobJobspec), jobspec)
								} else if err := put(tx, "jobspecs", id, jobspec); err != nil {
									return err
								}
								jb.Put([]byte(JobEventlog), eventlog)
								jb.Put([]byte(JobSummary), summary)
								jb.Put([]byte(JobSummarySum), SummarySum(summary))
								jb.Put([]byte(JobWaitable), []byte{1})
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				t0 := time.Now()
				var st bolt.TxStats
				err = db.Update(func(tx *bolt.Tx) error {
					for id := uint64(1); id <= uint64(n); id++ {
						if layout == "flat" || layout == "packed" {
							ev, sm := tx.Bucket([]byte("eventlogs")), tx.Bucket([]byte("summaries"))
							if layout == "packed" {
								ev.FillPercent, sm.FillPercent = 1.0, 1.0
							}
							ev.Put(u64(id), append(bytes.Clone(ev.Get(u64(id))), more...))
							sm.Put(u64(id), summary)
							continue
						}
						jb := tx.Bucket(bucketJobs).Bucket(u64(id))
						jb.Put([]byte(JobEventlog), append(bytes.Clone(jb.Get([]byte(JobEventlog))), more...))
						jb.Put([]byte(JobSummary), summary)
						jb.Put([]byte(JobSummarySum), SummarySum(summary))
					}
					// OnCommit runs once the pages are written and synced:
					// the counts are final.
					tx.OnCommit(func() { st = tx.Stats() })
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				secs += time.Since(t0).Seconds()
				bytesW += float64(st.GetPageAlloc())
				pages += float64(st.GetWrite())
				b.StopTimer()
				db.Close()
			}
			b.ReportMetric(bytesW/float64(b.N)/1e6, "MB-written")
			b.ReportMetric(pages/float64(b.N), "pages")
			b.ReportMetric(secs/float64(b.N), "s-commit")
			b.ReportMetric(bytesW/float64(b.N)/float64(n), "B/job")
		})
	}
}

// cancelRealStore makes BenchmarkCancelLayout's cancel on every pending
// job of the store at path, through Tx (the layout of this schema; the
// store is migrated first if it is older): 209 bytes appended to its
// eventlog (an exception and a clean), its summary and sum written again.
func cancelRealStore(b *testing.B, path string) {
	s, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	more := bytes.Repeat([]byte("x"), 209)
	var st bolt.TxStats
	n := 0
	t0 := time.Now()
	err = s.Update(func(tx *Tx) error {
		tx.tx.OnCommit(func() { st = tx.tx.Stats() })
		var pending []uint64
		err := tx.ForEachJobSummary(func(id uint64, sum []byte) {
			if bytes.Contains(sum, []byte(`"state":"SCHED"`)) {
				pending = append(pending, id)
			}
		})
		if err != nil {
			return err
		}
		for _, id := range pending {
			n++
			sum, err := tx.JobValue(id, JobSummary)
			if err != nil {
				return err
			}
			if err := tx.AppendJobValue(id, JobEventlog, more); err != nil {
				return err
			}
			if err := tx.PutJobValue(id, JobSummary, sum); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds(), "s-commit")
	b.ReportMetric(float64(st.GetPageAlloc())/1e6, "MB-written")
	b.ReportMetric(float64(st.GetWrite()), "pages")
	b.ReportMetric(float64(n), "jobs")
	if n > 0 {
		b.ReportMetric(float64(st.GetPageAlloc())/float64(n), "B/job")
	}
}
