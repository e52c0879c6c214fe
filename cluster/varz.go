package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// checkSync reads the sync setting of every server that keeps the
// cluster's writes from its monitoring endpoint: the NATS protocol does not
// carry it. Without sync_always a power failure can lose acknowledged
// messages (Jepsen, NATS 2.12, 2025: 14 % with the default interval), so
// both home and edge refuse to start, unless AllowLazyFsync
// (docs/cluster.md, "Durability of the stream"). connected is the
// server_id of the server this process is connected to: one of the
// monitors must be that server's, so that the check reads the server that
// acknowledges, not another.
func checkSync(ctx context.Context, c *Config, connected string) error {
	err := checkMonitors(ctx, c.MonitorURL, connected)
	switch {
	case err == nil:
		return nil
	case c.AllowLazyFsync:
		c.logger().Warn("cluster: JetStream may acknowledge a write before it is on disk (--allow-lazy-fsync)", "err", err)
		return nil
	}
	return fmt.Errorf("cluster: %w (or start with --allow-lazy-fsync)", err)
}

// checkMonitors reads each monitoring URL of list (comma-separated) and
// checks that every one syncs always, that one of them is the connected
// server, and that in a JetStream cluster every peer of the meta group is
// among them.
func checkMonitors(ctx context.Context, list, connected string) error {
	var urls []string
	for u := range strings.SplitSeq(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return errors.New("no --nats-monitor URL: the server's sync setting cannot be read over the NATS protocol; give its monitoring endpoint (every node's, comma-separated, in a cluster)")
	}
	names := map[string]bool{} // the servers read
	peers := map[string]bool{} // the meta group's peers as the servers see it
	size, isConnected := 0, false
	for _, u := range urls {
		v, err := readVarz(ctx, u)
		if err != nil {
			return err
		}
		if !v.JetStream.Config.SyncAlways {
			return fmt.Errorf("the NATS server %s (%s) does not sync every write (jetstream sync_interval: always); an acknowledged report could be lost in a power failure", v.ServerName, u)
		}
		names[v.ServerName] = true
		isConnected = isConnected || v.ServerID == connected
		for _, p := range v.peers() {
			peers[p] = true
		}
		if m := v.JetStream.Meta; m != nil {
			size = max(size, m.Size)
		}
	}
	if !isConnected {
		return fmt.Errorf("--nats-monitor: none of %s is the monitor of the connected server (server_id %s): the check must read the server that acknowledges", list, connected)
	}
	var missing []string
	for p := range peers {
		if !names[p] {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		return fmt.Errorf("--nats-monitor: the JetStream meta group's peer %s is not among the monitors: give every node's monitoring URL, comma-separated", strings.Join(missing, ", "))
	}
	if size > len(peers) {
		return fmt.Errorf("--nats-monitor: the JetStream meta group has %d peers and its servers name %d of them; start when the cluster has elected its leader", size, len(peers))
	}
	return nil
}

// readVarz reads base/varz.
func readVarz(ctx context.Context, base string) (varz, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/varz", nil)
	if err != nil {
		return varz{}, fmt.Errorf("--nats-monitor %s: %w", base, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return varz{}, fmt.Errorf("--nats-monitor: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return varz{}, fmt.Errorf("--nats-monitor: %s/varz answered %s", base, resp.Status)
	}
	v, err := parseVarz(io.LimitReader(resp.Body, maxVarzBytes))
	if err != nil {
		return varz{}, fmt.Errorf("--nats-monitor %s: %w", base, err)
	}
	return v, nil
}

// maxVarzBytes bounds a varz document (a server's is a few KiB).
const maxVarzBytes = 4 << 20

// varz is what the check reads of a server's /varz.
type varz struct {
	ServerID   string `json:"server_id"`
	ServerName string `json:"server_name"`
	JetStream  *struct {
		Config *struct {
			SyncAlways bool `json:"sync_always"`
		} `json:"config"`
		Meta *struct {
			Leader   string `json:"leader"`
			Replicas []struct {
				Name string `json:"name"`
			} `json:"replicas"`
			Size int `json:"cluster_size"`
		} `json:"meta"`
	} `json:"jetstream"`
}

// maxPeers bounds the meta group's peers a varz may name.
const maxPeers = 64

// parseVarz decodes a varz document: a server with JetStream, its id and
// name, and at most maxPeers peers, each named.
func parseVarz(r io.Reader) (varz, error) {
	var v varz
	if err := json.UnmarshalRead(r, &v); err != nil {
		return varz{}, fmt.Errorf("varz is not what a NATS server sends: %w", err)
	}
	switch {
	case v.ServerID == "" || len(v.ServerID) > 256 || len(v.ServerName) > 256:
		return varz{}, errors.New("varz has no server_id, or one of over 256 bytes")
	case v.JetStream == nil || v.JetStream.Config == nil:
		return varz{}, errors.New("the server's varz shows no JetStream")
	}
	if v.ServerName == "" {
		v.ServerName = v.ServerID // what a server without a name reports for it
	}
	if m := v.JetStream.Meta; m != nil {
		if len(m.Replicas) == 0 {
			m.Replicas = nil // [] and absent are the same
		}
		if len(m.Replicas) >= maxPeers || m.Size < 0 || m.Size > maxPeers {
			return varz{}, fmt.Errorf("varz: a meta group of over %d peers", maxPeers)
		}
		for _, p := range append([]string{m.Leader}, replicaNames(&v)...) {
			if len(p) > 256 {
				return varz{}, errors.New("varz: a peer's name of over 256 bytes")
			}
		}
	}
	return v, nil
}

func replicaNames(v *varz) []string {
	var out []string
	for _, r := range v.JetStream.Meta.Replicas {
		if r.Name != "" {
			out = append(out, r.Name)
		}
	}
	return out
}

// peers is the meta group as this server sees it: itself, the leader and
// the replicas it knows; none for a server outside a cluster.
func (v *varz) peers() []string {
	m := v.JetStream.Meta
	if m == nil || m.Size <= 1 && len(m.Replicas) == 0 {
		return nil
	}
	out := append([]string{v.ServerName}, replicaNames(v)...)
	if m.Leader != "" {
		out = append(out, m.Leader)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
