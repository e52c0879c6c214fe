package bench

import (
	"regexp"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"

	"github.com/diagrelay/diagrelay/internal/testtext"
	"github.com/diagrelay/diagrelay/sanitize"
)

var input = testtext.Terminal(1 << 20)

func run(b *testing.B, f func(string) string) {
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		f(input)
	}
}

// sanitize.Clean with no limit: every rule of the sanitizer.
func BenchmarkClean(b *testing.B) {
	run(b, func(s string) string { return sanitize.Clean(s, 0) })
}

// charmbracelet/x/ansi Strip: removes escape sequences only; it keeps C0, C1
// and Bidi controls.
func BenchmarkAnsiStrip(b *testing.B) { run(b, ansi.Strip) }

// x/text runes.Remove chains: control and format characters, no escape
// sequences (their printable parameters survive).
func BenchmarkRunesRemove(b *testing.B) {
	t := transform.Chain(runes.Remove(runes.In(unicode.Cc)), runes.Remove(runes.In(unicode.Cf)))
	run(b, func(s string) string {
		out, _, _ := transform.String(t, s)
		return out
	})
}

// A regular-expression stripper of CSI and OSC sequences and C0 controls.
var escapeRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f]`)

func BenchmarkRegexp(b *testing.B) {
	run(b, func(s string) string { return escapeRE.ReplaceAllString(s, "") })
}

// The peers agree with Clean on what they claim to do, so the comparison
// is between working strippers.
func TestPeersStripSGR(t *testing.T) {
	in := "a \x1b[31mred\x1b[0m b"
	for name, got := range map[string]string{
		"Clean":  sanitize.Clean(in, 0),
		"Strip":  ansi.Strip(in),
		"Regexp": escapeRE.ReplaceAllString(in, ""),
	} {
		if got != "a red b" {
			t.Errorf("%s(%q) = %q", name, in, got)
		}
	}
}
