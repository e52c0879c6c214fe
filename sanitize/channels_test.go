package sanitize

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// Issue 19's channels, each as an encoder that hides a payload in text and
// a decoder that reads it back. Each decoder reads its payload from the
// encoded text (so the test can fail), and nothing from what Clean makes
// of it; and whatever the payload, Clean's output is the same, so the
// channel carries no bit at all. (Channel 5, the frame, is in relay.)
//
// A drawn channel is one whose payload Clean may keep, but only where a
// terminal draws it: its decoder reads what a terminal would not draw
// (elements of a cell past tmux's 21 bytes), which must be nothing.
// TestPaintedInTmux checks both kinds against what tmux draws.
type channel struct {
	name   string
	encode func(payload []byte) string
	decode func(text string) []byte
	drawn  bool
}

// chainPicts are the 16 pictographs of the ZWJ-chain channel, a nibble
// each.
var chainPicts = []rune("👨👩👧👦🧑👶👴👵🐶🐱🌈🔥💋💻🚀🎨")

// decodeChain reads the nibbles of the chain channel from the elements
// that s holds past a cell's 21 bytes, as tmuxCells groups cells: what
// tmux would not draw.
func decodeChain(s string) []byte {
	var out []byte
	var c byte
	n := 0
	for _, cell := range overCells(s) {
		kept := 0
		for _, r := range cell {
			if kept += len(string(r)); kept <= cellBytes {
				continue
			}
			if k := strings.IndexRune(string(chainPicts), r); k >= 0 {
				c = c<<4 | byte(len([]rune(string(chainPicts)[:k])))
				if n++; n == 2 {
					out, c, n = append(out, c), 0, 0
				}
			}
		}
	}
	return out
}

var channels = []channel{
	{
		// 1: code points a terminal gives width -1: the reserved emoji
		// code points (a byte each) and CJK Extension H (a byte each).
		name: "invisible code points",
		encode: func(p []byte) string {
			var b strings.Builder
			b.WriteString("build ok")
			for i, c := range p {
				if i%2 == 0 {
					b.WriteRune(0x1FC00 + rune(c))
				} else {
					b.WriteRune(0x31350 + rune(c))
				}
			}
			return b.String()
		},
		decode: func(s string) []byte {
			var out []byte
			for _, r := range s {
				switch {
				case 0x1FC00 <= r && r < 0x1FD00:
					out = append(out, byte(r-0x1FC00))
				case 0x31350 <= r && r < 0x31450:
					out = append(out, byte(r-0x31350))
				}
			}
			return out
		},
	},
	{
		// 2: marks past what a cell holds: a letter, 8 accents, then 4
		// marks per byte, two bits each in the choice of mark.
		name: "excess marks",
		encode: func(p []byte) string {
			var b strings.Builder
			b.WriteString("e" + strings.Repeat("\u0301", maxMarks))
			for _, c := range p {
				writeMarks(&b, 0x0310, c)
			}
			return b.String() + " ok"
		},
		decode: decodeMarks(0x0310),
	},
	{
		// 2 again: marks within the 8 but past the 21 bytes a tmux cell
		// holds: a letter, 6 marks of 3 bytes, then 3-byte marks, two
		// bits each.
		name: "marks past a cell's bytes",
		encode: func(p []byte) string {
			var b strings.Builder
			for _, c := range p {
				b.WriteString("a" + strings.Repeat("\u20D6", 6))
				writeMarks(&b, 0x20D0, c)
				b.WriteByte(' ')
			}
			return b.String()
		},
		decode: decodeMarks(0x20D0),
	},
	{
		// An emoji ZWJ chain past the 21
		// bytes of a cell, two elements a byte, after 👨‍👩‍👧 (which
		// fills the cell): tmux draws none of them.
		name: "emoji ZWJ chain past a cell",
		encode: func(p []byte) string {
			var b strings.Builder
			b.WriteString("ok 👨\u200D👩\u200D👧")
			for _, c := range p {
				b.WriteString("\u200D" + string(chainPicts[c>>4]) + "\u200D" + string(chainPicts[c&15]))
			}
			return b.String()
		},
		decode: decodeChain,
		drawn:  true,
	},
	{
		// Marks at the start of a message,
		// which join the frame's ": " or quote: four a byte, two bits
		// each in the choice of mark.
		name: "leading marks",
		encode: func(p []byte) string {
			var b strings.Builder
			for _, c := range p {
				writeMarks(&b, 0x0300, c)
			}
			return b.String() + "build ok"
		},
		decode: func(s string) []byte {
			var out []byte
			var c byte
			n := 0
			for _, r := range s {
				if r < 0x0300 || r > 0x0303 {
					break // only the marks before the first base
				}
				c = c<<2 | byte(r-0x0300)
				if n++; n == 4 {
					out, c, n = append(out, c), 0, 0
				}
			}
			return out
		},
	},
	{
		// 3: selectors and joiners that change nothing: a bit per
		// character, 1 as a no-op selector or joiner after it: U+FE0E
		// after text-default ©, U+FE0F after emoji-default ⌚, ZWJ
		// between two Arabic joining letters.
		name: "no-op selectors and joiners",
		encode: func(p []byte) string {
			carriers := []struct{ base, mark string }{{"©", "\uFE0E"}, {"⌚", "\uFE0F"}, {"ب", "\u200D"}}
			var b strings.Builder
			for i, c := range p {
				for k := 7; k >= 0; k-- {
					cr := carriers[(i*8+7-k)%len(carriers)]
					b.WriteString(cr.base)
					if c>>k&1 == 1 {
						b.WriteString(cr.mark)
					}
				}
			}
			return b.String() + "ر"
		},
		decode: func(s string) []byte {
			var out []byte
			var c byte
			n := 0
			rs := []rune(s)
			for i, r := range rs {
				if r != '©' && r != '⌚' && r != 'ب' {
					continue
				}
				bit := byte(0)
				if i+1 < len(rs) && (rs[i+1] == 0xFE0E || rs[i+1] == 0xFE0F || rs[i+1] == 0x200D) {
					bit = 1
				}
				c = c<<1 | bit
				if n++; n == 8 {
					out, c, n = append(out, c), 0, 0
				}
			}
			return out
		},
	},
}

func TestChannelsCarryNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 19))
	for _, ch := range channels {
		t.Run(ch.name, func(t *testing.T) {
			var first string
			for k := range 64 {
				p := make([]byte, 16)
				for i := range p {
					p[i] = byte(rng.IntN(256))
				}
				if k == 0 {
					p = bytes.Repeat([]byte{0}, 16)
				}
				in := ch.encode(p)
				if got := ch.decode(in); !bytes.Equal(got, p) {
					t.Fatalf("the decoder does not read the encoder: %x, want %x", got, p)
				}
				for _, limit := range []int{0, MessageLimit} {
					out := Clean(in, limit)
					if ch.drawn {
						// The payload stays, drawn: nothing where a
						// terminal does not draw it.
						if got := ch.decode(out); len(got) != 0 {
							t.Fatalf("payload %x: decoded %x from %+q", p, got, out)
						}
						continue
					}
					if first == "" {
						first = out
					}
					// What the decoder reads from the output is the
					// same for every payload (nothing, or all zeros).
					if got := ch.decode(out); !bytes.Equal(got, ch.decode(first)) || k > 0 && bytes.Equal(got, p) {
						t.Fatalf("payload %x: decoded %x from %+q", p, got, out)
					}
					if out != first {
						t.Fatalf("payload %x changed the output: %+q, first %+q", p, out, first)
					}
				}
			}
		})
	}
}

// writeMarks writes c as 4 marks from the 4 that start at base, two bits
// each, high bits first; decodeMarks reads them back.
func writeMarks(b *strings.Builder, base rune, c byte) {
	for k := 6; k >= 0; k -= 2 {
		b.WriteRune(base + rune(c>>k&3))
	}
}

func decodeMarks(base rune) func(string) []byte {
	return func(s string) []byte {
		var out []byte
		var c byte
		n := 0
		for _, r := range s {
			if base <= r && r < base+4 {
				c = c<<2 | byte(r-base)
				if n++; n == 4 {
					out, c, n = append(out, c), 0, 0
				}
			}
		}
		return out
	}
}
