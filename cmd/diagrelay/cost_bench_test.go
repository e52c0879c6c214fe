package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/internal/servetest"
	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/mailbox"
)

// The cost of a report, measured black-box (docs/performance.md, "The cost
// of a report"): the real binary as `serve`, the load from this process
// over its socket and its stdio host, the service's CPU read from
// /proc/PID/stat. A child's life is one runtime: the host opens it, the
// child dials, says hello and sends reportsPerRuntime distinct reports,
// each waiting for its reply (so each is admitted and durable: the window
// admits 5 in 10 s), and hangs up. DIAGRELAY_PROFILE=PREFIX in this
// process's environment makes each serve write PREFIX.cpu and
// PREFIX.allocs (cmd/diagrelay/profile.go); run one sub-benchmark then.

const reportsPerRuntime = 5

// startReal starts the real binary as serve with its mailbox in data.
func startReal(b *testing.B, data string, extra ...string) *servetest.Server {
	bin := costBinary(b)
	command := func(args ...string) *exec.Cmd { return exec.Command(bin, args...) }
	return servetest.Start(b, command, data, filepath.Join(testutil.ShortTempDir(b), "s"), extra...)
}

// costBin is the binary the cost benchmarks run, built once per test
// process (DIAGRELAY_BIN names another); TestMain removes it.
var costBin struct {
	once      sync.Once
	dir, path string
	err       error
}

