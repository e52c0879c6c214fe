package testutil

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// DiskProbe measures the disk under dir as a mailbox commit meets it:
// each iteration writes 4 KiB at the start of a file in dir and
// fdatasyncs it (bbolt's commit ends in an fdatasync too). It reports
// fsyncs/s. Run it beside the mailbox benchmarks, in the same run, and
// quote their rates as ratios to it: on a shared machine the disk's rate
// moves with everyone else's load.
func DiskProbe(b *testing.B, dir string) {
	b.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := bytes.Repeat([]byte{0xa5}, 4096)
	if _, err := f.WriteAt(page, 0); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil { // the file's size is durable: later syncs are of data only
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		page[0] = byte(i)
		if _, err := f.WriteAt(page, 0); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fsyncs/s")
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
