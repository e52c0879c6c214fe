// Command floor is the anchor of docs/performance.md, "One child without
// two hand-offs": the least a request/reply server with one fdatasync per
// request does on this machine, one client in a closed loop, as a ratio to
// the disk's fsyncs/s measured before and after on the same file system.
// It runs the server twice, in a process of its own: handling each line
// on the connection's goroutine (handoff=0), and handing it to a second
// goroutine and taking the reply back (handoff=1).
//
//	go run ./cmd/diagrelay/testdata/floor
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const requests = 3000

func main() {
	if len(os.Args) == 5 && os.Args[1] == "serve" {
		serve(os.Args[2], os.Args[3], os.Args[4] == "1")
		return
	}
	dir, err := os.MkdirTemp("", "floor")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, h := range []string{"0", "1"} {
		sock := dir + "/s" + h
		cmd := exec.Command(os.Args[0], "serve", sock, dir+"/f"+h, h)
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		var c net.Conn
		for range 200 {
			if c, err = net.Dial("unix", sock); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			log.Fatal(err)
		}
		r := bufio.NewReader(c)
		before := fsyncRate(dir)
		cpu0 := cpuTime(cmd.Process.Pid)
		t0 := time.Now()
		for range requests {
			c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"diagnostic.report","params":{"level":"warning","message":"x"}}` + "\n"))
			if _, err := r.ReadSlice('\n'); err != nil {
				log.Fatal(err)
			}
		}
		rate := requests / time.Since(t0).Seconds()
		cpu := cpuTime(cmd.Process.Pid) - cpu0
		after := fsyncRate(dir)
		fmt.Printf("handoff=%s  %.0f requests/s  %.2f of %.0f fsyncs/s  %.0f µs CPU/request\n",
			h, rate, rate/((before+after)/2), (before+after)/2, float64(cpu.Microseconds())/requests)
		c.Close()
		cmd.Wait()
	}
}

// serve answers each line on the one connection to sock after writing it
// to file and flushing it.
func serve(sock, file string, handoff bool) {
	l, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	f.Truncate(64 << 20) // blocks that exist: fdatasync flushes data only
	f.Sync()
	c, err := l.Accept()
	if err != nil {
		log.Fatal(err)
	}
	var off int64
	commit := func(line []byte) []byte {
		f.WriteAt(line, off)
		off += int64(len(line))
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			log.Fatal(err)
		}
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	}
	work, done := make(chan []byte), make(chan []byte)
	go func() {
		for line := range work {
			done <- commit(line)
		}
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		var reply []byte
		if handoff {
			work <- line
			reply = <-done
		} else {
			reply = commit(line)
		}
		c.Write(reply)
	}
}

// fsyncRate is the disk's fdatasyncs/s of 100-byte writes in dir.
func fsyncRate(dir string) float64 {
	f, err := os.CreateTemp(dir, "probe")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	f.Truncate(1 << 20)
	f.Sync()
	b := make([]byte, 100)
	const n = 1000
	t0 := time.Now()
	for i := range n {
		f.WriteAt(b, int64(i*len(b)))
		syscall.Fdatasync(int(f.Fd()))
	}
	return n / time.Since(t0).Seconds()
}

// cpuTime is process pid's user + system time (USER_HZ is 100 on Linux).
func cpuTime(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		log.Fatal(err)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}
