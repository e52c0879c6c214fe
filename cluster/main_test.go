package cluster

import (
	"os"
	"testing"

	"github.com/diagrelay/diagrelay/internal/natstest"
)

func TestMain(m *testing.M) {
	natstest.NodeMain() // a node of TestMonitorEveryNode's cluster, when asked
	os.Exit(m.Run())
}
