package redact

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// gitleaksGoSourcePerMB is gitleaks v8.30.1's rate on the same files
// (docs/redaction.md, "Precision on code", gives the command): lines with
// a finding per MB of the Go standard library's .go files, 44 lines in
// 90.4 MB of Go 1.26.8.
const gitleaksGoSourcePerMB = 0.49

// TestPrecisionOnGoSource takes each line of the Go standard library's
// .go files as a message: the lines redaction changes, per MB, must be at
// most gitleaks' flagged lines per MB on the same text. Each changed line
// is logged (-v).
func TestPrecisionOnGoSource(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads 90 MB of Go source (-short, -race)")
	}
	root := filepath.Join(runtime.GOROOT(), "src")
	var size int64
	var changed []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		size += int64(len(b))
		for n, line := range bytes.Split(b, []byte("\n")) {
			if out, counts := Message(string(line)); counts != nil {
				rel, _ := filepath.Rel(root, p)
				changed = append(changed, rel+":"+itoa(n+1)+": "+out)
			}
		}
		return nil
	})
	if err != nil {
		t.Skipf("cannot read the Go source at %s: %v", root, err)
	}
	mb := float64(size) / 1e6
	rate := float64(len(changed)) / mb
	for _, c := range changed {
		t.Log(c)
	}
	t.Logf("%d lines changed in %.1f MB of %s: %.2f per MB (gitleaks: %.2f)", len(changed), mb, runtime.Version(), rate, gitleaksGoSourcePerMB)
	if rate > gitleaksGoSourcePerMB {
		t.Errorf("%.2f changed lines per MB, above gitleaks' %.2f", rate, gitleaksGoSourcePerMB)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}
