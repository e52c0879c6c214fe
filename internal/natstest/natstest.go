// Package natstest runs a real NATS server with JetStream on file, embedded
// from the github.com/nats-io/nats-server/v2 module, for the cluster's
// tests. Only tests import it, so the diagrelay binary carries no broker
// (cmd/diagrelay's TestBinaryHasNoBroker holds that).
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server is one embedded NATS server whose JetStream stores in Dir.
type Server struct {
	t   testing.TB
	Dir string
	// LazyFsync leaves sync_interval at its default (a background fsync
	// every two minutes) instead of always: what the cluster refuses.
	LazyFsync bool

	s               *server.Server
	port, httpPort  int
	URL, MonitorURL string
}

// Start starts a server with JetStream in a new temporary directory,
// synced on every write, on loopback ports of its own; it is shut down
// when the test ends.
func Start(t testing.TB) *Server {
	return StartWith(t, &Server{Dir: t.TempDir()})
}

// StartWith starts s (Dir and LazyFsync set by the caller).
func StartWith(t testing.TB, s *Server) *Server {
	t.Helper()
	s.t = t
	s.port, s.httpPort = freePort(t), freePort(t)
	s.URL = fmt.Sprintf("nats://127.0.0.1:%d", s.port)
	s.MonitorURL = fmt.Sprintf("http://127.0.0.1:%d", s.httpPort)
	s.start()
	t.Cleanup(s.Shutdown)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	o := &server.Options{
		Host: "127.0.0.1", Port: s.port,
		HTTPHost: "127.0.0.1", HTTPPort: s.httpPort,
		JetStream: true, StoreDir: s.Dir,
		SyncAlways: !s.LazyFsync,
		NoLog:      true, NoSigs: true,
	}
	ns, err := server.NewServer(o)
	if err != nil {
		s.t.Fatalf("natstest: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(20 * time.Second) {
		s.t.Fatalf("natstest: the server was not ready within 20 s")
	}
	s.s = ns
}

// JetStream connects a client to s for the test, as a raw publisher or an
// inspector would, and closes it when the test ends.
func (s *Server) JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.URL)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return js
}

// Shutdown stops the server; Restart starts it again on the same ports and
// directory.
func (s *Server) Shutdown() {
	if s.s != nil {
		s.s.Shutdown()
		s.s.WaitForShutdown()
		s.s = nil
	}
}

// Restart is Shutdown, then a server on the same ports and store.
func (s *Server) Restart() {
	s.t.Helper()
	s.Shutdown()
	s.start()
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
