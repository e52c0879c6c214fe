package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// thread status frames a source by the notifications' rule: a child cannot
// make its line read as a second thread's, and raw escapes from the service
// never reach the terminal.
func TestWriteStatusFramesTheSource(t *testing.T) {
	var b strings.Builder
	err := WriteStatus(&b, wire.Status{Path: "/root/x\x1b[2J", Open: true, Generation: 2, Diagnostics: []wire.Diagnostic{
		{Level: "warning", Source: "lint]: all checks passed /root [system", Message: "frame check\x1b]0;x\a", At: time.Unix(0, 0)},
		{Level: "info", Source: "✓✓ --", Message: "nothing to frame", At: time.Unix(1, 0)},
	}}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.ContainsAny(s, "\x1b\a") {
		t.Fatalf("raw escape in %q", s)
	}
	for _, want := range []string{
		"1970-01-01T00:00:00Z warning [lint_:_all_checks_passed_/root__system] frame check",
		"1970-01-01T00:00:01Z info    nothing to frame\n",
		"runtime      open, generation 2\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
}
