package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/natstest"
)

// killOrder is the order in which outside testing killed a 3-node
// cluster's processes and lost an acknowledged report (docs/cluster.md):
// the home, a node, an edge, in turn, 12 rounds.
var killOrder = []string{"home", "n1", "e1", "home", "n2", "e2", "home", "n3", "e1", "home", "n1", "e2"}

// TestClusterKillOrder: a home and two edges as diagrelay serve processes
// on a real 3-node JetStream (each node a process of its own, stream and
// bucket at 3 replicas, synced on every write), children flooding admitted
// reports through both edges, while killOrder kills each process with
// SIGKILL and starts it again; afterwards every acknowledged report is in
// the home's mailbox exactly once. DIAGRELAY_KILL_RUNS=N repeats it N times;
// DIAGRELAY_KILL_ORDER=who,who,… runs another order.
func TestClusterKillOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of processes")
	}
	runs := 1
	if s := os.Getenv("DIAGRELAY_KILL_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("DIAGRELAY_KILL_RUNS=%q", s)
		}
		runs = n
	}
	if s := os.Getenv("DIAGRELAY_KILL_ORDER"); s != "" { // e.g. n1,n2,n3,n1,n2,n3: the nodes alone
		killOrder = strings.Split(s, ",")
		for _, who := range killOrder {
			if !slices.Contains([]string{"home", "n1", "n2", "n3", "e1", "e2"}, who) {
				t.Fatalf("DIAGRELAY_KILL_ORDER: %q is not home, n1-n3, e1 or e2", who)
			}
		}
	}
	for run := 1; run <= runs; run++ {
		t.Run(fmt.Sprintf("run%d", run), clusterKillRun)
	}
}

func clusterKillRun(t *testing.T) {
	start := time.Now()
	nc := natstest.StartCluster(t, 3)
	t.Logf("cluster up in %v", time.Since(start).Round(100*time.Millisecond))
	dir := shortTempDir(t)
	homeData, homeSock := filepath.Join(dir, "home"), filepath.Join(dir, "h.sock")
	homeFlags := []string{"--cluster", nc.URL, "--nats-monitor", strings.Join(nc.Monitors, ","), "--nats-replicas", "3"}
	edgeNames := []string{"e1", "e2"}
	edgeData := func(i int) string { return filepath.Join(dir, edgeNames[i]) }
	edgeSock := func(i int) string { return filepath.Join(dir, edgeNames[i]+".sock") }
	startEdge := func(i int) *edgeProc {
		return startEdgeArgs(t, func(args ...string) *exec.Cmd { return diagrelayCmd(t.Context(), t, nil, args...) },
			edgeData(i), edgeSock(i), "--join", nc.URL, "--nats-monitor", strings.Join(nc.Monitors, ","), "--name", edgeNames[i])
	}

	home := startServer(t, homeData, homeSock, homeFlags...)
	edges := []*edgeProc{startEdge(0), startEdge(1)}
	f := &clusterFlood{t: t, edgeSocks: []string{edgeSock(0), edgeSock(1)}, host: home.host.Conn,
		tokens: map[string]string{}, acked: map[string]bool{}, sent: map[string]bool{}, seen: map[string]int{}}
	waits, refusals := 0, 0 // the homes' log lines (at most 10 a second are logged)
	var wg sync.WaitGroup
	for n := range clusterWorkers {
		wg.Add(1)
		go f.worker(n, &wg)
	}
	f.waitAcked(t, 150, "before the first kill")
	for round, who := range killOrder {
		t.Logf("round %d at %v: killing %s (%d acknowledged)", round+1, time.Since(start).Round(100*time.Millisecond), who, f.nAcked.Load())
		switch who {
		case "home":
			f.setHost(nil)
			home.kill()
			home.wait()
			waits, refusals = waits+strings.Count(home.Stderr.String(), "waits for the bucket"), refusals+strings.Count(home.Stderr.String(), "message refused")
			home = startServer(t, homeData, homeSock, homeFlags...)
			f.setHost(home.host.Conn)
		case "e1", "e2":
			i := int(who[1] - '1')
			edges[i].kill()
			edges[i] = startEdge(i) // the same edge: its name is in its data
		default:
			nc.Restart(int(who[1] - '1'))
		}
		f.waitAcked(t, 150, "after "+who+" came back")
	}
	t.Logf("rounds done at %v", time.Since(start).Round(100*time.Millisecond))
	f.stop.Store(true)
	wg.Wait()
	f.drain(t, home, func() {})
	waits, refusals = waits+strings.Count(home.Stderr.String(), "waits for the bucket"), refusals+strings.Count(home.Stderr.String(), "message refused")
	for _, e := range edges {
		e.kill()
	}
	missing, twice, unknown := f.check(t, homeData)
	t.Logf("kill order run: %d acknowledged, %d missing, %d twice, %d never sent, in %v; the home logged %d waits for the bucket and %d refusals",
		f.nAcked.Load(), missing, twice, unknown, time.Since(start).Round(time.Second), waits, refusals)
	if missing > 0 || twice > 0 || unknown > 0 {
		t.Fatalf("%d acknowledged reports missing, %d stored twice, %d never sent", missing, twice, unknown)
	}
}
