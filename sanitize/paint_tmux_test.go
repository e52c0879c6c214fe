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
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	outs := paintCases()
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
	for len(outs) > 0 {
		chunk := outs[:min(len(outs), rows-2)]
		outs = outs[len(chunk):]
		var b strings.Builder
		for _, s := range chunk {
			b.WriteString("> " + s + "\x1b[" + strconv.Itoa(3+Width(s)) + "G#\r\n")
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := tmux("respawn-pane", "-k", "-t", "w", "cat "+file+"; sleep 600"); err != nil {
			t.Fatalf("respawn-pane: %v: %s", err, out)
		}
		var lines []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			out, err := tmux("capture-pane", "-p", "-t", "w")
			if err != nil {
				t.Fatalf("capture-pane: %v: %s", err, out)
			}
			lines = strings.Split(out, "\n")
			if len(lines) > len(chunk) && strings.HasSuffix(strings.TrimRight(lines[len(chunk)-1], " "), "#") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tmux never showed the rows:\n%s", out)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for i, s := range chunk {
			kept, over := tmuxCells(s)
			if got, want := strings.TrimRight(lines[i], " "), "> "+kept+"#"; got != want {
				t.Errorf("painted %+q (Width %d):\n got %+q\nwant %+q", s, Width(s), got, want)
			}
			for _, c := range over {
				t.Errorf("a cell of %d bytes, past tmux's 21: %+q", len(c), c)
			}
		}
	}
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
	gens := []func([]byte) string{tokens, indic, arabic, emojiText}
	for k := range 240 {
		data := make([]byte, 4+rng.IntN(40))
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		if s := Clean(gens[k%len(gens)](data), 100); s != "" {
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
