package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// checkSync reads the server's sync setting from its monitoring endpoint:
// the NATS protocol does not carry it. Without sync_always a power failure
// can lose acknowledged messages (Jepsen, NATS 2.12, 2025: 14 % with the
// default interval), so both home and edge refuse to start, unless
// AllowLazyFsync (SPEC §13).
func checkSync(ctx context.Context, c *Config) error {
	always, err := readSyncAlways(ctx, c.MonitorURL)
	switch {
	case err == nil && always:
		return nil
	case c.AllowLazyFsync:
		c.logger().Warn("cluster: JetStream may acknowledge a write before it is on disk (--allow-lazy-fsync)", "err", err, "sync_always", always)
		return nil
	case err != nil:
		return fmt.Errorf("cluster: %w (or start with --allow-lazy-fsync)", err)
	}
	return errors.New("cluster: the NATS server does not sync every write (jetstream sync_interval: always); an acknowledged report could be lost in a power failure (or start with --allow-lazy-fsync)")
}

// readSyncAlways returns jetstream.config.sync_always of base/varz.
func readSyncAlways(ctx context.Context, base string) (bool, error) {
	if base == "" {
		return false, errors.New("no --nats-monitor URL: the server's sync setting cannot be read over the NATS protocol; give its monitoring endpoint")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/varz", nil)
	if err != nil {
		return false, fmt.Errorf("--nats-monitor: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("--nats-monitor: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("--nats-monitor: %s/varz answered %s", base, resp.Status)
	}
	return parseSyncAlways(io.LimitReader(resp.Body, 4<<20))
}

// parseSyncAlways reads jetstream.config.sync_always from a varz document.
// A server without JetStream is an error.
func parseSyncAlways(r io.Reader) (bool, error) {
	var v struct {
		JetStream *struct {
			Config *struct {
				SyncAlways bool `json:"sync_always"`
			} `json:"config"`
		} `json:"jetstream"`
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return false, fmt.Errorf("--nats-monitor: varz is not JSON: %w", err)
	}
	if v.JetStream == nil || v.JetStream.Config == nil {
		return false, errors.New("--nats-monitor: the server's varz shows no JetStream")
	}
	return v.JetStream.Config.SyncAlways, nil
}
