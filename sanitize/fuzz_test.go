package sanitize

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzClean checks the output contract on any bytes and any limit, and
// that a Writer fed the same bytes in pieces agrees with Clean.
func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"a\u009b31mb", "a\xe2\x1b[31mred", "a\x1b]0;✳ title\x1b\\b", "\x1b]0;evil",
		"🏳️‍🌈 👨‍👩‍👧‍👦 1️⃣", "می‌خواهم", "e\u0301\u0323", "Z\u0336\u0336\u0336",
		"\xed\xa0\x80\xc0\xaf", "a\u200D\u200Cb", "  a \t b  ",
	} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		limit %= 1200 // negative: no limit
		// The bytes themselves, and the bytes read as sentences of
		// troublesome tokens, which random bytes rarely spell: mixed, and
		// one script family at a time (idempotence whatever the mark order).
		for _, in := range []string{string(data), tokens(data), indic(data), arabic(data), emojiText(data)} {
			out := cleanChecked(t, in, limit)
			// Fed in pieces, and byte by byte (which takes the slow paths
			// only), a Writer agrees with Clean.
			splits := []int{len(in) / 3, len(in) / 3, len(in)/3 + 1, len(in) / 2, len(in) - 2}
			if s, err := streamed(in, limit, splits); err != nil || s != out {
				t.Errorf("Writer(%+q, %d) = %+q, %v; Clean = %+q", in, limit, s, err, out)
			}
			if s, err := streamed(in, limit, everyByte(in)); err != nil || s != out {
				t.Errorf("Writer byte by byte (%+q, %d) = %+q, %v; Clean = %+q", in, limit, s, err, out)
			}
		}
	})
}

// fuzzTokens are pieces that interact: escape-sequence parts, joiners,
// marks that compose, reorder or decompose, Hangul jamo, emoji parts,
// whitespace, invalid bytes and removed characters.
var fuzzTokens = [...]string{
	"a", "e", "1", " ", "\t", "\r\n", "\u00A0", "\u2028", "\u0085", "\x00", "\x7f",
	"\x1b", "[", "]", "P", "(", ";", "m", "\x07", "\\", "\u009b", "\u009c", "\u009d", "\x18",
	"\xe2", "\x9c", "\x80", "\xf0\x9f", "\xc2", "\xed\xa0\x80",
	"\u200B", "\u200C", "\u200D", "\uFE0E", "\uFE0F", "\uFE00", "\U000E0041", "\u034F", "\u00AD", "\u202E",
	"\u0301", "\u0323", "\u0336", "\u0344", "\u0345", "\u0342", "\u03B1", "\u1F00", "\u0958", "\u093C",
	"\u0915", "\u094D", "\u0CC6", "\u0CD5", "\u0F73", "\uFF9E", "\u212B", "\U0001D15E", "\u064E", "\u0651",
	"\u1100", "\u1161", "\u11A8", "\uAC00", "\uAC01",
	"😀", "👨", "🏳", "🌈", "🇯", "🇵", "\u20E3", "\U0001F3FD", "…", "\uFFFD", "ا", "ی",
	// The second edition's rules: braille blank, private use, unassigned,
	// reserved emoji, viramas and Indic letters, joining letters, marks
	// that do not restart the count, keycap bases, prepend, text-style
	// bases.
	"\u2800", "\uE000", "\U00040000", "\u0378", "\U0001FAF9", "\u094D", "\u09CD", "র", "য", "ب", "ر", "\u064E",
	"\u20DD", "\u093E", "\u0E31", "#", "*", "\u0D4E", "\u263A", "\u2764", "\U0001F441", "\U0001F5E8",
}

func tokens(data []byte) string { return spell(data, fuzzTokens[:]) }

// Script generators: the bytes read as text of one family, so that the
// fuzzer spends its time on the contexts of the joiner and mark rules
// (viramas after letters of their own script or another, nuktas and other
// low-class marks around them, ZWJ and ZWNJ anywhere, spaces between).
var (
	indicTokens = []string{
		"क", "ष", "र", "्", "़", "ा", "ि", "ँ", "ं", "॑", "́",
		"ক", "য", "র", "্", "়", "া", "ত্", "ঃ",
		"க", "்", "ಕ", "್", "಼", "ක", "්", "က", "္", "်", "ཀ", "྄", "ྒ",
		"a", " ", "‍", "‌", "‍‌", "ൎ", "്", "ന",
	}
	arabicTokens = []string{
		"ب", "ر", "ی", "م", "خ", "و", "ا", "ه", "ل", "ـ", "ك", "ـ",
		"َ", "ُ", "ِ", "ّ", "ْ", "ٰ", "ٔ", "ٕ", "ٓ",
		"‌", "‍", "‎", "؜", "؀", "۝", " ", "a", "١", "ܐ", "ܒ", "ܑ", "ߊ", "ߋ", "ᠠ", "ᠡ",
	}
	emojiTokens = []string{
		"👨", "👩", "👧", "🏳", "🌈", "❤", "🔥", "👁", "🗨", "☺", "⌚", "©", "#", "1", "*",
		"️", "︎", "‍", "⃣", "🏻", "🏽", "🇯", "🇵", "🏴", "󠁧", "󠁿",
		"🫨", "🰀", "𱍐", "́", " ", "a",
	}
)

