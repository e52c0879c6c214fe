package watch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// FuzzRender feeds lines of event JSON (as the service would send them, or
// not) to a Model and draws it at any size: every frame is exactly h lines
// of w cells, and once watch's own styles are stripped, nothing but text
// and line breaks remains.
func FuzzRender(f *testing.F) {
	f.Add([]byte(`{"kind":"delivered","thread":"/root/x","level":"error","source":"s","message":"\u001b]0;t\u0007hi"}`), uint8(80), uint8(24))
	f.Add([]byte(`{"kind":"opened","thread":"/k","owner":"/root","generation":1}`+"\n"+`{"kind":"held","thread":"/k","message":"\u202eevil","notifyType":"warning"}`), uint8(40), uint8(12))
	f.Add([]byte(`{"kind":"notified","thread":"","message":"漢字👨‍👩‍👧 e\u0301","notifyType":"info"}`), uint8(41), uint8(13))
	f.Add([]byte(`{"kind":"lost","count":18446744073709551615}`), uint8(200), uint8(60))
	f.Fuzz(func(t *testing.T, data []byte, w, h uint8) {
		st := NewState()
		st.SetThreads([]wire.ThreadInfo{{Path: "/root/x", Parent: "/root", Open: true, Generation: 1}})
		st.SetStatus(wire.Status{Path: "/root/x", Parent: "/root"})
		m := NewModel(st, nil, "fuzz", nil)
		for _, line := range bytes.Split(data, []byte("\n")) {
			var ev wire.Event
			if json.Unmarshal(line, &ev) == nil {
				m.Update(EventMsg(ev))
			}
		}
		m.Update(key("j"))
		m.Update(key("enter"))
		m = resized(m, int(w), int(h))
		out := m.Render()
		lines := strings.Split(out, "\n")
		if len(lines) != int(h) && !(h == 0 && len(lines) == 1) {
			t.Fatalf("%dx%d: %d lines", w, h, len(lines))
		}
		for _, l := range lines {
			if n := screenWidth(l); n != int(w) && h > 0 {
				t.Fatalf("%dx%d: a line of %d cells: %q", w, h, n, l)
			}
		}
		for _, r := range ansi.Strip(out) {
			if r != '\n' && (unicode.IsControl(r) || r == 0x1b) {
				t.Fatalf("control %U on screen: %q", r, out)
			}
		}
	})
}
