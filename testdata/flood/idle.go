package main

import (
	"fmt"
	"net"
	"time"
)

// warmUp brings serve to the idle of a serve in use, the "idle warm"
// figure: one admitted report first (before 6e9b10a the first report
// built the redaction rules, 8 MiB of compiled expressions; serve now
// builds them at start), then 32 connections that connect and leave, whose leaving
// makes serve give its free heap back (service/memreturn.go) a second
// later; the caller reads the figure after that. The "cold" figure, read
// before, is serve just started with the runtimes open.
func warmUp(s *server, token string) error {
	ch, err := dialChild(s.socket, 5*time.Second)
	if err != nil {
		return err
	}
	if err := ch.roundTrip(helloFrame(token), `"result"`, 5*time.Second); err != nil {
		return err
	}
	f := `{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","message":"warm-up"}}` + "\n"
	if err := ch.roundTrip(f, `"result":{}`, 5*time.Second); err != nil {
		return err
	}
	ch.c.Close()
	base := s.proc.fds()
	var cs []net.Conn
	for range 32 {
		c, err := net.Dial("unix", s.socket)
		if err != nil {
			return fmt.Errorf("the burst: %w", err)
		}
		cs = append(cs, c)
	}
	// Serve counts a connection once it has accepted it (a peer gone
	// before accept costs one look and is not counted).
	for end := time.Now().Add(2 * time.Second); s.proc.fds() < base+len(cs) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range cs {
		c.Close()
	}
	time.Sleep(2500 * time.Millisecond)
	return nil
}
