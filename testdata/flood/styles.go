package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// style is one way to flood serve. Every child of the flood holds its own
// token (hello says it unless noHello) and conns connections to serve.
type style struct {
	name, what string
	conns      int  // connections per child
	noHello    bool // never say hello: a pending peer's flood
	noRead     bool // never read what serve writes
	fragment   int  // write each frame in pieces of this many bytes
	halfClose  bool // 800 frames with 256-byte ids, shut the write side, never read, again
	churn      bool // two dialers connect and close as fast as they can, no token
	// frame is child i's j-th frame, newline included.
	frame func(i, j int) []byte
}

func report(i, j int, extra string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"warning","message":"flood %d message %d"%s}}`+"\n", j, i, j, extra)
}

func probe(j int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.probe"}`+"\n", j)
}

// unknownMembers is about 64,000 bytes of distinct member names.
var unknownMembers = func() string {
	var b strings.Builder
	for k := 0; b.Len() < 64000; k++ {
		fmt.Fprintf(&b, `,"u%d":0`, k)
	}
	return b.String()
}()

// combiningMessage is a base letter and combining marks of two classes,
// near 64 KiB in all.
var combiningMessage = "e" + strings.Repeat("\u0301\u0323", 16000)

var styles = []style{
	{name: "unknown-members", what: "reports with ~64 KB of distinct unknown members in params", conns: 1,
		frame: func(i, j int) []byte { return report(i, j, unknownMembers) }},
	{name: "combining", what: "reports near 64 KiB of a base letter and combining marks", conns: 1,
		frame: func(i, j int) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"info","message":"%d %d %s"}}`+"\n", j, i, j, combiningMessage)
		}},
	{name: "non-readers", what: "probes, 4 connections each, never reading replies", conns: 4, noRead: true,
		frame: func(i, j int) []byte { return probe(j) }},
	{name: "fragments", what: "reports written 16 bytes per write", conns: 1, fragment: 16,
		frame: func(i, j int) []byte { return report(i, j, "") }},
	{name: "probes", what: "diagnostic.probe pipelined", conns: 1,
		frame: func(i, j int) []byte { return probe(j) }},
	{name: "invalid-json", what: "malformed JSON", conns: 1,
		frame: func(i, j int) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.probe"`+"\n", j)
		}},
	{name: "unknown-methods", what: "a method that does not exist", conns: 1,
		frame: func(i, j int) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"no.such%d"}`+"\n", j, j)
		}},
	{name: "pre-hello", what: "probes before any hello (64 pending peers)", conns: 1, noHello: true,
		frame: func(i, j int) []byte { return probe(j) }},
	{name: "invalid-reports", what: "wrong-type level, missing message, non-object params", conns: 1,
		frame: func(i, j int) []byte {
			switch j % 3 {
			case 0:
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":%d,"message":"m"}}`+"\n", j, j)
			case 1:
				return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":{"level":"info"}}`+"\n", j)
			}
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"diagnostic.report","params":[%d]}`+"\n", j, j)
		}},
	{name: "half-close", what: "800 frames with 256-byte ids, write side shut, never read, again (same token)", conns: 1, halfClose: true,
		frame: func(i, j int) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"%0256d","method":"diagnostic.probe"}`+"\n", j)
		}},
	{name: "after-close", what: "blank lines pipelined without reading, 4 connections each, then closed", conns: 4, noRead: true,
		frame: func(i, j int) []byte { return []byte(strings.Repeat("\n", 4096)) }},
	{name: "connect-churn", what: "2 dialers connect and close as fast as they can, no token", churn: true},
}

func styleNamed(name string) (style, bool) {
	for _, s := range styles {
		if s.name == name {
			return s, true
		}
	}
	return style{}, false
}

// flooder is the flooding process: it floods socket in style st, one
// child per token, and answers each line on stdin with the frames written
// so far (one per newline written) and the replies read. At stdin's end it
// closes every connection and exits.
func flooder(st style, socket string, tokens []string) {
	var frames, answered atomic.Int64 // frames written; replies read
	var mu sync.Mutex
	var open []net.Conn
	stop := make(chan struct{})
	track := func(c net.Conn) {
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	dial := func() net.Conn {
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			c, err := net.Dial("unix", socket)
			if err == nil {
				track(c)
				return c
			}
			time.Sleep(time.Millisecond)
		}
	}
	run := func(i int, tok string) {
		c := dial()
		if c == nil {
			return
		}
		if !st.noHello {
			io.WriteString(c, helloFrame(tok))
		}
		if !st.noRead {
			go func() {
				r := bufio.NewReaderSize(c, 64<<10)
				for {
					if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
						return
					}
					answered.Add(1)
				}
			}()
		}
		w := bufio.NewWriterSize(c, 64<<10)
		for j := 1; ; j++ {
			f := st.frame(i, j)
			lines := int64(bytes.Count(f, []byte("\n")))
			var err error
			if st.fragment > 0 {
				for len(f) > 0 && err == nil {
					n := min(st.fragment, len(f))
					_, err = c.Write(f[:n])
					f = f[n:]
				}
			} else {
				_, err = w.Write(f)
			}
			if err != nil {
				return
			}
			frames.Add(lines)
		}
	}
	switch {
	case st.churn:
		for range 2 {
			go func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if c, err := net.Dial("unix", socket); err == nil {
						c.Close()
						frames.Add(1)
					}
				}
			}()
		}
	case st.halfClose:
		for i, tok := range tokens {
			go func() {
				var held []net.Conn
				for j := 0; ; j++ {
					c := dial()
					if c == nil {
						return
					}
					buf := []byte(helloFrame(tok))
					for k := range 800 {
						buf = append(buf, st.frame(i, k)...)
					}
					c.SetWriteDeadline(time.Now().Add(2 * time.Second))
					if _, err := c.Write(buf); err == nil {
						frames.Add(801)
					}
					c.(*net.UnixConn).CloseWrite()
					held = append(held, c)
					if len(held) > 8 { // the peer keeps a few, as a leaky client would
						held[0].Close()
						held = held[1:]
					}
				}
			}()
		}
	default:
		for i, tok := range tokens {
			for range st.conns {
				go run(i, tok)
			}
		}
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(frames.Load(), answered.Load())
	}
	close(stop)
	mu.Lock()
	for _, c := range open {
		c.Close()
	}
	mu.Unlock()
}
