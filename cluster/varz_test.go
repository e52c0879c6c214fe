package cluster

import (
	"context"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/natstest"
)

// TestMonitorIsTheConnectedServer: --nats-monitor of a synced server with
// the connection on another one is refused, naming the connected server,
// whether the connected one syncs or not (outside testing started a home
// on a lazily synced server that way); listing the connected server's
// monitor among others is what is asked.
func TestMonitorIsTheConnectedServer(t *testing.T) {
	synced, other := natstest.Start(t), natstest.Start(t)
	lazy := natstest.StartWith(t, &natstest.Server{Dir: t.TempDir(), LazyFsync: true})
	for _, tt := range []struct {
		name, url, monitor, want string
	}{
		{"another synced server's monitor", synced.URL, other.MonitorURL, "is the monitor of the connected server"},
		{"a synced monitor for a lazy server", lazy.URL, synced.MonitorURL, "is the monitor of the connected server"},
		{"the lazy server's own monitor", lazy.URL, lazy.MonitorURL, "does not sync every write"},
		{"its own monitor", synced.URL, synced.MonitorURL, ""},
		{"its own among others", synced.URL, other.MonitorURL + ", " + synced.MonitorURL, ""},
		{"an empty list", synced.URL, " , ", "no --nats-monitor"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHome(t.Context(), Config{URL: tt.url, MonitorURL: tt.monitor})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				h.Close()
				return
			}
			if err == nil {
				h.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--allow-lazy-fsync") {
				t.Fatalf("%v; want it to say %q and name --allow-lazy-fsync", err, tt.want)
			}
			_, eerr := NewEdge(t.Context(), Config{URL: tt.url, MonitorURL: tt.monitor, Name: "e1"})
			if eerr == nil || !strings.Contains(eerr.Error(), tt.want) {
				t.Fatalf("the edge: %v; want it to say %q", eerr, tt.want)
			}
		})
	}
}

// TestMonitorEveryNode: on a 3-node JetStream each node's monitor must be
// given, and each must sync always: a peer of the meta group left out, or
// a lazy one, is refused by name; with all three synced it starts.
func TestMonitorEveryNode(t *testing.T) {
	nc := natstest.StartCluster(t, 3, 2) // n3 lazy
	m := nc.Monitors
	url := strings.Split(nc.URL, ",")[0] // the connection on n1
	for _, tt := range []struct {
		name, monitors, want string
	}{
		{"one node", m[0], "peer n2, n3 is not among the monitors"},
		{"two nodes", m[0] + "," + m[1], "peer n3 is not among the monitors"},
		{"the lazy node listed", m[0] + "," + m[1] + "," + m[2], "server n3 (" + m[2] + ") does not sync every write"},
		{"the connected node left out", m[1], "is the monitor of the connected server"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for role, start := range map[string]func() error{
				"home": func() error {
					h, err := NewHome(t.Context(), Config{URL: url, MonitorURL: tt.monitors, Replicas: 3})
					if err == nil {
						h.Close()
					}
					return err
				},
				"edge": func() error {
					e, err := NewEdge(t.Context(), Config{URL: url, MonitorURL: tt.monitors, Name: "e1"})
					if err == nil {
						e.Close()
					}
					return err
				},
			} {
				if err := start(); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: %v; want it to say %q", role, err, tt.want)
				}
			}
		})
	}
	h, err := NewHome(t.Context(), Config{URL: url, MonitorURL: m[0], Replicas: 3, AllowLazyFsync: true})
	if err != nil {
		t.Fatalf("--allow-lazy-fsync: %v", err)
	}
	h.Close()

	nc.SetLazy(2, false)
	nc.Restart(2)
	h, err = NewHome(context.Background(), Config{URL: url, MonitorURL: strings.Join(m, ","), Replicas: 3})
	if err != nil {
		t.Fatalf("every node synced and listed: %v", err)
	}
	h.Close()
}
