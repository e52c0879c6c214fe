package watch

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

func TestPrinterLinesAreClean(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		var b bytes.Buffer
		p := &Printer{W: &b, JSON: asJSON, Loc: time.UTC}
		p.Threads([]wire.ThreadInfo{{Path: "/k", Owner: "/root", Open: true, Generation: 1}})
		for _, msg := range hostile {
			p.Event(wire.Event{Kind: "delivered", Thread: "/root/x", At: t0, Level: "error", Source: wire.Ptr("s\x1b[1m"), Message: wire.Ptr(msg)})
		}
		p.Event(wire.Event{Kind: "notified", At: t0, NotifyType: "warning", Message: wire.Ptr("2 diagnostic notifications were not shown")})
		p.Event(wire.Event{Kind: "lost", At: t0, Count: 7})
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 1+len(hostile)+2 {
			t.Fatalf("json=%v: %d lines:\n%s", asJSON, len(lines), b.String())
		}
		for _, l := range lines {
			if strings.ContainsAny(l, "\x1b\r\t\u202e\u009b") {
				t.Fatalf("json=%v: control in %q", asJSON, l)
			}
			if asJSON {
				var ev wire.Event
				if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Kind == "" {
					t.Fatalf("%q: %v", l, err)
				}
			}
		}
		if !asJSON && (lines[0] != "thread /k open gen 1 diagnostics 0 dropped duplicate 0 rate 0 cap 0 invalid 0 redacted 0 owner /root" ||
			lines[4] != "10:00:00.000 delivered /root/x error [s] click me" ||
			lines[len(lines)-2] != "10:00:00.000 notified summary warning: 2 diagnostic notifications were not shown") {
			t.Fatalf("plain:\n%s", b.String())
		}
	}
}

// TestMemory10000Threads measures what watch holds for a session of
// 10,000 threads, each with its 20 diagnostics loaded, and how long one
// frame takes to draw, and holds them to bounds about twice what they are
// (3.0 MB listed, 30.6 MB loaded, frames in milliseconds): a copy of each
// row, a diagnostic kept twice or a frame that walks every thread per row
// fails it.
func TestMemory10000Threads(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st := NewState()
	list := make([]wire.ThreadInfo, 10000)
	for i := range list {
		list[i] = wire.ThreadInfo{Path: "/root/t" + itoa(uint64(i/100)) + "/c" + itoa(uint64(i)), Open: true, Generation: 1}
	}
	st.SetThreads(list)
	runtime.GC()
	var listed runtime.MemStats
	runtime.ReadMemStats(&listed)
	for _, ti := range list {
		st.SetStatus(wire.Status{Path: ti.Path, Parent: ti.Parent, Owner: ti.Owner, Open: ti.Open, Generation: ti.Generation})
		for j := range 20 {
			st.Apply(wire.Event{Kind: "delivered", Thread: ti.Path, At: t0, Level: "warning", Source: wire.Ptr("lint"),
				Message: wire.Ptr("eslint reported a problem number " + itoa(uint64(j)) + " in a file of this thread")})
		}
	}
	m := resized(NewModel(st, nil, "s", time.UTC), 160, 50)
	start := time.Now()
	m.Render()
	first := time.Since(start)
	start = time.Now()
	m.Update(key("down"))
	m.Render()
	next := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	listedBytes := int64(listed.HeapAlloc) - int64(before.HeapAlloc)
	loadedBytes := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("10000 threads: heap %.1f MB listed, %.1f MB with 20 diagnostics each; first frame %v, next %v",
		float64(listedBytes)/1e6, float64(loadedBytes)/1e6, first, next)
	runtime.KeepAlive(m)
	const (
		maxPerThread     = 800 // bytes a listed thread may hold
		maxPerDiagnostic = 320 // bytes each loaded diagnostic may add
		maxFrame         = 2 * time.Second
	)
	if n := int64(len(list)); listedBytes > n*maxPerThread {
		t.Errorf("listed: %d bytes a thread, want at most %d", listedBytes/n, maxPerThread)
	}
	if n := int64(len(list) * 20); loadedBytes-listedBytes > n*maxPerDiagnostic {
		t.Errorf("loaded: %d bytes a diagnostic, want at most %d", (loadedBytes-listedBytes)/n, maxPerDiagnostic)
	}
	if first > maxFrame || next > maxFrame {
		t.Errorf("frames took %v and %v, want at most %v each", first, next, maxFrame)
	}
}
