package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

var serveHelp = help{
	Usage: "serve [--stdio] [--socket PATH] [--data DIR] [--mode tui|rpc|print]\n" +
		"      [--max-pending N] [--max-conns-per-child N] [--log-format text|json]",
	Short: "run the JSON-RPC service: the host on stdio, children on a Unix socket",
	Long: `
Serves the host on stdin/stdout (--stdio) and children, and a host with the
token in DIR/host.token, on a Unix socket (mode 0600). The socket is served
unless --socket "" is given. SIGINT or SIGTERM stops accepting, finishes the
requests in flight and closes the mailbox. The protocol: docs/protocol.md.`,
	Env: []string{
		"XDG_RUNTIME_DIR  the default socket is $XDG_RUNTIME_DIR/diagrelay.sock (else DIR/diagrelay.sock)",
		"XDG_STATE_HOME   the default DIR is $XDG_STATE_HOME/diagrelay (else ~/.local/state/diagrelay)",
	},
	Exit: []string{
		"0  stopped cleanly (a signal, or the stdio host closed stdin)",
		"1  could not start or failed while serving (the reason on stderr)",
		"2  usage error",
	},
}

// Files in the data directory.
const (
	mailboxFile   = "mailbox.db"
	hostTokenFile = "host.token"
)

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", stderr, &serveHelp)
	stdio := fs.Bool("stdio", false, "serve the host on stdin/stdout")
	socket := fs.String("socket", "", "serve children (and a host with the host token) on this Unix socket `path` (mode 0600);\ndefault $XDG_RUNTIME_DIR/diagrelay.sock, else DIR/diagrelay.sock")
	data := fs.String("data", defaultDataDir(), "`dir`ectory of the durable mailbox and host.token")
	modeName := fs.String("mode", "rpc", "the parent session's mode: tui, rpc or print")
	maxPending := fs.Int("max-pending", service.DefaultMaxPending, "socket peers that may wait for their hello at once; a new one closes the oldest")
	maxConns := fs.Int("max-conns-per-child", service.DefaultMaxConnsPerChild, "live connections one child token may hold")
	logFormat := fs.String("log-format", "text", "log to stderr as text or json (at most 10 lines/s)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !flagSet(fs, "socket") {
		*socket = defaultSocket(*data)
	}
	mode, err := relay.ParseMode(*modeName)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "diagrelay serve:", err)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "diagrelay serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *maxPending < 1:
		fmt.Fprintln(stderr, "diagrelay serve: --max-pending must be at least 1")
		return 2
	case *maxConns < 1:
		fmt.Fprintln(stderr, "diagrelay serve: --max-conns-per-child must be at least 1")
		return 2
	case *logFormat != "text" && *logFormat != "json":
		fmt.Fprintf(stderr, "diagrelay serve: --log-format %q is not text or json\n", *logFormat)
		return 2
	case !*stdio && *socket == "":
		fmt.Fprintln(stderr, "diagrelay serve: --socket \"\" without --stdio serves no one: give --stdio, --socket PATH or both")
		fs.Usage()
		return 2
	}
	logger := newLogger(stderr, *logFormat, time.Now)
	opts := serveOptions{stdio: *stdio, socket: *socket, data: *data, mode: mode,
		maxPending: *maxPending, maxConnsPerChild: *maxConns}
	if err := serve(opts, stdin, stdout, logger); err != nil {
		logger.Error(err.Error())
		return 1
	}
	return 0
}

// defaultSocket is $XDG_RUNTIME_DIR/diagrelay.sock, else data/diagrelay.sock:
// a directory only this user can use, as a socket of mode 0600 wants.
func defaultSocket(data string) string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "diagrelay.sock")
	}
	return filepath.Join(data, "diagrelay.sock")
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// newLogger logs to w as text or JSON, at most 10 lines per second of now
// with "suppressed N lines" summaries: w may be the parent's terminal.
func newLogger(w io.Writer, format string, now func() time.Time) *slog.Logger {
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, nil)
	} else {
		h = slog.NewTextHandler(w, nil)
	}
	return slog.New(service.NewLimitHandler(h, 10, now))
}

type serveOptions struct {
	stdio                        bool
	socket, data                 string
	mode                         relay.Mode
	maxPending, maxConnsPerChild int
}

// defaultDataDir is $XDG_STATE_HOME/diagrelay, else ~/.local/state/diagrelay,
// else ./diagrelay-data.
func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "diagrelay")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "diagrelay")
	}
	return "diagrelay-data"
}

func serve(o serveOptions, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	stdio, socket, data, mode := o.stdio, o.socket, o.data, o.mode
	store, err := openDataDir(data) // datadir.go: permissions, trust
	if err != nil {
		return err
	}
	defer store.Close()
	hostToken, err := writeHostToken(data)
	if err != nil {
		return err
	}

	srv := service.New(service.Config{Mode: mode, Mailbox: store, HostToken: hostToken, Logger: logger,
		MaxPending: o.maxPending, MaxConnsPerChild: o.maxConnsPerChild})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 2)
	if socket != "" {
		l, err := listenUnix(socket)
		if err != nil {
			return err
		}
		// Closing the listener (Shutdown does) removes the socket file;
		// removing it by name later could delete a newer server's.
		go func() { done <- srv.Serve(l) }()
		logger.Info("serving children", "socket", socket, "mode", string(mode), "data", data)
	}
	if stdio {
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
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && runErr == nil {
		runErr = fmt.Errorf("shutdown: %w", err)
	}
	return runErr
}

// writeHostToken writes a fresh host token to DIR/host.token, mode 0600,
// replacing the file atomically so a reader never sees half a token.
func writeHostToken(dir string) (string, error) {
	tok := service.NewToken()
	tmp, err := os.CreateTemp(dir, ".host.token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tok, os.Rename(tmp.Name(), filepath.Join(dir, hostTokenFile))
}

// listenUnix listens on path with mode 0600. A stale socket file left by a
// killed server is removed; a live one is an error.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another server is listening", path)
		}
		// Only a refused connection proves the file stale; a live server
		// with a full backlog, or a permission error, must not lose it.
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%s exists and may be in use: %w", path, err)
		}
		os.Remove(path)
	}
	// The umask makes the socket 0600 from its creation, with no window in
	// which another user could connect.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