func indic(data []byte) string     { return spell(data, indicTokens) }
func arabic(data []byte) string    { return spell(data, arabicTokens) }
func emojiText(data []byte) string { return spell(data, emojiTokens) }

func spell(data []byte, toks []string) string {
	var b []byte
	for _, c := range data {
		b = append(b, toks[int(c)%len(toks)]...)
	}
	return string(b)
}

// blnsPath finds shared/corpora/blns/blns.json in a directory above this
// package (the corpus sits beside the repository, not in it).
func blnsPath() string {
	dir, err := filepath.Abs(".")
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", "corpora", "blns", "blns.json")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// The Big List of Naughty Strings, through the same contract.
func TestBLNS(t *testing.T) {
	path := blnsPath()
	if path == "" {
		t.Skip("shared/corpora/blns/blns.json not found above the package")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) < 100 {
		t.Fatalf("only %d strings in %s", len(list), path)
	}
	for _, s := range list {
		for _, limit := range []int{0, MessageLimit, SourceLimit, 12, 1} {
			cleanChecked(t, s, limit)
		}
	}
}

// Random token sentences through the contract, deterministically: the
// cheap, always-on cousin of FuzzClean.
func TestRandomTokenSentences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	gens := []func([]byte) string{tokens, indic, arabic, emojiText}
	for k := range n {
		data := make([]byte, rng.IntN(60))
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		in := gens[k%len(gens)](data)
		limit := []int{0, 1, 2, 3, 5, 8, 13, 40}[rng.IntN(8)]
		out := Clean(in, limit)
		for _, v := range violations(in, limit, out) {
			t.Fatalf("Clean(%+q, %d) = %+q: %s", in, limit, out, v)
		}
		if s, err := streamed(in, limit, []int{rng.IntN(len(in) + 1)}); err != nil || s != out {
			t.Fatalf("Writer(%+q, %d) = %+q, %v; Clean = %+q", in, limit, s, err, out)
		}
		if s, err := streamed(in, limit, everyByte(in)); err != nil || s != out {
			t.Fatalf("Writer byte by byte (%+q, %d) = %+q, %v; Clean = %+q", in, limit, s, err, out)
		}
	}
}

// Plain text (words in several scripts, single spaces, SGR codes around
// words) has an exact expected result: the words, joined by single spaces.
// Long runs of it exercise the bulk copying that short inputs never reach,
// and the Writer fed byte by byte (which never copies in bulk) must agree.
func TestPlainTextRandom(t *testing.T) {
	words := []string{"a", "build", "failed:", "main.go:42", "x", "café", "naïve", "日本語", "Привет",
		"😀", "👍🏽", "שלום", "مرحبا", "Ελληνικά", "über", "✓", "—", "(ok)!", "1️⃣", "🇯🇵", "می‌خواهم"}
	sgr := []string{"\x1b[1m", "\x1b[31m", "\x1b[0m", "\x1b[38;5;208m", "\x1b[4;32m", "\x1b[m"}
	rng := rand.New(rand.NewPCG(3, 4))
	n := 400
	if testing.Short() {
		n = 40
	}
	for range n {
		var in strings.Builder
		picked := make([]string, 1+rng.IntN(300))
		for k := range picked {
			picked[k] = words[rng.IntN(len(words))]
			if k > 0 {
				in.WriteByte(' ')
			}
			if rng.IntN(4) == 0 {
				in.WriteString(sgr[rng.IntN(len(sgr))])
			}
			in.WriteString(picked[k])
			if rng.IntN(4) == 0 {
				in.WriteString(sgr[rng.IntN(len(sgr))])
			}
		}
		want := strings.Join(picked, " ")
		if got := Clean(in.String(), 0); got != want {
			t.Fatalf("Clean(%+q)\n got %+q\nwant %+q", in.String(), got, want)
		}
		limit := 1 + rng.IntN(utf16Len(want)+5)
		got := Clean(in.String(), limit)
		for _, v := range violations(in.String(), limit, got) {
			t.Fatalf("Clean(%+q, %d) = %+q: %s", in.String(), limit, got, v)
		}
		if s, err := streamed(in.String(), limit, everyByte(in.String())); err != nil || s != got {
			t.Fatalf("Writer byte by byte (%+q, %d) = %+q, %v; Clean = %+q", in.String(), limit, s, err, got)
		}
	}
}

// everyByte returns every offset in s, to feed a Writer byte by byte.
func everyByte(s string) []int {
	at := make([]int, len(s))
	for k := range at {
		at[k] = k
	}
	return at
}