func costBinary(b *testing.B) string {
	if bin := os.Getenv("DIAGRELAY_BIN"); bin != "" {
		return bin
	}
	costBin.once.Do(func() {
		if costBin.dir, costBin.err = os.MkdirTemp("", "diagrelay-cost"); costBin.err != nil {
			return
		}
		costBin.path = filepath.Join(costBin.dir, "diagrelay")
		cmd := exec.Command("go", "build", "-o", costBin.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			costBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if costBin.err != nil {
		b.Fatal(costBin.err)
	}
	return costBin.path
}

func removeCostBinary() {
	if costBin.dir != "" {
		os.RemoveAll(costBin.dir)
	}
}

// cpuTime is the user + system time of process pid so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// The fields after the command's closing parenthesis, from state (3).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const userHZ = 100 // USER_HZ: fixed at 100 on Linux for every architecture Go runs on
	return time.Duration(utime+stime) * time.Second / userHZ
}

// phase is what one round of load did.
type phase struct {
	reports int
	took    time.Duration
	cpu     time.Duration   // the service's
	rtts    []time.Duration // each report's round trip
	opens   []time.Duration // each runtime.open's round trip at the host
}

func (p *phase) add(q phase) {
	p.reports += q.reports
	p.took += q.took
	p.cpu += q.cpu
	p.rtts = append(p.rtts, q.rtts...)
	p.opens = append(p.opens, q.opens...)
}

func (p phase) rate() float64         { return float64(p.reports) / p.took.Seconds() }
func (p phase) cpuPerReport() float64 { return float64(p.cpu.Microseconds()) / float64(p.reports) }

// runPhase runs children children at once, each living lives runtimes in
// turn (open, dial, hello, reports, hang up), the runtimes named under
// /root/TAG-cI (one parent per child).
func runPhase(b *testing.B, s *servetest.Server, tag string, children, lives int) phase {
	rtts := make([][]time.Duration, children)
	opens := make([][]time.Duration, children)
	pid := s.Cmd.Process.Pid
	cpu0 := cpuTime(b, pid)
	begin := time.Now()
	var wg sync.WaitGroup
	for i := range children {
		wg.Go(func() {
			for life := range lives {
				path := fmt.Sprintf("/root/%s-c%d/r%d", tag, i, life)
				t0 := time.Now()
				tok, _, err := servetest.OpenRuntime(s.Host, path)
				opens[i] = append(opens[i], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
				if err := childLife(s.Socket, tok, path, &rtts[i]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	p := phase{took: time.Since(begin), cpu: cpuTime(b, pid) - cpu0, rtts: slices.Concat(rtts...), opens: slices.Concat(opens...)}
	p.reports = len(p.rtts)
	return p
}

// childLife is one child process's part: dial, hello with tok, then each
// report and its reply, appending each report's round trip to rtts.
func childLife(socket, tok, path string, rtts *[]time.Duration) error {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(servetest.ReplyTimeout))
	r := bufio.NewReader(c)
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
	if line, err := r.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		return fmt.Errorf("hello: %q %v", line, err)
	}
	for k := range reportsPerRuntime {
		frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","source":"build","message":"step %d of %s: cache miss for module %d, fetched in %d ms"}}`+"\n",
			k+1, k, path, k*7919%1000, 10+k)
		begin := time.Now()
		if _, err := c.Write(frame); err != nil {
			return err
		}
		line, err := r.ReadSlice('\n')
		*rtts = append(*rtts, time.Since(begin))
		if err != nil || !bytes.Contains(line, []byte(`"result":{}`)) {
			return fmt.Errorf("report: %q %v", line, err)
		}
	}
	return nil
}

// wantStored stops s cleanly and checks that its mailbox holds want
// messages, none damaged: every report was admitted and stored.
func wantStored(b *testing.B, s *servetest.Server, want int) {
	s.Host.Close() // the stdio host going away stops serve cleanly
	if code, sig := s.Wait(); code != 0 {
		b.Fatalf("serve exited %d (%v); stderr:\n%s", code, sig, s.Stderr.String())
	}
	rep, err := mailbox.Check(filepath.Join(s.Data, "mailbox.db"))
	if err != nil {
		b.Fatal(err)
	}
	got := 0
	for _, r := range rep.Recipients {
		got += r.Unacknowledged
		if r.Damaged != 0 {
			b.Errorf("%s: %d damaged", r.Recipient, r.Damaged)
		}
	}
	if got != want {
		b.Fatalf("mailbox holds %d messages, want %d (every report admitted)", got, want)
	}
}

func quantile(d []time.Duration, q float64) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[int(q*float64(len(d)-1))]) / 1e6
}

// costData is a fresh data directory on tmpfs (/dev/shm) or on the disk.
func costData(b *testing.B, kind string) string {
	if kind == "disk" {
		return filepath.Join(b.TempDir(), "data")
	}
	d, err := os.MkdirTemp("/dev/shm", "diagrelay-cost")
	if err != nil {
		b.Skip("no tmpfs at /dev/shm:", err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "data")
}

// BenchmarkServeCost is the first two goals of docs/performance.md, "The
// cost of a report": the service's CPU per
// admitted durable report with 64 children (each runtime's open and hello
// included), and 512 children against 64 in alternating phases of 12,800
// reports each on one serve (which comes first alternating too), with
// --max-pending 1024 so that 512 children may wait for their hello. It
// reports CPU µs per report, reports/s, the 512/64 rate ratio and each
// phase's p50 round trip beside Little's law (children / rate: the
// mean time a child's report is in the service, opens and dials
// included, so the p50 of a report alone is below it).
//
//	go test -run '^$' -bench 'ServeCost/dir=tmpfs' -benchtime 3x ./cmd/diagrelay/
func BenchmarkServeCost(b *testing.B) {
	for _, dir := range []string{"tmpfs", "disk"} {
		b.Run("dir="+dir, func(b *testing.B) {
			// 512 children dialing at once are more than the default 64
			// connections that may wait for their hello.
			s := startReal(b, costData(b, dir), "--max-pending", "1024")
			var p [2]phase // 64, 512
			sizes := [2][2]int{{64, 40}, {512, 5}}
			round := 0
			for b.Loop() {
				for k := range 2 {
					m := (round + k) % 2
					p[m].add(runPhase(b, s, fmt.Sprintf("p%d-%d", round, k), sizes[m][0], sizes[m][1]))
				}
				round++
			}
			wantStored(b, s, p[0].reports+p[1].reports)
			b.ReportMetric(0, "ns/op")
			for m, n := range []string{"64", "512"} {
				b.ReportMetric(p[m].cpuPerReport(), "cpu-µs/report-"+n)
				b.ReportMetric(p[m].rate(), "reports/s-"+n)
				b.ReportMetric(quantile(p[m].rtts, 0.5), "p50-ms-"+n)
				b.ReportMetric(float64(sizes[m][0])/p[m].rate()*1000, "little-ms-"+n)
				b.ReportMetric(quantile(p[m].opens, 0.5), "open-p50-ms-"+n)
			}
			b.ReportMetric(p[1].rate()/p[0].rate(), "512/64")
		})
	}
}

// BenchmarkServeOneChild is the third goal of docs/performance.md, "The
// cost of a report": one child in a closed loop
// (open, hello, 5 reports, each waiting for its reply), its admitted
// reports/s as a ratio to the disk's fsyncs/s measured on the same file
// system in the same run, before and after the load (their mean).
//
//	go test -run '^$' -bench ServeOneChild -benchtime 3x ./cmd/diagrelay/
func BenchmarkServeOneChild(b *testing.B) {
	data := costData(b, "disk")
	s := startReal(b, data)
	probeDir := b.TempDir()
	var load phase
	var fsyncs float64
	for b.Loop() {
		fsyncs += testutil.FsyncRate(b, probeDir, 500) / 2
		load.add(runPhase(b, s, fmt.Sprintf("one%d", load.reports), 1, 100))
		fsyncs += testutil.FsyncRate(b, probeDir, 500) / 2
	}
	wantStored(b, s, load.reports)
	fsyncs /= float64(b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fsyncs, "fsyncs/s")
	b.ReportMetric(load.rate(), "reports/s")
	b.ReportMetric(load.rate()/fsyncs, "reports/fsync")
	b.ReportMetric(load.cpuPerReport(), "cpu-µs/report")
	b.ReportMetric(quantile(load.rtts, 0.5), "p50-ms")
	b.ReportMetric(quantile(load.opens, 0.5), "open-p50-ms")
}

// latChildren children in closed loops, each living latLives runtimes a
// round: ServeLatency8's and FloorLatency8's load.
const latChildren, latLives = 8, 25

// BenchmarkServeLatency8 is the fourth goal of docs/performance.md, "The
// cost of a report": 8 children in closed
// loops, the p99 of a report's round trip against the p99 of the disk's
// own two flushes in a row (testutil.CommitPairs, the floor under a
// bbolt commit), measured in the same run on the same file system, after
// a round that is not measured.
//
//	go test -run '^$' -bench ServeLatency8 -benchtime 3x ./cmd/diagrelay/
func BenchmarkServeLatency8(b *testing.B) {
	s := startReal(b, costData(b, "disk"))
	probeDir := b.TempDir()
	// Unmeasured: the first reports after serve starts (its first commits,
	// its threads being made) were 8 of the 12 slowest of 1,200.
	warm := runPhase(b, s, "warm", latChildren, 10)
	var load phase
	var pairs []time.Duration
	for b.Loop() {
		pairs = append(pairs, testutil.CommitPairs(b, probeDir, 200)...)
		load.add(runPhase(b, s, fmt.Sprintf("lat%d", load.reports), latChildren, latLives))
		pairs = append(pairs, testutil.CommitPairs(b, probeDir, 200)...)
	}
	wantStored(b, s, warm.reports+load.reports)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(quantile(load.rtts, 0.5), "p50-ms")
	b.ReportMetric(quantile(load.rtts, 0.99), "p99-ms")
	b.ReportMetric(quantile(pairs, 0.99), "disk-p99-ms")
	b.ReportMetric(quantile(load.rtts, 0.99)/quantile(pairs, 0.99), "p99/disk-p99")
	b.ReportMetric(float64(load.reports), "reports")
}

// BenchmarkServeScaleRSS is the sixth goal of docs/performance.md, "The
// cost of a report": the RSS of serve holding
// 10,000 open threads (100 parents), each with its child connected: said
// hello and sent one admitted report.
//
//	go test -run '^$' -bench ServeScaleRSS -benchtime 1x ./cmd/diagrelay/
func BenchmarkServeScaleRSS(b *testing.B) {
	const n, workers = 10000, 16
	for b.Loop() {
		s := startReal(b, costData(b, "tmpfs"))
		pid := s.Cmd.Process.Pid
		idle := procKB(b, pid, "VmRSS")
		conns := make([][]net.Conn, workers)
		defer func() {
			for _, cs := range conns {
				for _, c := range cs {
					c.Close()
				}
			}
		}()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					path := fmt.Sprintf("/root/p%d/c%d", i%100, i)
					tok, _, err := servetest.OpenRuntime(s.Host, path)
					if err != nil {
						b.Error(err)
						return
					}
					c, err := net.Dial("unix", s.Socket)
					if err != nil {
						b.Error(err)
						return
					}
					conns[w] = append(conns[w], c)
					r := bufio.NewReader(c)
					fmt.Fprintf(c, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n"+
						`{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"info","message":"child %d is up"}}`+"\n", tok, i)
					for range 2 {
						if line, err := r.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
							b.Errorf("child %d: %q %v", i, line, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		if os.Getenv(serve.EnvProfile) != "" {
			s.Cmd.Process.Signal(syscall.SIGUSR1) // PREFIX.heap and PREFIX.mem
			time.Sleep(time.Second)
		}
		b.ReportMetric(idle/1024, "idle-RSS-MB")
		b.ReportMetric(procKB(b, pid, "VmRSS")/1024, "RSS-MB")
		time.Sleep(5 * time.Second) // serve returns a churn's memory a second after it (service/memreturn.go)
		b.ReportMetric(procKB(b, pid, "VmRSS")/1024, "RSS-MB-after-5s")
		b.ReportMetric(procKB(b, pid, "VmHWM")/1024, "peak-RSS-MB")
	}
}
