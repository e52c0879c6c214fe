package mailbox

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func BenchmarkMemoryPost(b *testing.B) {
	mb := NewMemory()
	m := msg("/root", "/root/x", "bench", 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%100000 == 0 { // keep memory bounded; a mailbox is read and acked
			b.StopTimer()
			mb = NewMemory()
			b.StartTimer()
		}
		if err := mb.Post(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryReadAck(b *testing.B) {
	mb := NewMemory()
	m := msg("/root", "/root/x", "bench", 0)
	b.ReportAllocs()
	for b.Loop() {
		for range 100 {
			mb.Post(m)
		}
		es, _ := mb.Read("/root", 100)
		if n, _ := mb.Ack("/root", ids(es)); n != 100 {
			b.Fatal(n)
		}
	}
}

// BenchmarkStorePost measures durable posts (each returns after its commit
// is fsynced) from 1, 8 and 64 concurrent posters, and how many commits
// they share, with checksums (version 2 records, verified before the
// commit and read back after it) and without (version 1 records, as
// before): checksum=on and off run side by side for each poster count.
func BenchmarkStorePost(b *testing.B) { benchmarkPost(b, false) }

// BenchmarkStorePostNoSync is BenchmarkStorePost without fsync, so that
// the CPU cost of the checksums is not hidden behind the disk's latency.
func BenchmarkStorePostNoSync(b *testing.B) { benchmarkPost(b, true) }

func benchmarkPost(b *testing.B, noSync bool) {
	m := msg("/root", "/root/x", "bench", 0)
	procs := runtime.GOMAXPROCS(0)
	for _, want := range []int{1, 8, 64} {
		par := max(1, want/procs)
		posters := par * procs
		if want == 1 {
			posters = 1
		}
		for _, checksum := range []string{"on", "off"} {
			b.Run(fmt.Sprintf("posters=%d/checksum=%s", posters, checksum), func(b *testing.B) {
				s := openStore(b, filepath.Join(b.TempDir(), "mailbox.db"))
				s.unchecked = checksum == "off"
				s.db.NoSync = noSync
				b.ReportAllocs()
				if want == 1 {
					for b.Loop() {
						if err := s.Post(m); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(par)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := s.Post(m); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				reportPosts(b, s)
			})
		}
	}
}

func reportPosts(b *testing.B, s *Store) {
	st := s.Stats()
	b.ReportMetric(float64(st.Posts)/b.Elapsed().Seconds(), "posts/s")
	b.ReportMetric(float64(st.Commits)/float64(st.Posts), "commits/post")
}

func BenchmarkStoreRead(b *testing.B) {
	s := openStore(b, filepath.Join(b.TempDir(), "mailbox.db"))
	postMany(b, s, "/root", 1000)
	b.ReportAllocs()
	for b.Loop() {
		if es, err := s.Read("/root", 100); err != nil || len(es) != 100 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkBoltBatchBaseline is the alternative the Store does not use:
// bbolt's DB.Batch with its timer (see committer). It writes a similar
// record per call, for comparison with BenchmarkStorePost.
func BenchmarkBoltBatchBaseline(b *testing.B) {
	m := msg("/root", "/root/x", "bench", 0)
	rec := encodeRecordV1(nil, &m)
	for _, delay := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond} {
		for _, posters := range []int{1, 64} {
			b.Run(fmt.Sprintf("delay=%v/posters=%d", delay, posters), func(b *testing.B) {
				db, err := bolt.Open(filepath.Join(b.TempDir(), "batch.db"), 0o600, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				db.MaxBatchDelay = delay
				if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("m")); return err }); err != nil {
					b.Fatal(err)
				}
				post := func() error {
					return db.Batch(func(tx *bolt.Tx) error {
						bk := tx.Bucket([]byte("m"))
						id, err := bk.NextSequence()
						if err != nil {
							return err
						}
						return bk.Put(binary.BigEndian.AppendUint64(nil, id), rec)
					})
				}
				base := txID(db)
				b.SetParallelism(max(1, posters/runtime.GOMAXPROCS(0)))
				if posters == 1 {
					for b.Loop() {
						if err := post(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := post(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "posts/s")
				b.ReportMetric(float64(txID(db)-base)/float64(b.N), "commits/post")
			})
		}
	}
}

// txID returns the id of the last committed write transaction; bbolt
// increments it by one per commit.
func txID(db *bolt.DB) int {
	tx, err := db.Begin(false)
	if err != nil {
		panic(err)
	}
	defer tx.Rollback()
	return tx.ID()
}
