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
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/redact"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// Options is what to serve, as serve's flags give it.
type Options struct {
	Stdio        bool   // serve the host on stdin/stdout
	Socket, Data string // the socket ("": none) and the data directory
	Mode         relay.Mode
	// MaxPending, MaxConnsPerChild, MaxUnsentTotal and BindPeer are
	// service.Config's.
	MaxPending, MaxConnsPerChild, MaxUnsentTotal int
	BindPeer                                     bool
	// NoHostToken (--host-socket=off) writes no host token and removes a
	// stale one: the stdio peer is the only host.
	NoHostToken bool
	// NoRedaction is serve --redact=off: secrets pass, with a warning at
	// start (service.Config.NoRedaction).
	NoRedaction bool
	Logger      *slog.Logger
}

// shutdownTimeout bounds how long the requests in flight may take to
// finish once serve stops.
const shutdownTimeout = 10 * time.Second

// Run serves until a signal, the stdio host closing stdin or a failure,
// then shuts the service down and closes the mailbox. It returns nil after
// a clean stop.
func Run(o Options, stdin io.Reader, stdout io.Writer) error {
	logger := o.Logger
	store, err := datadir.Open(o.Data) // permissions, trust
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
	} else if hostToken, err = datadir.WriteHostToken(o.Data); err != nil {
		return err
	}

	srv := service.New(service.Config{Mode: o.Mode, Mailbox: store, HostToken: hostToken, Logger: logger,
		MaxPending: o.MaxPending, MaxConnsPerChild: o.MaxConnsPerChild, MaxUnsentTotal: o.MaxUnsentTotal,
		BindPeer: o.BindPeer, NoRedaction: o.NoRedaction})
	if !o.NoRedaction {
		go buildRedaction()
	}
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
	return slog.New(service.NewLimitHandler(h, 10, now))
}

// buildRedaction builds the redaction rules at start, which the first
// report would otherwise build and wait for: 120-150 ms of CPU and 8 MiB
// of live heap for the compiled expressions, 30 MiB allocated on the way
// (docs/performance.md, "Memory after the flood leaves"). That garbage is
// then given back at once, as after a flood (service/doc.go, "Memory
// returns"), so serve's idle figure is that of a serve ready to redact.
func buildRedaction() {
	redact.Text("")
	runtime.GC()
	debug.FreeOSMemory()
}
