package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The names a cluster uses in JetStream (docs/cluster.md, "Subjects and
// schema").
const (
	// StreamName is the stream of admitted reports and edges' counts.
	StreamName = "DIAGRELAY"
	// ReportSubject and CountsSubject, followed by ".<edge>", are where an
	// edge publishes; a broker's permissions can hold each edge to its own.
	ReportSubject = "diagrelay.report"
	CountsSubject = "diagrelay.counts"
	// BucketName is the key-value bucket of tokens: key "t.<sha256 hex>".
	BucketName = "diagrelay-threads"
	// ConsumerName is the home's durable consumer of StreamName.
	ConsumerName = "home"
	// HomeName is the name under which the home claims the tokens of its
	// own local children.
	HomeName = "home"
)

// Defaults of the stream and the consumer (docs/cluster.md says why).
const (
	DefaultAckWait       = 5 * time.Second // a redelivery after the home restarts comes within this; a redelivery during a slow commit is recognised by its id
	DefaultMaxAckPending = 1024
	DefaultStreamBytes   = 1 << 30 // with DiscardNew: a full stream refuses, never drops acknowledged reports
	DefaultDuplicates    = 2 * time.Minute
	DefaultPublishWait   = 5 * time.Second // how long an edge waits for the stream's acknowledgement
	DefaultRevokeWithin  = time.Second
	maxMessageBytes      = 64 << 10
)

// Config is how a home or an edge reaches its JetStream.
type Config struct {
	URL       string // nats://host:port[,…]
	CredsFile string // a NATS credentials file, or ""
	// MonitorURL is the servers' HTTP monitoring endpoints
	// (http://host:8222), comma-separated: the connected server's and, in a
	// JetStream cluster, every node's, each read for its sync setting
	// (varz.go).
	MonitorURL string
	// AllowLazyFsync starts even on a JetStream that does not sync every
	// write, or whose setting cannot be read.
	AllowLazyFsync bool
	// Replicas is how many servers keep the stream and the bucket (the
	// home creates them; 0 means 1). Three on a three-node JetStream.
	Replicas int
	// Name is this edge's name (an edge only).
	Name   string
	Logger *slog.Logger
	// Now is the clock of reports' times and of the counts' ticker; nil
	// means the wall clock.
	Now func() time.Time
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c *Config) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// link is one process's connection to the cluster.
type link struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	kv     jetstream.KeyValue
	stream jetstream.Stream
}

// dial connects to the cluster and checks that it stores every
// acknowledged write on disk (docs/cluster.md), creating the stream and the
// bucket if create is set (the home).
func dial(ctx context.Context, c *Config, name string, create bool) (*link, error) {
	if c.URL == "" {
		return nil, errors.New("cluster: no NATS URL")
	}
	opts := []nats.Option{nats.Name("diagrelay " + name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	if c.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	log := c.logger()
	opts = append(opts,
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: this process closed the connection
				log.Warn("cluster: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("cluster: reconnected") }))
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect %s: %w", c.URL, err)
	}
	if err := checkSync(ctx, c, nc.ConnectedServerId()); err != nil {
		nc.Close()
		return nil, err
	}
	l := &link{nc: nc}
	if err := l.open(ctx, c, create); err != nil {
		nc.Close()
		return nil, err
	}
	return l, nil
}

func (l *link) open(ctx context.Context, c *Config, create bool) error {
	js, err := jetstream.New(l.nc)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	l.js = js
	if create {
		l.stream, err = settle(ctx, func(ctx context.Context) (jetstream.Stream, error) {
			retention, err := streamRetention(ctx, js, c.logger())
			if err != nil {
				return nil, err
			}
			return js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
				Name:       StreamName,
				Subjects:   []string{ReportSubject + ".*", CountsSubject + ".*"},
				Storage:    jetstream.FileStorage,
				Retention:  retention,
				Discard:    jetstream.DiscardNew,
				MaxBytes:   DefaultStreamBytes,
				MaxMsgSize: maxMessageBytes,
				Duplicates: DefaultDuplicates,
				Replicas:   max(c.Replicas, 1),
			})
		})
		if err != nil {
			return fmt.Errorf("cluster: stream %s: %w", StreamName, err)
		}
		l.kv, err = settle(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
			return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: BucketName, History: 1, Storage: jetstream.FileStorage, Replicas: max(c.Replicas, 1),
			})
		})
		if err != nil {
			return fmt.Errorf("cluster: bucket %s: %w", BucketName, err)
		}
	} else {
		if l.stream, err = settle(ctx, func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, StreamName) }); err != nil {
			return fmt.Errorf("cluster: stream %s (start the home, serve --cluster, first): %w", StreamName, err)
		}
		if l.kv, err = settle(ctx, func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, BucketName) }); err != nil {
			return fmt.Errorf("cluster: bucket %s (start the home, serve --cluster, first): %w", BucketName, err)
		}
	}
	return l.checkStorage(ctx, c)
}

