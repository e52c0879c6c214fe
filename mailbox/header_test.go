package mailbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A whole mailbox file passes checkHeader; the same file cut short of
// its pages is refused as truncated, with ErrCorrupt.
func TestCheckHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mailbox.db")
	s := openStore(t, path)
	postMany(t, s, "/root", 200)
	s.Close()
	data := readFile(t, path)
	if err := checkHeader(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("a whole file: %v", err)
	}
	cut := data[:len(data)/2]
	err := checkHeader(bytes.NewReader(cut), int64(len(cut)))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("half a file: %v", err)
	}
	// Not a bbolt file at all: left to bbolt, which refuses it.
	text := bytes.Repeat([]byte("not a database\n"), 1000)
	if err := checkHeader(bytes.NewReader(text), int64(len(text))); err != nil {
		t.Fatalf("text: %v", err)
	}
}

// checkHeader takes any bytes without panicking, and what it accepts with
// a valid meta fits in the file.
func FuzzCheckHeader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "mailbox.db")
	openStore(f, path).Close()
	head, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(head[:min(len(head), 2*4096)], int64(len(head)))
	f.Add(head[:100], int64(100))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		err := checkHeader(bytes.NewReader(data), size)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("an error not wrapping ErrCorrupt: %v", err)
		}
		m, ok := readMeta(bytes.NewReader(data), 0)
		if ok && err == nil {
			if second, ok2 := readMeta(bytes.NewReader(data), int64(m.pageSize)); !ok2 || second.txid <= m.txid {
				if size < 0 || m.pgid > uint64(size)/uint64(m.pageSize) {
					t.Fatalf("accepted a meta of %d pages of %d bytes in %d bytes", m.pgid, m.pageSize, size)
				}
			}
		}
	})
}
