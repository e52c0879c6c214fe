// Command flood attacks a real `diagrelay serve` over its socket, one
// flood style at a time, and measures what a well-behaved child and the
// host feel, side by side with an idle baseline taken in the same run on
// the same serve. It is the harness behind docs/hostile-connections.md, "Floods
// of every kind"; from the repository root:
//
//	go build -o /tmp/diagrelay ./cmd/diagrelay
//	go run ./testdata/flood -bin /tmp/diagrelay            # every style
//	go run ./testdata/flood -bin /tmp/diagrelay -styles probes,non-readers
//
// For each style it starts a fresh serve (the harness is its host on
// stdio), opens the flooders' runtimes, and measures N of each, idle and
// then while a separate process floods: a child's admitted
// diagnostic.report (a fresh runtime each, so the gate admits it), the
// host's thread.status, and runtime.open followed by runtime.close. Under
// connect churn it also times 26 new children's hellos. After the flood
// leaves it waits for serve to be idle (under 5 % of a core, its
// descriptors back) and samples its RSS. Loopback only, bounded in time.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "diagrelay", "the diagrelay binary to attack")
	names := flag.String("styles", "all", "comma-separated flood styles, or all")
	children := flag.Int("children", 64, "flooding children")
	n := flag.Int("n", 300, "measured round trips of each kind, idle and loaded")
	settle := flag.Duration("settle", 10*time.Second, "RSS is read this long after the flood leaves (0: not read)")
	serveFlags := flag.String("serve-flags", "", "extra flags for serve, space-separated")
	flag.StringVar(&serveStderr, "serve-stderr", "", "append serve's standard error to this file")
	role := flag.String("flooder", "", "internal: run as the flooding process of this style")
	socket := flag.String("socket", "", "internal: the flooder's socket")
	flag.Parse()

	if *role != "" {
		st, _ := styleNamed(*role)
		var toks []string
		if t := os.Getenv("FLOOD_TOKENS"); t != "" {
			toks = strings.Split(t, ",")
		}
		flooder(st, *socket, toks)
		return
	}
	var run []style
	for _, s := range styles {
		if *names == "all" || slices.Contains(strings.Split(*names, ","), s.name) {
			run = append(run, s)
		}
	}
	if len(run) == 0 {
		fmt.Fprintln(os.Stderr, "flood: no such style; styles:", styleList())
		os.Exit(2)
	}
	fmt.Printf("flood: %s, %d children, n=%d, load average at start %s, %d CPUs\n\n", *bin, *children, *n, loadavg(), cpus())
	fmt.Println("| style | child report p99 idle → loaded (×) | host thread.status p99 (×) | host open+close p99 (×) | flood frames/s written (answered) | serve peak RSS | peak fds (base) | idle after | CPU after | RSS after settle (idle warm; cold) | anonymous after (idle warm) | new hellos |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	failed := false
	for _, st := range run {
		r, err := attack(*bin, st, *children, *n, *settle, strings.Fields(*serveFlags))
		if err != nil {
			fmt.Printf("| %s | failed: %v |\n", st.name, err)
			failed = true
			continue
		}
		fmt.Println(r)
	}
	fmt.Printf("\nload average at end %s\n", loadavg())
	if failed {
		os.Exit(1)
	}
}

func styleList() string {
	var s []string
	for _, st := range styles {
		s = append(s, st.name)
	}
	return strings.Join(s, ", ")
}

func cpus() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// round is one measurement: n of each kind.
type round struct{ report, status, openClose []time.Duration }

// measure runs the child's reports and the host's calls at once.
func measure(s *server, tokens []string, n int, tag string) (round, error) {
	var r round
	var wg sync.WaitGroup
	var childErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ch, err := dialChild(s.socket, 30*time.Second)
		if err != nil {
			childErr = err
			return
		}
		defer ch.c.Close()
		for i := range n {
			if err := ch.roundTrip(helloFrame(tokens[i]), `"result"`, 30*time.Second); err != nil {
				childErr = fmt.Errorf("hello %d: %w", i, err)
				return
			}
			begin := time.Now()
			f := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","message":"good %s %d"}}`+"\n", tag, i)
			if err := ch.roundTrip(f, `"result":{}`, 30*time.Second); err != nil {
				childErr = fmt.Errorf("report %d: %w", i, err)
				return
			}
			r.report = append(r.report, time.Since(begin))
		}
	}()
	var hostErr error
	for i := range n {
		begin := time.Now()
		if _, err := s.call("thread.status", map[string]string{"path": "/root/flood/f0"}); err != nil {
			hostErr = err
			break
		}
		r.status = append(r.status, time.Since(begin))
		begin = time.Now()
		p := fmt.Sprintf("/root/oc/%s%d", tag, i)
		if _, err := s.open(p); err != nil {
			hostErr = err
			break
		}
		if _, err := s.call("runtime.close", map[string]string{"path": p}); err != nil {
			hostErr = err
			break
		}
		r.openClose = append(r.openClose, time.Since(begin))
	}
	wg.Wait()
	if childErr != nil {
		return r, fmt.Errorf("good child: %w", childErr)
	}
	return r, hostErr
}

