package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/internal/serve"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

var serveHelp = help{
	Usage: "serve [--stdio] [--socket PATH] [--data DIR] [--mode tui|rpc|print] [--redact=on|off] [limit and log flags]",
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

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o serve.Options
	fs := newFlagSet("serve", stderr, &serveHelp)
	fs.BoolVar(&o.Stdio, "stdio", false, "serve the host on stdin/stdout")
	fs.StringVar(&o.Socket, "socket", "", "serve children (and a host with the host token) on this Unix socket `path` (mode 0600);\ndefault $XDG_RUNTIME_DIR/diagrelay.sock, else DIR/diagrelay.sock")
	fs.StringVar(&o.Data, "data", datadir.Default(), "`dir`ectory of the durable mailbox and host.token")
	modeName := fs.String("mode", "rpc", "the parent session's mode: tui, rpc or print")
	fs.IntVar(&o.MaxPending, "max-pending", service.DefaultMaxPending, "socket peers that may wait for their hello at once; a new one closes the oldest")
	fs.IntVar(&o.MaxConnsPerChild, "max-conns-per-child", service.DefaultMaxConnsPerChild, "live connections one child token may hold")
	redactFlag := fs.String("redact", "on", "redact secrets in reports before the parent sees them: on or off (off warns at start)")
	logFormat := fs.String("log-format", "text", "log to stderr as text or json (at most 10 lines/s)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !flagSet(fs, "socket") {
		o.Socket = datadir.Socket(o.Data)
	}
	var err error
	o.Mode, err = relay.ParseMode(*modeName)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "diagrelay serve:", err)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "diagrelay serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	case o.MaxPending < 1:
		fmt.Fprintln(stderr, "diagrelay serve: --max-pending must be at least 1")
		return 2
	case o.MaxConnsPerChild < 1:
		fmt.Fprintln(stderr, "diagrelay serve: --max-conns-per-child must be at least 1")
		return 2
	case *redactFlag != "on" && *redactFlag != "off":
		fmt.Fprintf(stderr, "diagrelay serve: --redact %q is not on or off\n", *redactFlag)
		return 2
	case *logFormat != "text" && *logFormat != "json":
		fmt.Fprintf(stderr, "diagrelay serve: --log-format %q is not text or json\n", *logFormat)
		return 2
	case !o.Stdio && o.Socket == "":
		fmt.Fprintln(stderr, "diagrelay serve: --socket \"\" without --stdio serves no one: give --stdio, --socket PATH or both")
		fs.Usage()
		return 2
	}
	o.NoRedaction = *redactFlag == "off"
	o.Logger = serve.NewLogger(stderr, *logFormat, time.Now)
	if err := serve.Run(o, stdin, stdout); err != nil {
		o.Logger.Error(err.Error())
		return 1
	}
	return 0
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
