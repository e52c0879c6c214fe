package service

import (
	"testing"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
)

// A viewer keeps as many diagnostics as the relay's status does: the
// protocol's figure is the relay's.
func TestStatusDiagnosticsIsTheRelays(t *testing.T) {
	if wire.StatusDiagnostics != relay.MaxStatusDiagnostics {
		t.Fatalf("wire.StatusDiagnostics %d, relay.MaxStatusDiagnostics %d", wire.StatusDiagnostics, relay.MaxStatusDiagnostics)
	}
}
