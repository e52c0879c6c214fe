package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/servetest"
)

// maxStartupBytes bounds what every diagrelay process allocates before
// main runs (package initializers): data built there, such as the demo's
// 10 MiB hostile message, would cost every process, not only the demo.
const maxStartupBytes = 1 << 20

// initAllocs runs diagrelay args with GODEBUG=inittrace=1 and returns the
// bytes each package's initializer allocated.
func initAllocs(t *testing.T, args ...string) map[string]int {
	t.Helper()
	cmd := diagrelayCmd(context.Background(), t, []string{"GODEBUG=inittrace=1"}, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("diagrelay %v: %v\n%s", args, err, stderr.String())
	}
	// "init PKG @0.5 ms, 0.01 ms clock, 1234 bytes, 5 allocs"
	bytes := map[string]int{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		rest, ok := strings.CutPrefix(line, "init ")
		if !ok {
			continue
		}
		pkg, _, _ := strings.Cut(rest, " ")
		fields := strings.Split(rest, ", ")
		if len(fields) < 3 {
			t.Fatalf("inittrace line %q", line)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(fields[2], " bytes"))
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		bytes[pkg] += n
	}
	if len(bytes) == 0 {
		t.Fatalf("no inittrace output:\n%s", stderr.String())
	}
	return bytes
}

// A diagrelay process allocates at most maxStartupBytes before main, and
// none of this module's packages more than 16 KiB: start-up does no work
// beyond constants (the demo builds its payloads when it runs). The test
// binary runs as diagrelay (see TestMain), so the test packages' own
// initializers count too.
func TestStartupAllocations(t *testing.T) {
	bytes := initAllocs(t, "--version")
	total := 0
	var pkgs []string
	for pkg, n := range bytes {
		total += n
		pkgs = append(pkgs, pkg)
	}
	slices.SortFunc(pkgs, func(a, b string) int { return bytes[b] - bytes[a] })
	top := pkgs[:min(5, len(pkgs))]
	var show []string
	for _, p := range top {
		show = append(show, fmt.Sprintf("%s %d", p, bytes[p]))
	}
	t.Logf("start-up allocates %d bytes in %d packages; most: %s", total, len(pkgs), strings.Join(show, ", "))
	if total > maxStartupBytes {
		t.Errorf("start-up allocates %d bytes, over %d; most: %s", total, maxStartupBytes, strings.Join(show, ", "))
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p, "github.com/diagrelay/diagrelay") && bytes[p] > 16<<10 {
			t.Errorf("package %s allocates %d bytes at start-up: build it when it is used", p, bytes[p])
		}
	}
}

// realBinary is the diagrelay binary a benchmark runs: DIAGRELAY_BIN (another
// build to compare, such as an older one), or this one built as the README
// installs it (CGO_ENABLED=0).
func realBinary(b *testing.B) string {
	if bin := os.Getenv("DIAGRELAY_BIN"); bin != "" {
		return bin
	}
	return buildBinary(b, "0")
}

// buildBinary builds this command with CGO_ENABLED=cgo.
func buildBinary(b *testing.B, cgo string) string {
	bin := filepath.Join(b.TempDir(), "diagrelay")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkStartupRSS measures the memory of the real diagrelay binary
// (built by the benchmark as the README installs it and the npm packages
// ship it, with CGO_ENABLED=0, not this test binary, whose test code adds
// to its size; DIAGRELAY_BIN names another): the peak RSS of `diagrelay
// --version`, the RSS of an idle `serve`, and what serve's RSS grows by
// per open thread (runtime.open, never connected) and per connected child
// (a socket connection that said hello). version-cgo is --version of a
// plain `go build` where cgo is on, linked to the C library. Run it once:
//
//	go test -run NONE -bench StartupRSS -benchtime 1x ./cmd/diagrelay/
func BenchmarkStartupRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	bin := realBinary(b)
	version := func(bin string) func(b *testing.B) {
		return func(b *testing.B) {
			// GNU time reports the peak RSS of the process it runs. A Go
			// process cannot: the kernel's rusage of a child it starts
			// counts the parent's own RSS, shared with the child until its
			// exec.
			gnuTime, err := exec.LookPath("/usr/bin/time")
			if err != nil {
				b.Skip("needs GNU time at /usr/bin/time")
			}
			var peak float64
			for range b.N {
				out, err := exec.Command(gnuTime, "-f", "maxrss %M", bin, "--version").CombinedOutput()
				_, kb, ok := strings.Cut(string(out), "maxrss ")
				n, perr := strconv.ParseFloat(strings.TrimSpace(kb), 64)
				if err != nil || !ok || perr != nil {
					b.Fatalf("time diagrelay --version: %v, %q", err, out)
				}
				peak = max(peak, n)
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(peak/1024, "peak-RSS-MB")
		}
	}
	b.Run("version", version(bin))
	if os.Getenv("DIAGRELAY_BIN") == "" {
		b.Run("version-cgo", func(b *testing.B) {
			if _, err := exec.LookPath("gcc"); err != nil {
				b.Skip("cgo needs a C compiler")
			}
			version(buildBinary(b, "1"))(b)
		})
	}
	b.Run("serve", func(b *testing.B) {
		const threads, children = 1000, 200
		command := func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }
		srv := servetest.Start(b, command, "", "")
		s := &server{Server: srv, t: b, data: srv.Data, socket: srv.Socket, host: rpcConn{srv.Host}}
		pid := s.Cmd.Process.Pid
		time.Sleep(200 * time.Millisecond) // let start-up garbage go
		idle := procKB(b, pid, "VmRSS")
		tokens := make([]string, children)
		for i := range threads {
			tok, _ := s.open(fmt.Sprintf("/root/t%d", i))
			if i < children {
				tokens[i] = tok
			}
		}
		withThreads := procKB(b, pid, "VmRSS")
		for _, tok := range tokens {
			s.dial(tok) // closed at cleanup
		}
		withChildren := procKB(b, pid, "VmRSS")
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(idle/1024, "idle-RSS-MB")
		b.ReportMetric((withThreads-idle)/threads, "KB/thread")
		b.ReportMetric((withChildren-withThreads)/children, "KB/child")
		b.ReportMetric(procKB(b, pid, "VmHWM")/1024, "peak-RSS-MB")
	})
}
