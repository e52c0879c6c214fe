// Package serve runs diagrelay serve: the data directory opened and
// checked, the service on stdio and on a Unix socket, and the clean
// shutdown on SIGINT, SIGTERM or the stdio host going away.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/cluster"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Options is what to serve, as serve's flags give it.
type Options struct {
	Stdio        bool   // serve the host on stdin/stdout
	Socket, Data string // the socket ("": none) and the data directory
	Mode         relay.Mode
	// MaxPending, MaxConnsPerChild, MaxNested, MaxUnsentTotal and BindPeer are
	// service.Config's.
	MaxPending, MaxConnsPerChild, MaxNested, MaxUnsentTotal int
	BindPeer                                                bool
	// NoHostToken (--host-socket=off) writes no host token and removes a
	// stale one: the stdio peer is the only host.
	NoHostToken bool
	// NoRedaction is serve --redact=off: secrets pass, with a warning at
	// start (service.Config.NoRedaction).
	NoRedaction bool
	Logger      *slog.Logger

	// Role is RoleHome (serve --cluster) or RoleEdge (serve --join) in a
	// cluster (docs/cluster.md), "" for a serve on its own; Cluster is how
	// to reach it. EdgeName is --name, an edge's name at its first start.
	Role     Role
	Cluster  cluster.Config
	EdgeName string
}

// Check says which of o's limits and switches cannot serve, by the flags
// of diagrelay serve that set them.
func (o *Options) Check() error {
	switch {
	case o.MaxPending < 1:
		return errors.New("--max-pending must be at least 1")
	case o.MaxConnsPerChild < 1:
		return errors.New("--max-conns-per-child must be at least 1")
	case o.MaxNested < 1:
		return errors.New("--max-nested must be at least 1")
	case o.MaxUnsentTotal < service.DefaultMaxUnsent:
		return fmt.Errorf("--max-unsent-total must be at least %d (one peer's bound)", service.DefaultMaxUnsent)
	case !o.Stdio && o.Socket == "":
		return errors.New(`--socket "" without --stdio serves no one: give --stdio, --socket PATH or both`)
	case o.NoHostToken && !o.Stdio:
		return errors.New("--host-socket off without --stdio serves no host: give --stdio")
	case o.BindPeer && !service.CanBindPeers:
		return errors.New("--bind-peer: this system gives no peer credentials, so tokens cannot be bound")
	}
	return nil
}

// Role is a serve's part in a cluster.
type Role string

const (
	RoleHome Role = "home"
	RoleEdge Role = "edge"
)

// shutdownTimeout bounds how long the requests in flight may take to
// finish once serve stops.
const shutdownTimeout = 10 * time.Second

// Run serves until a signal, the stdio host closing stdin or a failure,
// then shuts the service down and closes the mailbox. It returns nil after
// a clean stop.
func Run(o Options, stdin io.Reader, stdout io.Writer) error {
	if o.Role == RoleEdge {
		return runEdge(o)
	}
	logger := o.Logger
	store, err := openData(o.Data) // permissions, trust
	if err != nil {
		return err
	}
	defer store.Close()
	hostToken := ""
	if o.NoHostToken {
		// A token left by an earlier serve must not pass for this one's.
		if err := os.Remove(filepath.Join(o.Data, datadir.HostTokenFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else if hostToken, err = datadir.WriteHostToken(o.Data, service.NewToken()); err != nil {
		return err
	}

	cfg := service.Config{Mode: o.Mode, Mailbox: store, HostToken: hostToken, Logger: logger,
		MaxPending: o.MaxPending, MaxConnsPerChild: o.MaxConnsPerChild, MaxNested: o.MaxNested, MaxUnsentTotal: o.MaxUnsentTotal,
		BindPeer: o.BindPeer, NoRedaction: o.NoRedaction}
	if o.Role == RoleHome {
		o.Cluster.Logger = logger
		home, err := cluster.NewHome(context.Background(), o.Cluster)
		if err != nil {
			return err
		}
		// Closed after the server's shutdown (defers run last in, first
		// out): reports fetched and not yet stored come again after the
		// consumer's ack wait.
		defer home.Close()
		cfg.Directory = home
		srv := service.New(cfg)
		if err := home.Start(srv.Manager(), store); err != nil {
			return err
		}
		logger.Info("cluster home", "nats", o.Cluster.URL)
		return serveUntilStopped(srv, o, stdin, stdout)
	}
	return serveUntilStopped(service.New(cfg), o, stdin, stdout)
}

// serveUntilStopped serves srv on o's socket and stdio until a signal, the
// stdio host closing stdin or a failure, then shuts it down.
func serveUntilStopped(srv *service.Server, o Options, stdin io.Reader, stdout io.Writer) error {
	logger := o.Logger
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 2)
	if o.Socket != "" {
		l, err := Listen(o.Socket)
		if err != nil {
			return err
		}
		// Closing the listener removes the socket file it created (and
		// only once: a later serve's file of the same name is not
		// touched). Shutdown closes the listeners Serve has registered;
		// this close covers a signal that comes before Serve has run.
		defer l.Close()
		go func() { done <- srv.Serve(l) }()
		logger.Info("serving children", "socket", o.Socket, "mode", string(o.Mode), "data", o.Data,
			"bind_peer", o.BindPeer, "host_socket", !o.NoHostToken)
	}
	if o.Stdio {
		// A host that closes its end of stdout would otherwise kill the
		// process with SIGPIPE on the next write (Go's default for fd 1),
		// skipping the clean shutdown: the write fails and is logged
		// instead, and the service runs on until stdin ends.
		signal.Ignore(syscall.SIGPIPE)
		// The host going away (stdin closed) ends the service.
		go func() { done <- srv.ServeHost(stdin, stdout) }()
	}

	var runErr error
	select {
	case <-ctx.Done():
		logger.Info("signal: shutting down")
	case runErr = <-done:
		if errors.Is(runErr, service.ErrServerClosed) {
			runErr = nil
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && runErr == nil {
		runErr = fmt.Errorf("shutdown: %w", err)
	}
	return runErr
}

// NewLogger logs to w as text or JSON, at most 10 lines per second of now
// with "suppressed N lines" summaries: w may be the parent's terminal.
func NewLogger(w io.Writer, format string, now func() time.Time) *slog.Logger {
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, nil)
	} else {
		h = slog.NewTextHandler(w, nil)
	}
	return slog.New(NewLimitHandler(h, 10, now))
}
