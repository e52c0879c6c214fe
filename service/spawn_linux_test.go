package service_test

import (
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/testutil"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/service"
)

// On a kernel without SO_PEERPIDFD a spawned child's exit is its token's
// last connection closing: its thread is closed then, and its place below
// the spawn token's path is free again. The stdio host's process is the
// test binary's parent, so the test process may use the spawn token.
func TestSpawnedThreadClosesWithoutPidfd(t *testing.T) {
	defer service.NoPidfd()()
	e := startConfig(t, service.Config{Mode: relay.ModeRPC, MaxNested: 1}, nil)
	var st wire.SpawnToken
	e.host.mustCallInto(wire.MethodSpawnToken, wire.PathParams{Path: "/root"}, &st)
	opener := e.dial("")
	var res wire.OpenResult
	opener.mustCallInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/a"}, &res)
	child := e.dial(res.Token) // the opening process's hello is admitted
	child.mustCall("diagnostic.report", map[string]any{"level": "info", "message": "spawned"})
	wantError(t, opener.call(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/b"}), wire.CodeTooManyConns, "too many nested runtimes (at most 1 live below /root)")

	child.closer.Close() // the token's last connection
	var s relay.Status
	testutil.Eventually(t, 10*time.Second, "/root/a closed with its last connection", func() bool {
		e.host.mustCallInto(wire.MethodThreadStatus, wire.PathParams{Path: "/root/a"}, &s)
		return !s.Open
	})
	if len(s.Diagnostics) != 1 {
		t.Fatalf("/root/a after its last connection closed: %+v", s)
	}
	opener.mustCallInto(wire.MethodSpawnOpen, wire.SpawnOpenParams{Token: st.Token, Path: "/root/b"}, &res)
}
