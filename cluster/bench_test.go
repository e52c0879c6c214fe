package cluster

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/diagrelay/diagrelay/client"
	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/rpc"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/service"
)

// notifyWaiter is the home's host connection, matching each ui.notify to
// the report that caused it by the report's unique message.
type notifyWaiter struct {
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

func watchNotifies(b *testing.B, home *testHome) *notifyWaiter {
	nc, err := net.Dial("unix", home.sock)
	if err != nil {
		b.Fatal(err)
	}
	c := rpc.New(nc, nc, nc, rpc.Options{Timeout: 10 * time.Second, BlockNotifications: true})
	b.Cleanup(func() { c.Close() })
	if err := c.Call(wire.MethodHello, wire.HelloParams{Token: home.token}, nil); err != nil {
		b.Fatal(err)
	}
	w := &notifyWaiter{waiting: make(map[string]chan struct{})}
	go func() {
		for n := range c.Notifications() {
			var p struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(n.Params, &p) != nil {
				continue
			}
			_, msg, _ := strings.Cut(p.Message, ": ")
			w.mu.Lock()
			if ch := w.waiting[msg]; ch != nil {
				close(ch)
				delete(w.waiting, msg)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *notifyWaiter) expect(msg string) <-chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiting[msg] = ch
	w.mu.Unlock()
	return ch
}

// benchCluster is a home and an edge on one real JetStream, the home's
// notification limit lifted so every report is shown.
func benchCluster(b *testing.B) (*testHome, *testEdge, *notifyWaiter) {
	ns := natstest.Start(b)
	home := startHome(b, ns, func(c *service.Config) { c.NotifyRate, c.NotifyBurst = 1e9, 1e9 })
	edge := startEdge(b, ns, "bench")
	return home, edge, watchNotifies(b, home)
}

// BenchmarkNotifyLatency is one child's report to the home's ui.notify,
// one at a time: through the home's own socket (local) and through an
// edge (edge: JetStream's synced publish, then the home's consume and
// mailbox commit). Each 5 reports get a fresh generation, opened outside
// the timer, so every report is admitted. p50 and p99 are reported.
func BenchmarkNotifyLatency(b *testing.B) {
	home, edge, w := benchCluster(b)
	for _, path := range []struct{ name, sock string }{{"local", home.sock}, {"edge", edge.sock}} {
		b.Run(path.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			var c *rawChild
			for i := range b.N {
				if i%5 == 0 {
					b.StopTimer()
					c = openChild(b, home, path.sock, fmt.Sprintf("/root/%s%d", path.name, i))
					b.StartTimer()
				}
				msg := fmt.Sprintf("r%d %d", i, time.Now().UnixNano())
				done := w.expect(msg)
				t0 := time.Now()
				if err := c.report("warning", msg, ""); err != nil {
					b.Fatal(err)
				}
				<-done
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkNotifyThroughput is 8 children reporting at once, each 5
// reports a generation, until the home has shown every report: reports/s
// through the home's socket and through one edge.
func BenchmarkNotifyThroughput(b *testing.B) {
	home, edge, w := benchCluster(b)
	const children = 8
	for _, path := range []struct{ name, sock string }{{"local", home.sock}, {"edge", edge.sock}} {
		b.Run(path.name, func(b *testing.B) {
			b.StopTimer()
			per := (b.N + children - 1) / children
			kids := make([][]*rawChild, children)
			for k := range kids {
				for g := 0; g*5 < per; g++ {
					kids[k] = append(kids[k], openChild(b, home, path.sock, fmt.Sprintf("/root/t%s%dg%d", path.name, k, g)))
				}
			}
			var wg sync.WaitGroup
			start := time.Now()
			b.StartTimer()
			for k := range children {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						msg := fmt.Sprintf("t%d.%d %d", k, i, time.Now().UnixNano())
						done := w.expect(msg)
						if err := kids[k][i/5].report("warning", msg, ""); err != nil {
							b.Error(err)
							return
						}
						<-done
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*children)/time.Since(start).Seconds(), "reports/s")
		})
	}
}

func openChild(b *testing.B, home *testHome, sock, path string) *rawChild {
	rt, err := home.host.Open(path, client.OpenOptions{Parent: "/root"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := dialRaw(b, sock, rt.Token)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