func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(0.99*float64(len(s)-1))]
}

func ratio(idle, loaded []time.Duration) string {
	a, b := p99(idle), p99(loaded)
	return fmt.Sprintf("%s → %s (%.1f×)", ms(a), ms(b), float64(b)/float64(a))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// attack runs one style against a fresh serve and returns its table row.
func attack(bin string, st style, children, n int, settle time.Duration, extra []string) (string, error) {
	s, err := startServe(bin, extra)
	if err != nil {
		return "", err
	}
	defer s.stop()
	var floodToks []string
	for i := range children {
		t, err := s.open(fmt.Sprintf("/root/flood/f%d", i))
		if err != nil {
			return "", err
		}
		floodToks = append(floodToks, t)
	}
	good := make([]string, 2*n+26+1) // the last for the warm-up
	for i := range good {
		if good[i], err = s.open(fmt.Sprintf("/root/good/g%d", i)); err != nil {
			return "", err
		}
	}
	time.Sleep(200 * time.Millisecond)
	cold := s.proc.memory()
	if err := warmUp(s, good[len(good)-1]); err != nil {
		return "", fmt.Errorf("warm-up: %w", err)
	}
	baseFDs, warm := s.proc.fds(), s.proc.memory()
	idle, err := measure(s, good[:n], n, "idle")
	if err != nil {
		return "", fmt.Errorf("idle: %w", err)
	}

	self, _ := os.Executable()
	fl := exec.Command(self, "-flooder", st.name, "-socket", s.socket)
	fl.Env = append(os.Environ(), "FLOOD_TOKENS="+strings.Join(floodToks, ","))
	fl.Stderr = os.Stderr
	in, _ := fl.StdinPipe()
	outPipe, _ := fl.StdoutPipe()
	if err := fl.Start(); err != nil {
		return "", err
	}
	out := newLineReader(outPipe)
	count := func() (written, answered int64) {
		fmt.Fprintln(in, "count")
		fmt.Sscan(out.line(), &written, &answered)
		return
	}
	smp := startSampler(s.proc, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // every flooder connected and at its pace
	w0, a0 := count()
	t0 := time.Now()
	loaded, err := measure(s, good[n:2*n], n, "loaded")
	hellos := "-"
	if err == nil && st.churn {
		hellos = newHellos(s, good[2*n:2*n+26])
	}
	w1, a1 := count()
	secs := time.Since(t0).Seconds()
	rate := fmt.Sprintf("%.0f (%.0f)", float64(w1-w0)/secs, float64(a1-a0)/secs)
	in.Close()
	fl.Wait()
	left := time.Now()
	if err != nil {
		smp.peaks()
		return "", fmt.Errorf("loaded: %w", err)
	}
	took, spent, ok := untilIdle(s.proc, baseFDs, 4, 10*time.Second)
	idleAfter := fmt.Sprintf("%.1f s", took.Seconds())
	if !ok {
		idleAfter = "not in " + idleAfter
	}
	peakRSS, peakFDs := smp.peaks()
	after := "- | -"
	if settle > 0 {
		time.Sleep(time.Until(left.Add(settle)))
		m := s.proc.memory()
		after = fmt.Sprintf("%s (%s; %s) | %s (%s)", mib(m.rss), mib(warm.rss), mib(cold.rss), mib(m.anon), mib(warm.anon))
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %d (%d) | %s | %.2f s | %s | %s |",
		st.name, ratio(idle.report, loaded.report), ratio(idle.status, loaded.status), ratio(idle.openClose, loaded.openClose),
		rate, mib(peakRSS), peakFDs, baseFDs, idleAfter, spent.Seconds(), after, hellos), nil
}

func mib(kib int) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

// newHellos times 26 new children, one every 200 ms, each dialing (again
// on EAGAIN, for up to 1 s) and saying hello with its own token, and says
// how many took over 1 s or failed, and the slowest.
func newHellos(s *server, tokens []string) string {
	var slow, failed int
	var worst time.Duration
	for _, tok := range tokens {
		begin := time.Now()
		ch, err := dialChild(s.socket, 5*time.Second)
		// A full listen backlog refuses a Unix connect with EAGAIN at
		// once; a child tries again, as client code must.
		for err != nil && errors.Is(err, syscall.EAGAIN) && time.Since(begin) < time.Second {
			time.Sleep(time.Millisecond)
			ch, err = dialChild(s.socket, 5*time.Second)
		}
		if err == nil {
			err = ch.roundTrip(helloFrame(tok), `"result"`, 5*time.Second)
			ch.c.Close()
		}
		d := time.Since(begin)
		switch {
		case err != nil:
			failed++
		case d > time.Second:
			slow++
		}
		worst = max(worst, d)
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Sprintf("%d/%d failed, %d over 1 s, slowest %s", failed, len(tokens), slow, ms(worst))
}
