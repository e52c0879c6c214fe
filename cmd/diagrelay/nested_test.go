package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// This file tests, on the real binary, the bounds on what a child opens
// below it (docs/protocol.md, "Nested children"): --max-nested, and the
// one share its nested tokens draw on.

// openBelow opens path on a child's connection and returns the token.
func openBelow(t *testing.T, c rpcConn, path string) string {
	t.Helper()
	var res wire.OpenResult
	if err := c.callInto(wire.MethodRuntimeOpen, map[string]string{"path": path}, &res); err != nil {
		t.Fatalf("runtime.open %s: %v", path, err)
	}
	return res.Token
}

// The 65th live thread below a child is refused with -32007 (the default
// --max-nested), whichever nested child opens it; a close makes room.
func TestServeMaxNested(t *testing.T) {
	s := startServer(t, "", "")
	tok, _ := s.open("/root/x")
	child := s.dial(tok)
	grand := s.dial(openBelow(t, child, "/root/x/g"))
	for i := range 63 {
		openBelow(t, grand, fmt.Sprintf("/root/x/g/%d", i))
	}
	for _, c := range []rpcConn{child, grand} {
		_, err := c.call(wire.MethodRuntimeOpen, map[string]string{"path": "/root/x/g/over"})
		wantRPCError(t, "the 65th nested open", err, wire.CodeTooManyConns, "too many nested runtimes (at most 64 live below /root/x)")
	}
	if _, err := child.call(wire.MethodRuntimeClose, map[string]string{"path": "/root/x/g/0"}); err != nil {
		t.Fatal(err)
	}
	openBelow(t, child, "/root/x/after-close")

	s2 := startServer(t, "", "", "--max-nested", "2")
	tok, _ = s2.open("/root/y")
	child = s2.dial(tok)
	openBelow(t, child, "/root/y/1")
	openBelow(t, child, "/root/y/2")
	_, err := child.call(wire.MethodRuntimeOpen, map[string]string{"path": "/root/y/3"})
	wantRPCError(t, "the 3rd nested open under --max-nested 2", err, wire.CodeTooManyConns, "at most 2")
	wantExit(t, "--max-nested 0", runDiagrelay(t, nil, "", "serve", "--stdio", "--max-nested", "0"), 2, "--max-nested")
}

// floodProbes says hello with each token on a connection of its own, then
// has every connection pipeline diagnostic.probe as fast as the server
// takes them, and returns how many probes were answered in d after a
// warm-up: the share's burst is spent by then, so what is counted is the
// rate the share allows (a fresh burst spends very differently by how the
// first reads happen to split the pipelined frames).
func floodProbes(t *testing.T, socket string, tokens []string, warmUp, d time.Duration) int64 {
	t.Helper()
	var answered atomic.Int64
	var counting atomic.Bool
	var wg sync.WaitGroup
	conns := make([]net.Conn, len(tokens))
	ready := make(chan struct{}, len(tokens))
	for i, tok := range tokens {
		nc, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = nc
		fmt.Fprintf(nc, `{"jsonrpc":"2.0","id":0,"method":"session.hello","params":{"token":%q}}`+"\n", tok)
		wg.Add(2)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(nc)
			first := true
			for sc.Scan() {
				if first {
					if !bytes.Contains(sc.Bytes(), []byte(`"role":"child"`)) {
						t.Errorf("hello: %s", sc.Bytes())
					}
					first = false
					ready <- struct{}{}
					continue
				}
				if counting.Load() && bytes.Contains(sc.Bytes(), []byte(`"protocol"`)) {
					answered.Add(1)
				}
			}
		}()
		go func() {
			defer wg.Done()
			batch := bytes.Repeat([]byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.probe"}`+"\n"), 64)
			for {
				if _, err := nc.Write(batch); err != nil {
					return
				}
			}
		}()
	}
	for range tokens {
		select {
		case <-ready:
		case <-time.After(replyTimeout):
			t.Fatal("no hello reply")
		}
	}
	time.Sleep(warmUp)
	counting.Store(true)
	time.Sleep(d)
	counting.Store(false)
	for _, nc := range conns {
		nc.Close()
	}
	wg.Wait()
	return answered.Load()
}

// 16 nested tokens of one child, flooding together, get at most 2x what
// the child alone gets: they draw on its share. Each side starts with a
// fresh share (a new top-level child) and floods for the same time.
func TestServeNestedShareTheirChildsShare(t *testing.T) {
	s := startServer(t, "", "")
	const warmUp, d = time.Second, 2 * time.Second
	alone, _ := s.open("/root/alone")
	nAlone := floodProbes(t, s.socket, []string{alone}, warmUp, d)

	tok, _ := s.open("/root/nester")
	child := s.dial(tok)
	nested := make([]string, 16)
	for i := range nested {
		nested[i] = openBelow(t, child, fmt.Sprintf("/root/nester/n%d", i))
	}
	nNested := floodProbes(t, s.socket, nested, warmUp, d)
	ratio := float64(nNested) / float64(nAlone)
	t.Logf("probes answered in %v after %v of flood: the child alone %d, its 16 nested tokens together %d (%.2fx)", d, warmUp, nAlone, nNested, ratio)
	if nAlone == 0 || nNested == 0 {
		t.Fatalf("a side got nothing: alone %d, nested %d", nAlone, nNested)
	}
	if ratio > 2 {
		t.Fatalf("16 nested tokens got %.2fx the child's own throughput (at most 2x)", ratio)
	}
}
