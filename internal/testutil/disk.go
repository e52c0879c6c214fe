package testutil

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// DiskProbe measures the disk under dir as a mailbox commit meets it:
// each iteration writes 4 KiB at the start of a file in dir and
// fdatasyncs it (bbolt's commit ends in an fdatasync too). It reports
// fsyncs/s. Run it beside the mailbox benchmarks, in the same run, and
// quote their rates as ratios to it: on a shared machine the disk's rate
// moves with everyone else's load.
func DiskProbe(b *testing.B, dir string) {
	b.Helper()
	b.ReportMetric(FsyncRate(b, dir, b.N), "fsyncs/s")
}

// FsyncRate is DiskProbe's measure as a value, for a benchmark that
// quotes its load as a ratio to the disk in the same run: n writes of
// 4 KiB to one file in dir, each fdatasynced, per second.
func FsyncRate(tb testing.TB, dir string, n int) float64 {
	tb.Helper()
	f, page := probeFile(tb, filepath.Join(dir, "probe"), 1, 0xa5)
	defer f.Close()
	begin := time.Now()
	for i := 0; i < n; i++ {
		page[0] = byte(i)
		if _, err := f.WriteAt(page, 0); err != nil {
			tb.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			tb.Fatal(err)
		}
	}
	return float64(n) / time.Since(begin).Seconds()
}

// probeFile creates path with pages 4 KiB pages of fill, synced so that
// the file's size is durable (later syncs are of data only), and returns
// it with a page of fill to write.
func probeFile(b testing.TB, path string, pages int, fill byte) (*os.File, []byte) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	page := bytes.Repeat([]byte{fill}, 4096)
	if _, err := f.WriteAt(bytes.Repeat(page, pages), 0); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return f, page
}

// WriteBytes is what this process has caused to be written to storage so
// far (write_bytes of /proc/self/io: page-cache pages it dirtied, counted
// when they are dirtied, whoever writes them back). ok is false where
// the kernel does not say (not Linux, or no task I/O accounting).
func WriteBytes() (n int64, ok bool) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, found := bytes.CutPrefix(sc.Bytes(), []byte("write_bytes: ")); found {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// DiskCommitProbe measures the disk under dir as one bbolt commit needs it:
// each iteration writes 4 KiB of "data" at an offset that moves through a
// 1 MiB file and fdatasyncs, then writes 4 KiB of "meta" at the start and
// fdatasyncs again (bbolt syncs its pages before the meta page that makes
// them live, so a commit is two flushes in a row). It reports commits/s
// and the p50 and p99 of one such pair (ms): the floor of a durable
// report's latency on this disk, to quote beside the mailbox's.
func DiskCommitProbe(b *testing.B, dir string) {
	b.Helper()
	took := CommitPairs(b, dir, b.N)
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	b.ReportMetric(float64(b.N)/sum.Seconds(), "commits/s")
	p50, p99 := Quantiles(took)
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
}

// CommitPairs is DiskCommitProbe's measure as values: the time of each of
// n pairs of 4 KiB write and fdatasync (data, then meta) in a file in dir.
func CommitPairs(tb testing.TB, dir string, n int) []time.Duration {
	tb.Helper()
	const span = 256 // pages
	f, page := probeFile(tb, filepath.Join(dir, "commit-probe"), span, 0x5a)
	defer f.Close()
	took := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		begin := time.Now()
		page[0] = byte(i)
		for _, off := range []int64{int64(1+i%(span-1)) * 4096, 0} {
			if _, err := f.WriteAt(page, off); err != nil {
				tb.Fatal(err)
			}
			if err := fdatasync(f); err != nil {
				tb.Fatal(err)
			}
		}
		took = append(took, time.Since(begin))
	}
	return took
}

// Quantiles sorts d and returns its p50 and p99 in milliseconds (0, 0 for
// an empty d).
func Quantiles(d []time.Duration) (p50, p99 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	return at(0.50), at(0.99)
}
