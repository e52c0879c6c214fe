package mailbox

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/internal/testutil"
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
// is fsynced and its record has read back) from 1, 8 and 64 concurrent
// posters, and how many commits they share, with the record's CRC-32C
// computed (checksum=on) and with zeros written in its place instead
// (checksum=off, Store.noCRC). Everything else a Post does is the same in
// both, the record's encoding, verification and read-back included, so
// the difference is what computing the checksum costs.
func BenchmarkStorePost(b *testing.B) { benchmarkPost(b, false) }

// BenchmarkStorePostNoSync is BenchmarkStorePost without fsync, so that
// the CPU cost of the checksum is not hidden behind the disk's latency.
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
				s.noCRC = checksum == "off"
				s.db.NoSync, s.log.noSync = noSync, noSync
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

// BenchmarkStorePostPaired measures what BenchmarkStorePost does, the
// checksum on and off, but both in each benchmark run, on one Store: it
// posts in rounds and turns the checksum on and off between rounds (which
// comes first alternates too), so that the load of a shared machine,
// which drifts over seconds, falls on both alike, and so do the file's
// layout and size. It reports the time per post with the checksum and
// without (ns/post-on, ns/post-off) and their ratio (on/off); its ns/op
// would be per pair of rounds, so it is suppressed. A round is one post
// for one poster, and 8 posts per poster for 8 and 64 (all posters at
// once). size=typical posts the message the other benchmarks post (193
// bytes of record); size=max posts messages of MaxMessageBytes, the most
// a record holds.
func BenchmarkStorePostPaired(b *testing.B) {
	typical, largest := benchMessages()
	for _, c := range []struct {
		posters int
		m       diag.ParentMessage
	}{{1, typical}, {8, typical}, {64, typical}, {1, largest}} {
		size := "typical"
		if c.m.Message != typical.Message {
			size = "max"
		}
		b.Run(fmt.Sprintf("posters=%d/size=%s", c.posters, size), func(b *testing.B) {
			s := openStore(b, filepath.Join(b.TempDir(), "mailbox.db"))
			per := 8
			if c.posters == 1 {
				per = 1
			}
			var took [2]time.Duration // [0] checksum on, [1] off
			var commits [2]uint64
			round := func(off int) {
				// No Post is running: the last round's have returned.
				s.noCRC = off == 1
				start, before := time.Now(), s.Stats().Commits
				var wg sync.WaitGroup
				for range c.posters {
					wg.Go(func() {
						for range per {
							if err := s.Post(c.m); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				took[off] += time.Since(start)
				commits[off] += s.Stats().Commits - before
			}
			rounds := 0
			for b.Loop() {
				round(rounds % 2)
				round(1 - rounds%2)
				rounds++
			}
			n := uint64(rounds * c.posters * per) // posts each way
			if st := s.Stats(); st.Posts != 2*n {
				b.Fatalf("posted %d, want %d", st.Posts, 2*n)
			}
			on, off := float64(took[0].Nanoseconds())/float64(n), float64(took[1].Nanoseconds())/float64(n)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(on, "ns/post-on")
			b.ReportMetric(off, "ns/post-off")
			b.ReportMetric(on/off, "on/off")
			b.ReportMetric(float64(commits[0])/float64(n), "commits/post-on")
			b.ReportMetric(float64(commits[1])/float64(n), "commits/post-off")
		})
	}
}

// BenchmarkDiskProbe is the disk's own rate where the Store benchmarks
// keep their files (4 KiB written and fdatasynced per iteration): run it
// in the same run as they, and quote their posts/s as a ratio to its
// fsyncs/s.
func BenchmarkDiskProbe(b *testing.B) { testutil.DiskProbe(b, b.TempDir()) }

// BenchmarkStorePostRecipients measures durable posts from 64 posters to
// one recipient and to 64 (each poster its own), and what a post costs
// the disk: writeB/post is the bytes this process had written to storage
// per post (write_bytes of /proc/self/io), commits/post how many posts
// shared a commit. The file layout decides what a commit of 64
// recipients' posts dirties (docs/mailbox.md).
func BenchmarkStorePostRecipients(b *testing.B) {
	const posters = 64
	for _, recipients := range []int{1, posters} {
		b.Run(fmt.Sprintf("posters=%d/recipients=%d", posters, recipients), func(b *testing.B) {
			s := openStore(b, filepath.Join(b.TempDir(), "mailbox.db"))
			ms := make([]diag.ParentMessage, posters)
			for i := range ms {
				ms[i] = msg(fmt.Sprintf("/root/p%d", i%recipients), fmt.Sprintf("/root/p%d/c", i), "bench", 0)
			}
			wrote, _ := testutil.WriteBytes()
			var next atomic.Int64
			b.SetParallelism(max(1, posters/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				m := ms[int(next.Add(1)-1)%posters]
				for pb.Next() {
					if err := s.Post(m); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportPosts(b, s)
			if after, ok := testutil.WriteBytes(); ok {
				b.ReportMetric(float64(after-wrote)/float64(s.Stats().Posts), "writeB/post")
			}
		})
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

// BenchmarkChecksum measures the checksum alone, as Post computes it: the
// CRC-32C of a record's body (bodySum), then extended by its id (withID),
// for the benchmarks' typical record (193 bytes) and for the largest one
// (65555 bytes: MaxMessageBytes of fields); B/s is of the record.
func BenchmarkChecksum(b *testing.B) {
	typical, largest := benchMessages()
	for _, c := range []struct {
		size string
		m    diag.ParentMessage
	}{{"typical", typical}, {"max", largest}} {
		body := encodeBody(nil, &c.m)
		b.Run("size="+c.size, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			var sum uint32
			id := uint64(1)
			for b.Loop() {
				sum ^= withID(bodySum(body), id)
				id++
			}
			sink = sum
		})
	}
}

var sink uint32

// benchMessages are the benchmarks' typical message (193 bytes of record)
// and the largest one a record holds (MaxMessageBytes of fields).
func benchMessages() (typical, largest diag.ParentMessage) {
	typical = msg("/root", "/root/x", "bench", 0)
	largest = typical
	largest.Message = strings.Repeat("x", MaxMessageBytes-messageBytes(&typical)+len(typical.Message))
	return typical, largest
}
