package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/servetest"
)

// procKB reads a field such as VmRSS or VmHWM (peak RSS) of pid, in KiB.
func procKB(t testing.TB, pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return n
		}
	}
	return 0
}

// helloLatency is how long a fresh child's hello and probe take.
func helloLatency(t testing.TB, s *server, token string) time.Duration {
	begin := time.Now()
	c, err := net.DialTimeout("unix", s.socket, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"token":%q}}`+"\n", token)
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("hello: %q, %v", line, err)
	}
	return time.Since(begin)
}

// The memory of the real serve process under hostile connections: 16 peers
// without a token that send requests with 60 KB ids and never read,
// and 10,000 connections that never say hello. Run it once:
//
//	go test -run NONE -bench ServeRSS -benchtime 1x ./cmd/diagrelay/
func BenchmarkServeRSS(b *testing.B) {
	b.Run("non-reading=16", func(b *testing.B) {
		s := startServer(b, "", "")
		tok, _ := s.open("/root/ok")
		pid := s.Cmd.Process.Pid
		idle := procKB(b, pid, "VmRSS")
		frame := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"diagnostic.probe"}`+"\n", strings.Repeat("i", 60000)))
		var wg sync.WaitGroup
		stop := time.Now().Add(3 * time.Second)
		for range 16 {
			c, err := net.Dial("unix", s.socket)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					c.SetWriteDeadline(stop)
					if _, err := c.Write(frame); err != nil {
						return
					}
				}
			}()
		}
		time.Sleep(time.Second)
		d := helloLatency(b, s, tok)
		wg.Wait()
		b.ReportMetric(idle/1024, "idle-RSS-MB")
		b.ReportMetric(procKB(b, pid, "VmHWM")/1024, "peak-RSS-MB")
		b.ReportMetric(float64(d.Microseconds())/1000, "hello-ms")
	})
	b.Run("pending=10000", func(b *testing.B) {
		s := startServer(b, "", "")
		tok, _ := s.open("/root/ok")
		pid := s.Cmd.Process.Pid
		conns := make([]net.Conn, 0, 10000)
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for tries := 0; len(conns) < 10000; {
			c, err := net.Dial("unix", s.socket)
			if err != nil { // a full backlog: let serve accept
				if tries++; tries > 1000 {
					b.Fatalf("after %d connections: %v", len(conns), err)
				}
				time.Sleep(time.Millisecond)
				continue
			}
			conns = append(conns, c)
		}
		d := helloLatency(b, s, tok)
		time.Sleep(500 * time.Millisecond)
		b.ReportMetric(procKB(b, pid, "VmRSS")/1024, "RSS-MB")
		b.ReportMetric(procKB(b, pid, "VmHWM")/1024, "peak-RSS-MB")
		b.ReportMetric(float64(d.Microseconds())/1000, "hello-ms")
	})
}

// The memory of an idle edge beside an idle home and an idle plain serve,
// each the real binary (not this test binary, which embeds a NATS
// server), 2 s after start. Run it once:
//
//	go test -run NONE -bench IdleClusterRSS -benchtime 1x ./cmd/diagrelay/
func BenchmarkIdleClusterRSS(b *testing.B) {
	ns := natstest.Start(b)
	dir := shortTempDir(b)
	bin, err := servetest.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	plain := servetest.Start(b, bin, "", "")
	home := servetest.Start(b, bin, filepath.Join(dir, "home"), filepath.Join(dir, "h.sock"), "--cluster", ns.URL, "--nats-monitor", ns.MonitorURL)
	edge := startEdgeWith(b, bin, ns, filepath.Join(dir, "edge"), filepath.Join(dir, "e.sock"))
	time.Sleep(2 * time.Second)
	b.ReportMetric(procKB(b, plain.Cmd.Process.Pid, "VmRSS")/1024, "serve-RSS-MB")
	b.ReportMetric(procKB(b, home.Cmd.Process.Pid, "VmRSS")/1024, "home-RSS-MB")
	b.ReportMetric(procKB(b, edge.cmd.Process.Pid, "VmRSS")/1024, "edge-RSS-MB")
	b.ReportMetric(0, "ns/op")
}
