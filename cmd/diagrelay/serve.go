package main

import (
	"time"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// modes are relay's modes, as the --mode flags take them.
var modes = []string{string(relay.ModeTUI), string(relay.ModeRPC), string(relay.ModePrint)}

func serveCommand() *cli.Command {
	c := &cli.Command{
		Name:  "serve",
		Usage: "[--stdio] [--socket PATH] [--data DIR] [--mode tui|rpc|print] [--redact=on|off] [limit and log flags]",
		Short: "run the JSON-RPC service: the host on stdio, children on a Unix socket",
		Long: `
Serves the host on stdin/stdout (--stdio) and children, and a host with the
token in DIR/host.token, on a Unix socket (mode 0600). The socket is served
unless --socket "" is given. SIGINT or SIGTERM stops accepting, finishes the
requests in flight and closes the mailbox. Secrets in reports are redacted
(docs/redaction.md) unless --redact=off, which logs a warning at start. The
protocol: docs/protocol.md.`,
		Env: []string{envRuntimeDir, envStateHome},
		Exit: []string{
			"0  stopped cleanly (a signal, or the stdio host closed stdin)",
			"1  could not start or failed while serving (the reason on stderr)",
			"2  usage error",
		},
	}
	var o serve.Options
	fs := &c.Flag
	fs.BoolVar(&o.Stdio, "stdio", false, "serve the host on stdin/stdout")
	fs.StringVar(&o.Socket, "socket", "", "serve children (and a host with the host token) on this Unix socket `path` (mode 0600);\n"+socketDefault)
	fs.StringVar(&o.Data, "data", datadir.Default(), "`dir`ectory of the durable mailbox and host.token")
	mode := cli.Choice(fs, "mode", string(relay.ModeRPC), "the parent session's mode", modes...)
	fs.IntVar(&o.MaxPending, "max-pending", service.DefaultMaxPending, "socket peers that may wait for their hello at once; a new one closes the oldest")
	fs.IntVar(&o.MaxConnsPerChild, "max-conns-per-child", service.DefaultMaxConnsPerChild, "live connections one child token may hold")
	fs.IntVar(&o.MaxUnsentTotal, "max-unsent-total", service.DefaultMaxUnsentTotal, "`bytes` of replies and events that may wait for all socket peers together;\npast it the peers that have gone longest without reading are disconnected")
	redact := cli.Choice(fs, "redact", "on", "redact secrets in reports before the parent sees them (off warns at start)", "on", "off")
	logFormat := cli.Choice(fs, "log-format", "text", "log to stderr (at most 10 lines/s) as", "text", "json")
	c.Run = func(s *cli.IO, _ []string) error {
		switch {
		case o.MaxPending < 1:
			return cli.Usagef("--max-pending must be at least 1")
		case o.MaxConnsPerChild < 1:
			return cli.Usagef("--max-conns-per-child must be at least 1")
		case o.MaxUnsentTotal < service.DefaultMaxUnsent:
			return cli.Usagef("--max-unsent-total must be at least %d (one peer's bound)", service.DefaultMaxUnsent)
		}
		if !c.FlagGiven("socket") {
			o.Socket = datadir.Socket(o.Data)
		}
		if !o.Stdio && o.Socket == "" {
			return cli.Usagef(`--socket "" without --stdio serves no one: give --stdio, --socket PATH or both`)
		}
		o.Mode = relay.Mode(*mode)
		o.NoRedaction = *redact == "off"
		o.Logger = serve.NewLogger(s.Err, *logFormat, time.Now)
		return serve.Run(o, s.In, s.Out)
	}
	return c
}
