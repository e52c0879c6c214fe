package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/diagrelay/diagrelay/internal/frame"
	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/sanitize"
)

// watch --plain frames a source as the notification does (relay's
// frame.Source): a leading mark cannot attach to the "[", a Prepend
// character cannot glue the "]", and a source the frame keeps nothing of
// shows no brackets.
func TestPlainFramesSourcesLikeTheNotification(t *testing.T) {
	for _, c := range []struct{ source, want string }{
		{"\u0338\u20e5lint", " [lint] m"},
		{"lint\u0d4e", " [lint_] m"},
		{"lint]: ok /root [system", " [lint_:_ok_/root__system] m"},
		{"✓✓", " m"},
	} {
		var b bytes.Buffer
		p := &Printer{W: &b, Loc: time.UTC}
		if err := p.Event(wire.Event{Kind: "delivered", Thread: "/root/x", At: t0, Level: "info", Source: wire.Ptr(c.source), Message: wire.Ptr("m")}); err != nil {
			t.Fatal(err)
		}
		want := "10:00:00.000 delivered /root/x info" + c.want + "\n"
		if b.String() != want {
			t.Errorf("source %+q: %q, want %q", c.source, b.String(), want)
		}
		if got := frame.Source(sanitize.Source(c.source)); !strings.Contains(want, "["+got+"]") && got != "" {
			t.Errorf("source %+q: the line does not hold relay's frame %q", c.source, got)
		}
	}
}

// fit lays text out in exactly the cells it is given, by the sanitizer's
// widths: wide, joined and combining characters included, cut or not.
func TestFitUsesTheSanitizersWidths(t *testing.T) {
	for _, s := range []string{
		"漢字のメッセージ", "family 👨\u200d👩\u200d👧\u200d👦 x", "👍🏽👍🏿", "🇯🇵🇫🇷", "1\ufe0f\u20e3 #\ufe0f\u20e3",
		"e\u0301\u0301\u0301 Tiếng Việt", "क्\u200dष ক্\u200dয", "می\u200cخواهم", "\U00020000\U0002A6D6", "⌚\ufe0e ☺\ufe0f",
	} {
		for w := 1; w <= sanitize.Width(s)+2; w++ {
			got := ansi.Strip(fit([]span{{s, plain}}, w))
			if n := sanitize.Width(got); n != w {
				t.Fatalf("fit(%+q, %d) = %+q: %d cells", s, w, got, n)
			}
		}
	}
}
