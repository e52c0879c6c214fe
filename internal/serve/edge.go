package serve

import (
	"context"

	"github.com/diagrelay/diagrelay/cluster"
	"github.com/diagrelay/diagrelay/internal/datadir"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// runEdge is serve --join: children on the socket, no host and no mailbox
// of its own; its identity lives in the data directory (docs/cluster.md).
func runEdge(o Options) error {
	id, err := datadir.OpenEdge(o.Data, o.EdgeName, cluster.ValidName)
	if err != nil {
		return err
	}
	defer id.Close()
	o.Cluster.Name, o.Cluster.Logger = id.Name, o.Logger
	edge, err := cluster.NewEdge(context.Background(), o.Cluster)
	if err != nil {
		return err
	}
	defer edge.Close()
	srv := service.New(service.Config{Mode: relay.ModePrint, Mailbox: edge.Mailbox(), Directory: edge, Edge: true,
		Logger: o.Logger, MaxPending: o.MaxPending, MaxConnsPerChild: o.MaxConnsPerChild, MaxUnsentTotal: o.MaxUnsentTotal,
		BindPeer: o.BindPeer, NoRedaction: o.NoRedaction})
	if err := edge.Start(srv); err != nil {
		return err
	}
	o.Logger.Info("cluster edge", "name", id.Name, "nats", o.Cluster.URL)
	o.Stdio, o.Mode, o.NoHostToken = false, relay.ModePrint, true // as the service runs it: logged so
	return serveUntilStopped(srv, o, nil, nil)
}
