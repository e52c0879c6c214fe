package natstest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NodeEnv names the configuration file of a cluster node: a test binary
// whose TestMain calls NodeMain runs as that node instead of its tests,
// so that a test can kill a node with SIGKILL as a crash would.
const NodeEnv = "DIAGRELAY_TEST_NATS_NODE"

// NodeMain runs this process as a NATS node and exits, if NodeEnv is set;
// otherwise it returns at once. Call it first in TestMain.
func NodeMain() {
	conf := os.Getenv(NodeEnv)
	if conf == "" {
		return
	}
	o, err := server.ProcessConfigFile(conf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natstest node:", err)
		os.Exit(2)
	}
	o.NoSigs = true
	ns, err := server.NewServer(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natstest node:", err)
		os.Exit(2)
	}
	ns.Start()
	ns.WaitForShutdown()
	os.Exit(0)
}

// Cluster is a JetStream cluster of nodes on loopback, each a process of
// its own (the test binary again, through NodeMain), synced on every
// write, with its store in a directory that outlives its process.
type Cluster struct {
	t     testing.TB
	Nodes []*Node
	// URL lists every node's client URL, comma-separated, as a client
	// takes it; Monitors is each node's monitoring URL, in order.
	URL      string
	Monitors []string
}

// Node is one server of a Cluster.
type Node struct {
	Name, Conf, Dir string
	Monitor         string
	conf            string // the configuration but the end of its jetstream block
	cmd             *exec.Cmd
	done            chan struct{}
	stderr          *strings.Builder
}

// StartCluster starts n nodes and waits until every one is healthy
// (JetStream current, a meta leader elected); they are killed when the
// test ends. The nodes numbered in lazy (0 is the first) keep JetStream's
// default sync interval instead of syncing every write.
func StartCluster(t testing.TB, n int, lazy ...int) *Cluster {
	t.Helper()
	// A fresh cluster elects its meta leader in a second or two. One that
	// has not within 30 s (seen once in about 40 starts on a loaded
	// machine: a node stays 503 on /healthz) is killed and made again, on
	// new ports and in a new directory.
	var why string
	for range 2 {
		c := newCluster(t, n, lazy)
		if why = c.healthyWithin(30 * time.Second); why == "" {
			return c
		}
		t.Logf("natstest: a new cluster did not become healthy (%s); starting another", why)
		for i := range c.Nodes {
			c.Kill(i)
		}
	}
	t.Fatalf("natstest: no healthy cluster in two tries: %s", why)
	return nil
}

func newCluster(t testing.TB, n int, lazy []int) *Cluster {
	t.Helper()
	dir := t.TempDir()
	type ports struct{ client, http, route int }
	ps := make([]ports, n)
	var routes []string
	for i := range ps {
		ps[i] = ports{freePort(t), freePort(t), freePort(t)}
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ps[i].route))
	}
	c := &Cluster{t: t}
	var urls []string
	for i, p := range ps {
		nd := &Node{Name: fmt.Sprintf("n%d", i+1), Dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			Monitor: fmt.Sprintf("http://127.0.0.1:%d", p.http)}
		nd.Conf = nd.Dir + ".conf"
		nd.conf = fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
http: 127.0.0.1:%d
cluster { name: diagrelay, listen: 127.0.0.1:%d, routes: [%s] }
jetstream { store_dir: %q`, nd.Name, p.client, p.http, p.route, strings.Join(routes, ", "), nd.Dir)
		c.Nodes = append(c.Nodes, nd)
		c.SetLazy(i, slices.Contains(lazy, i))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", p.client))
		c.Monitors = append(c.Monitors, nd.Monitor)
	}
	c.URL = strings.Join(urls, ",")
	for i := range c.Nodes {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.Nodes {
			c.Kill(i)
		}
	})
	return c
}

// healthyWithin waits until every node is healthy, and says why not when
// d passed first.
func (c *Cluster) healthyWithin(d time.Duration) string {
	deadline := time.Now().Add(d)
	for i := range c.Nodes {
		if why := c.healthy(i, deadline); why != "" {
			return why
		}
	}
	return ""
}

// SetLazy writes node i's configuration with JetStream's default sync
// interval (lazy) or syncing every write; it takes effect at the node's
// next start.
func (c *Cluster) SetLazy(i int, lazy bool) {
	c.t.Helper()
	nd := c.Nodes[i]
	conf := nd.conf + ", sync_interval: always }\n"
	if lazy {
		conf = nd.conf + " }\n"
	}
	if err := os.WriteFile(nd.Conf, []byte(conf), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	nd := c.Nodes[i]
	exe, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	nd.cmd = exec.Command(exe)
	nd.cmd.Env = append(os.Environ(), NodeEnv+"="+nd.Conf)
	nd.stderr = &strings.Builder{}
	nd.cmd.Stderr = nd.stderr
	if err := nd.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	nd.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(nd.cmd, nd.done)
}

// Kill kills node i with SIGKILL and waits for its end; a node already
// killed is left as it is.
func (c *Cluster) Kill(i int) {
	nd := c.Nodes[i]
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Kill()
	<-nd.done
	nd.cmd = nil
}

// Restart starts node i again on its ports and store and waits until it is
// healthy.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.Kill(i)
	c.start(i)
	c.WaitHealthy(i)
}

// WaitHealthy waits until node i's /healthz answers 200: its JetStream is
// current with the cluster's.
func (c *Cluster) WaitHealthy(i int) {
	c.t.Helper()
	if why := c.healthy(i, time.Now().Add(60*time.Second)); why != "" {
		c.t.Fatalf("natstest: %s", why)
	}
}

// healthy waits until node i is healthy or the deadline, and says why not.
func (c *Cluster) healthy(i int, deadline time.Time) string {
	nd := c.Nodes[i]
	client := &http.Client{Timeout: time.Second}
	var last string // the last answer, for a failure's story
	for {
		resp, err := client.Get(nd.Monitor + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return ""
			}
			last = resp.Status + " " + string(b)
		} else {
			last = err.Error()
		}
		select {
		case <-nd.done:
			return fmt.Sprintf("node %s exited: %s", nd.Name, nd.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("node %s not healthy: %s", nd.Name, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
