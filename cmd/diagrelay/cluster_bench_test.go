package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/natstest"
	"github.com/diagrelay/diagrelay/internal/servetest"
)

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
