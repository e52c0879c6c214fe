package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/diagrelay/diagrelay/internal/testtext"
)

// BenchmarkSanitizeCLI runs the real binary as a user does, `diagrelay
// sanitize` and `diagrelay sanitize --redact`, on 8 MiB of log text (clean,
// and with a secret every 4 KiB; DIAGRELAY_BENCH_LOG adds a file of your
// own, repeated to 8 MiB), with everything a process pays: start-up, the
// rules' build, the reading and writing. It reports wall time per run
// (ns/op) and CPU time (cpu-ms/op). Built with CGO_ENABLED=0, as the README
// installs it; DIAGRELAY_BIN names another build. Compare with benchstat:
//
//	go test -run NONE -bench SanitizeCLI -count 10 ./cmd/diagrelay | tee cli.txt
//	benchstat -col /mode cli.txt
func BenchmarkSanitizeCLI(b *testing.B) {
	bin := realBinary(b)
	const size = 8 << 20
	inputs := []struct {
		name string
		text []byte
	}{
		{"clean", testtext.Log(size, 0)},
		{"secret-per-4KiB", testtext.Log(size, 4<<10)},
	}
	if f := os.Getenv("DIAGRELAY_BENCH_LOG"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 {
			b.Fatalf("DIAGRELAY_BENCH_LOG: %v (%d bytes)", err, len(data))
		}
		inputs = append(inputs, struct {
			name string
			text []byte
		}{"file", bytes.Repeat(data, size/len(data)+1)[:size]})
	}
	for _, in := range inputs {
		path := filepath.Join(b.TempDir(), in.name)
		if err := os.WriteFile(path, in.text, 0o600); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"sanitize", "redact"} {
			b.Run("input="+in.name+"/mode="+mode, func(b *testing.B) {
				args := []string{"sanitize"}
				if mode == "redact" {
					args = append(args, "--redact")
				}
				b.SetBytes(size)
				var cpu float64
				for b.Loop() {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					cmd := exec.Command(bin, args...)
					cmd.Stdin, cmd.Stdout = f, io.Discard
					err = cmd.Run()
					f.Close()
					if err != nil {
						b.Fatalf("diagrelay %v: %v", args, err)
					}
					cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
				}
				b.ReportMetric(cpu*1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