// streamRetention is the retention the home gives the stream: limits, so
// that the home's acknowledgement of a report writes nothing to the
// stream's disk, and the home purges what it has acknowledged every
// PruneEvery (consume.go). With work-queue retention every acknowledgement
// removes its message, and the removal is one more synced write on the
// stream for each report, in line with the edges' publishes. A stream made
// with work-queue retention stays so (JetStream cannot change it, and
// deleting it could lose reports an edge just published): it works, at
// that cost, and the home says how to have it made anew.
func streamRetention(ctx context.Context, js jetstream.JetStream, log *slog.Logger) (jetstream.RetentionPolicy, error) {
	s, err := js.Stream(ctx, StreamName)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return jetstream.LimitsPolicy, nil
	case err != nil:
		return 0, err
	}
	if r := s.CachedInfo().Config.Retention; r == jetstream.WorkQueuePolicy {
		log.Warn("cluster: the stream has work-queue retention, which costs a synced write per acknowledged report; "+
			"to have it made with limits retention, stop the edges and the home, delete the stream once it is empty, and start the home", "stream", StreamName)
		return r, nil
	}
	return jetstream.LimitsPolicy, nil
}

// checkStorage refuses a stream or a bucket that is not on file with the
// default persist mode, where an acknowledgement could come before the
// write (docs/cluster.md).
func (l *link) checkStorage(ctx context.Context, c *Config) error {
	si, err := settle(ctx, func(ctx context.Context) (*jetstream.StreamInfo, error) { return l.stream.Info(ctx) })
	if err != nil {
		return fmt.Errorf("cluster: stream %s: %w", StreamName, err)
	}
	ks, err := settle(ctx, func(ctx context.Context) (jetstream.Stream, error) { return l.js.Stream(ctx, "KV_"+BucketName) })
	if err != nil {
		return fmt.Errorf("cluster: bucket %s: %w", BucketName, err)
	}
	ki, err := settle(ctx, func(ctx context.Context) (*jetstream.StreamInfo, error) { return ks.Info(ctx) })
	if err != nil {
		return fmt.Errorf("cluster: bucket %s: %w", BucketName, err)
	}
	for _, s := range []*jetstream.StreamConfig{&si.Config, &ki.Config} {
		if s.Storage == jetstream.FileStorage && s.PersistMode == jetstream.DefaultPersistMode {
			continue
		}
		msg := fmt.Sprintf("cluster: stream %s is not on file storage with the default persist_mode, so an acknowledged report may not be on disk", s.Name)
		if !c.AllowLazyFsync {
			return errors.New(msg + " (or start with --allow-lazy-fsync)")
		}
		c.logger().Warn(msg)
	}
	return nil
}

func (l *link) close() {
	if l != nil && l.nc != nil {
		l.nc.Close()
	}
}

// newBoot is a random name for this process's life: with the edge's name it
// makes report ids unique across restarts.
func newBoot() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
