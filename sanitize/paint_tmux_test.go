package sanitize

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/diagrelay/diagrelay/internal/testutil"
)

// TestPaintedInTmux paints Clean's outputs in a real terminal, tmux (3.3a
// on glibc 2.36 is what outside testing used), and checks them cell by
// cell: each row is "> ", the output, then a cursor move to the column
// Width says the output ends at, and "#". The row tmux holds is exactly
// "> " + output + "#" only if tmux kept every code point (none dropped as
// width -1: each occupies a cell or combines into one) and the output
// takes exactly Width cells (a "#" after a gap, or over the output's last
// cell, shows otherwise).
//
// A tmux cell holds at most 21 bytes of UTF-8, and tmux drops what would
// pass them: the sanitizer keeps no cell past them (cellBytes), emoji ZWJ
// sequences included (👨‍👩‍👧‍👦, 25 bytes, becomes 👨‍👩‍👧 and 👦), so a cell
// over 21 bytes fails.
func TestPaintedInTmux(t *testing.T) {
	outs := paintCases()
	lines := paint(t, outs)
	for i, s := range outs {
		kept, over := tmuxCells(s)
		if got, want := lines[i], "> "+kept+"#"; got != want {
			t.Errorf("painted %+q (Width %d):\n got %+q\nwant %+q", s, Width(s), got, want)
		}
		for _, c := range over {
			t.Errorf("a cell of %d bytes, past tmux's 21: %+q", len(c), c)
		}
	}
}

// TestChannelsInTmux paints each channel's text, as Clean returns it, in
// tmux, and reads the payload back with the channel's decoder from what
// tmux drew and from the text: they agree (nothing rides in the text that
// the screen does not show), and for a channel whose payload Clean
// removes, every payload draws the same. The raw encodings of the two
// channels that tmux itself hides (a ZWJ chain past a cell, marks at the
// start joining the frame's cell) are painted too: there the decoder
// reads the payload from the text and not from the screen, so the check
// can fail.
func TestChannelsInTmux(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	type row struct {
		ch      channel
		p       []byte
		text    string
		raw     bool
		painted string
	}
	var rowsIn []row
	for _, ch := range channels {
		for k := range 4 {
			p := make([]byte, 12)
			for i := range p {
				p[i] = byte(rng.IntN(256))
			}
			if k == 0 {
				p = make([]byte, 12)
			}
			rowsIn = append(rowsIn, row{ch: ch, p: p, text: Clean(ch.encode(p), MessageLimit)})
			if ch.drawn || ch.name == "leading marks" {
				rowsIn = append(rowsIn, row{ch: ch, p: p, text: ch.encode(p), raw: true})
			}
		}
	}
	texts := make([]string, len(rowsIn))
	for i, r := range rowsIn {
		texts[i] = r.text
	}
	lines := paint(t, texts)
	first := map[string][]byte{}
	for i, r := range rowsIn {
		// What tmux drew of the text: the row less the frame ("> " and
		// the closing "#").
		drawn := strings.TrimSuffix(strings.TrimPrefix(lines[i], "> "), "#")
		fromScreen, fromText := r.ch.decode(drawn), r.ch.decode(r.text)
		if r.raw {
			if string(fromText) != string(r.p) || string(fromScreen) == string(fromText) {
				t.Errorf("%s, raw: the decoder reads %x from the text and %x from the screen; payload %x", r.ch.name, fromText, fromScreen, r.p)
			}
			continue
		}
		if string(fromScreen) != string(fromText) {
			t.Errorf("%s: %x rides in %+q undrawn (the screen gives %x)", r.ch.name, fromText, r.text, fromScreen)
		}
		if r.ch.drawn {
			if len(fromText) != 0 {
				t.Errorf("%s: decoded %x from %+q", r.ch.name, fromText, r.text)
			}
			continue
		}
		if f, ok := first[r.ch.name]; !ok {
			first[r.ch.name] = fromScreen
		} else if string(f) != string(fromScreen) || len(fromScreen) > 0 && string(fromScreen) == string(r.p) {
			t.Errorf("%s: payload %x draws as %x, the first as %x", r.ch.name, r.p, fromScreen, f)
		}
	}
}

