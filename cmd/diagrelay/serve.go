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
	c := help.Command("serve")
	c.Env = []string{envRuntimeDir, envStateHome}
	var o serve.Options
	fs := &c.Flag
	fs.BoolVar(&o.Stdio, "stdio", false, "serve the host on stdin/stdout")
	fs.StringVar(&o.Socket, "socket", "", "serve children (and a host with the host token) on this Unix socket `path` (mode 0600);\n"+socketDefault)
	fs.StringVar(&o.Data, "data", datadir.Default(), "`dir`ectory of the durable mailbox and host.token")
	mode := cli.Choice(fs, "mode", string(relay.ModeRPC), "the parent session's mode", modes...)
	fs.IntVar(&o.MaxPending, "max-pending", service.DefaultMaxPending, "socket peers that may wait for their hello at once; a new one closes the oldest")
	fs.IntVar(&o.MaxConnsPerChild, "max-conns-per-child", service.DefaultMaxConnsPerChild, "live connections one child token may hold")
	fs.IntVar(&o.MaxNested, "max-nested", service.DefaultMaxNested, "live threads a child may hold below it (its children's children included,\nall drawing on its share); past it runtime.open gets -32007")
	fs.IntVar(&o.MaxUnsentTotal, "max-unsent-total", service.DefaultMaxUnsentTotal, "`bytes` of replies and events that may wait for all socket peers together;\npast it the peers that have gone longest without reading are disconnected")
	redact := cli.Choice(fs, "redact", "on", "redact secrets in reports before the parent sees them (off warns at start)", "on", "off")
	fs.BoolVar(&o.BindPeer, "bind-peer", false, "bind every child token to its process and descendants (runtime.open {bind: false} opts out)")
	hostSocket := cli.Choice(fs, "host-socket", "on", "whether a socket peer with DIR/host.token may be the host (off: no host token is written, the host is on stdio only)", "on", "off")
	logFormat := cli.Choice(fs, "log-format", "text", "log to stderr (at most 10 lines/s) as", "text", "json")
	var home, join string
	fs.StringVar(&home, "cluster", "", "be a cluster's home: the NATS JetStream at this `url` (nats://host:4222)")
	fs.StringVar(&join, "join", "", "be a cluster's edge: children only, their reports to the home through the NATS JetStream at this `url`")
	fs.StringVar(&o.Cluster.CredsFile, "creds", "", "NATS credentials `file` for --cluster or --join")
	fs.StringVar(&o.Cluster.MonitorURL, "nats-monitor", "", "the NATS servers' monitoring `urls` (http://host:8222), comma-separated: every node's, each read for its sync setting")
	fs.BoolVar(&o.Cluster.AllowLazyFsync, "allow-lazy-fsync", false, "start on a JetStream that may acknowledge a write before it is on disk")
	fs.IntVar(&o.Cluster.Replicas, "nats-replicas", 1, "servers that keep the cluster's stream and bucket (--cluster; 3 on a three-node JetStream)")
	fs.StringVar(&o.EdgeName, "name", "", "the edge's `name` at its first start (default edge-<random>; kept in DIR/edge.db)")
	c.Run = func(s *cli.IO, _ []string) error {
		switch {
		case home != "" && join != "":
			return cli.Usagef("--cluster and --join: a serve is a home or an edge, not both")
		case join != "" && o.Stdio:
			return cli.Usagef("--join with --stdio: an edge has no host; serve the host on the home")
		case o.EdgeName != "" && join == "":
			return cli.Usagef("--name names an edge: give --join")
		case join == "" && home == "" && (o.Cluster.CredsFile != "" || o.Cluster.MonitorURL != "" || o.Cluster.AllowLazyFsync):
			return cli.Usagef("--creds, --nats-monitor and --allow-lazy-fsync are for --cluster or --join")
		case c.FlagGiven("nats-replicas") && (home == "" || o.Cluster.Replicas < 1 || o.Cluster.Replicas > 5):
			return cli.Usagef("--nats-replicas is 1 to 5, for --cluster")
		case home != "":
			o.Role, o.Cluster.URL = serve.RoleHome, home
		case join != "":
			o.Role, o.Cluster.URL = serve.RoleEdge, join
		}
		if !c.FlagGiven("socket") {
			o.Socket = datadir.Socket(o.Data)
		}
		o.NoHostToken = *hostSocket == "off"
		if err := o.Check(); err != nil {
			return cli.Usagef("%s", err)
		}
		o.Mode = relay.Mode(*mode)
		o.NoRedaction = *redact == "off"
		o.Logger = serve.NewLogger(s.Err, *logFormat, time.Now)
		stopProfile, err := serve.StartProfile()
		if err != nil {
			return err
		}
		err = serve.Run(o, s.In, s.Out)
		if perr := stopProfile(); err == nil {
			err = perr
		}
		return err
	}
	return c
}
