package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/internal/testtext"
)

// The bulk paths of a text run (32- and 8-byte ASCII chunks, the copying
// loop with its inline CSI removal, the 2-byte groups and bitmaps of
// plainChars) only start on long input and have edges at every chunk
// offset. Every input here puts one disturbance at each offset of a long
// plain text and checks Clean against the contract and against a Writer
// fed byte by byte, which takes none of the bulk paths.
func TestRunEdges(t *testing.T) {
	bases := []string{
		strings.Repeat("plain ascii words ", 6),
		strings.Repeat("Привет мир ", 6),
		strings.Repeat("日本語のテキスト ", 5),
		strings.Repeat("😀👍🏽 🏳️‍🌈 ", 5),
		strings.Repeat("a \x1b[31mred\x1b[0m b é ", 5),
		strings.Repeat("αβγδ", 12),
	}
	disturbances := []string{
		" ", "  ", "\t", "\x00", "\x7f", "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf0\x8f\xbf\xbf",
		"\x1b", "\x1b[", "\x1b[31", "\x1b[31m", "\x1b[38;5;208;48;5;17;1m", "\x1b[0123456789abcdefm", "\x1b]0;t\a",
		"\u0301", "\u200d", "\u200b", "\ufe0f", "\U0001F3FD", "👍\U0001F3FD", "a\U0001F3FD", "\U0001F3FD\U0001F3FD",
		" \u0301", " \u200b", "\u00a0", "\u0378", "\U00040000", "\u0387", "é", "日", "😀",
	}
	for _, base := range bases {
		for _, d := range disturbances {
			for at := 0; at <= 40 && at <= len(base); at++ {
				in := base[:at] + d + base[at:]
				for _, limit := range []int{0, 17, 33} {
					out := Clean(in, limit)
					for _, v := range violations(in, limit, out) {
						t.Fatalf("Clean(%+q, %d) = %+q: %s", in, limit, out, v)
					}
					if s, err := streamed(in, limit, everyByte(in)); err != nil || s != out {
						t.Fatalf("Writer byte by byte (%+q, %d) = %+q, %v; Clean = %+q", in, limit, s, err, out)
					}
				}
			}
		}
	}
}

// cut finds the end of the room from the units the cleaner counted, so
// the count must be exact whenever a text is cut.
func TestUnitsCountedExactly(t *testing.T) {
	inputs := []string{testtext.Terminal(5000), longWordsInput(5000), hostileInput(5000), asciiInput(5000)}
	for k := range 300 {
		data := make([]byte, 40+k)
		for i := range data {
			data[i] = byte(i*7 + k*13)
		}
		inputs = append(inputs, tokens(data))
	}
	for _, in := range inputs {
		for _, limit := range []int{1, 2, 5, 80, 1000, 3000} {
			c := cleaner[string]{limit: limit}
			c.feed(in, true)
			c.finish()
			x := string(c.out) + c.src[c.lo:c.hi]
			if n := utf16Len(x); c.units != n {
				t.Fatalf("limit %d, %+q: counted %d units, the output has %d", limit, in[:min(len(in), 60)], c.units, n)
			}
		}
	}
}

// The plain-character bitmaps agree with the table for every code point
// they cover, and no overlong form or surrogate passes them.
func TestPlainBitmaps(t *testing.T) {
	var buf [4]byte
	for r := rune(0x80); r < tableSize; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		want := lookup(r)&runMask == runProps // builds the block
		n := utf8.EncodeRune(buf[:], r)
		w := uint32(buf[0]) | uint32(buf[1])<<8 | uint32(buf[2])<<16 | uint32(buf[3])<<24
		got := plainLenBMP(w)
		if got == 0 {
			got = plainLen1(w)
		}
		if (got != 0) != want || got != 0 && got != n {
			t.Fatalf("%U: plainLen %d, plain %v", r, got, want)
		}
	}
	// Overlong 2-, 3- and 4-byte forms of plain characters, and
	// surrogates.
	for _, b := range [][]byte{{0xC1, 0xA1, 0, 0}, {0xE0, 0x81, 0xA1, 0}, {0xE0, 0x90, 0x80, 0}, {0xF0, 0x80, 0x81, 0xA1},
		{0xF0, 0x8F, 0xBF, 0xBF}, {0xED, 0xA0, 0x80, 0}, {0xED, 0xBF, 0xBF, 0}} {
		w := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		if plainLenBMP(w) != 0 || plainLen1(w) != 0 {
			t.Errorf("% x passes the bitmaps", b)
		}
	}
}
