package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