// paint shows each text on a row of a tmux pane, "> " + text, then a
// cursor move to the column Width says the text ends at, and "#", and
// returns the rows as tmux holds them (trailing blanks trimmed). Each row
// is written to the pane with a write of its own: tmux drops a ZWJ that
// ends one read of the pty, and a row ends with "#".
func paint(t *testing.T, texts []string) []string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	dir, err := os.MkdirTemp("", "paint")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "tmux")
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-u", "-S", sock}, args...)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const cols, rows = 300, 60
	if out, err := tmux("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-s", "w", "sleep 600"); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })
	file := filepath.Join(dir, "rows")
	var all []string
	for len(texts) > 0 {
		chunk := texts[:min(len(texts), rows-2)]
		texts = texts[len(chunk):]
		var b strings.Builder
		for _, s := range chunk {
			b.WriteString("> " + s + "\x1b[" + strconv.Itoa(3+Width(s)) + "G#\r\n")
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		// printf writes each row in one write(2).
		show := "while IFS= read -r l; do printf '%s\\n' \"$l\"; done < " + file + "; sleep 600"
		if out, err := tmux("respawn-pane", "-k", "-t", "w", show); err != nil {
			t.Fatalf("respawn-pane: %v: %s", err, out)
		}
		var lines []string
		var out string
		testutil.EventuallyShow(t, 10*time.Second, func() bool {
			var err error
			if out, err = tmux("capture-pane", "-p", "-t", "w"); err != nil {
				t.Fatalf("capture-pane: %v: %s", err, out)
			}
			lines = strings.Split(out, "\n")
			return len(lines) > len(chunk) && strings.HasSuffix(strings.TrimRight(lines[len(chunk)-1], " "), "#")
		}, func() string { return "tmux never showed the rows:\n" + out })
		for i := range chunk {
			all = append(all, strings.TrimRight(lines[i], " "))
		}
	}
	return all
}

// paintCases are outputs of Clean to paint: the real-text cases, what the
// channels' encodings become, and text from the script generators.
func paintCases() []string {
	var outs []string
	for _, c := range realText {
		outs = append(outs, Clean(c.text, 0))
	}
	rng := rand.New(rand.NewPCG(7, 19))
	for _, ch := range channels {
		p := make([]byte, 8)
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		outs = append(outs, Clean(ch.encode(p), 100))
	}
	gens := []func([]byte) string{tokens, indic, arabic, emojiText, scriptText}
	for k := range 400 {
		data := make([]byte, 4+rng.IntN(40))
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		if s := Clean(gens[k%len(gens)](data), 100); s != "" && !viramaZWJUnjoined(s) {
			outs = append(outs, s)
		}
	}
	return outs
}

// overCells returns the cells of s longer than the 21 bytes tmux keeps.
func overCells(s string) []string {
	_, over := tmuxCells(s)
	return over
}

// viramaZWJUnjoined reports whether s holds a ZWJ after a virama that no
// letter follows, which the rules keep (RFC 5892 A.2) and tmux 3.3a
// misdraws: it drops the joiner there and shows it at the start of the
// next row painted (docs/sanitizer.md, "Noticed, left alone").
func viramaZWJUnjoined(s string) bool {
	rs := []rune(s)
	for k, r := range rs {
		if r == zwj && k > 0 && lookup(rs[k-1]).has(propVirama) && (k+1 == len(rs) || !unicode.IsLetter(rs[k+1])) {
			return true
		}
	}
	return false
}

// tmuxCells returns s as tmux 3.3a keeps it, and the cells of s (as Width
// groups them: a character that takes cells, the zero-width ones after
// it, and a character after a ZWJ) longer than its 21 bytes a cell.
func tmuxCells(s string) (kept string, over []string) {
	const cellBytes = 21
	var b strings.Builder
	cell, n := "", 0 // the current cell, and the bytes tmux kept of it
	zwjBefore := false
	flush := func() {
		if len(cell) > cellBytes {
			over = append(over, cell)
		}
		cell, n = "", 0
	}
	for _, r := range s {
		if cells(r) > 0 && !zwjBefore {
			flush()
		}
		cell += string(r)
		if size := len(string(r)); n+size <= cellBytes {
			b.WriteRune(r)
			n += size
		} else {
			n = cellBytes + 1 // nothing more fits in this cell
		}
		zwjBefore = r == zwj
	}
	flush()
	return b.String(), over
}
