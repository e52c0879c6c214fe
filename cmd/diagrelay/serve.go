package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

func init() {
	commands["serve"] = command{summary: "run the JSON-RPC service on stdio and/or a Unix socket", run: runServe}
}

// Files in the data directory.
const (
	mailboxFile   = "mailbox.db"
	hostTokenFile = "host.token"
)

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stdio := fs.Bool("stdio", false, "serve the host on stdin/stdout")
	socket := fs.String("socket", "", "serve children (and a host with the host token) on this Unix socket `path` (mode 0600)")
	data := fs.String("data", defaultDataDir(), "`dir`ectory of the durable mailbox and host.token")
	modeName := fs.String("mode", "rpc", "the parent session's mode: tui, rpc or print")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: diagrelay serve [--stdio] [--socket PATH] [--data DIR] [--mode tui|rpc|print]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	mode, err := relay.ParseMode(*modeName)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "diagrelay serve:", err)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "diagrelay serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	case !*stdio && *socket == "":
		fmt.Fprintln(stderr, "diagrelay serve: give --stdio, --socket PATH or both")
		fs.Usage()
		return 2
	}
	logger := log.New(stderr, "diagrelay: ", log.LstdFlags)
	if err := serve(*stdio, *socket, *data, mode, stdin, stdout, logger); err != nil {
		logger.Print(err)
		return 1
	}
	return 0
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

func serve(stdio bool, socket, data string, mode relay.Mode, stdin io.Reader, stdout io.Writer, logger *log.Logger) error {
	store, err := openDataDir(data) // datadir.go: permissions, trust
	if err != nil {
		return err
	}
	defer store.Close()
	hostToken, err := writeHostToken(data)
	if err != nil {
		return err
	}

	srv := service.New(service.Config{Mode: mode, Mailbox: store, HostToken: hostToken, Logf: logger.Printf})
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
		logger.Printf("serving children on %s (mode %s, data %s)", socket, mode, data)
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
		logger.Print("signal: shutting down")
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
