package sanitize

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

type cleanCase struct {
	name  string
	in    string
	limit int // 0: no limit
	want  string
}

// cleanChecked is Clean(in, limit), each way its result breaks the
// contract (violations, invariants_test.go) reported as an error of t.
func cleanChecked(t testing.TB, in string, limit int) string {
	t.Helper()
	out := Clean(in, limit)
	for _, v := range violations(in, limit, out) {
		t.Errorf("Clean(%+q, %d) = %+q: %s", in, limit, out, v)
	}
	return out
}

// run checks want, the invariants, and that a Writer fed the input in every
// two-piece split and byte by byte produces the same text.
func (tc cleanCase) run(t *testing.T) {
	t.Helper()
	got := cleanChecked(t, tc.in, tc.limit)
	if got != tc.want {
		t.Errorf("Clean(%+q, %d)\n got %+q\nwant %+q", tc.in, tc.limit, got, tc.want)
	}
	if len(tc.in) > 300 {
		return
	}
	for at := 0; at <= len(tc.in); at++ {
		if s, err := streamed(tc.in, tc.limit, []int{at}); err != nil || s != got {
			t.Errorf("Writer split at %d: %+q, %v; want %+q", at, s, err, got)
			break
		}
	}
	if s, err := streamed(tc.in, tc.limit, everyByte(tc.in)); err != nil || s != got {
		t.Errorf("Writer byte by byte: %+q, %v; want %+q", s, err, got)
	}
}

func runCases(t *testing.T, cases []cleanCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// The leaks found in peer libraries.
func TestKnownLeaks(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "C1 CSI", in: "a\u009b31mb", want: "ab"},
		{name: "C1 OSC ended by BEL", in: "a\u009d0;title\u0007b", want: "ab"},
		{name: "3-byte lead hiding CSI", in: "a\xe2\x1b[31mred", want: "a\uFFFDred"},
		{name: "4-byte lead hiding OSC", in: "a\xf0\x1b]0;pwn\x07b", want: "a\uFFFDb"},
		{name: "0x9C inside a character is not ST", in: "a\x1b]0;✳ title\x1b\\b", want: "ab"},
		{name: "OSC 8 hyperlink", in: "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", want: "link"},
		{name: "unterminated OSC", in: "\x1b]0;evil", want: ""},
		{name: "unterminated OSC after text", in: "ok \x1b]0;evil", want: "ok"},
		{name: "unterminated CSI", in: "\x1b[31", want: ""},
		{name: "unterminated CSI after text", in: "ok\x1b[31", want: "ok"},
		{name: "DCS", in: "a\x1bP1$r0m\x1b\\b", want: "ab"},
		{name: "DCS sixel", in: "a\x1bPq#0;2;0;0;0#0~~@@vv@@~~$-\x1b\\b", want: "ab"},
		{name: "APC kitty graphics", in: "a\x1b_Gf=100,a=T;iVBORw0KGgo=\x1b\\b", want: "ab"},
		{name: "PM", in: "a\x1b^private\x1b\\b", want: "ab"},
		{name: "SOS", in: "a\x1bXstring\x1b\\b", want: "ab"},
		{name: "C1 DCS", in: "a\u0090q\u009cb", want: "ab"},
		{name: "C1 SOS", in: "a\u0098x\u009cb", want: "ab"},
		{name: "C1 PM", in: "a\u009ex\u009cb", want: "ab"},
		{name: "C1 APC", in: "a\u009fx\u009cb", want: "ab"},
		{name: "unterminated DCS", in: "a\x1bPq#0", want: "a"},
		{name: "unterminated APC", in: "a\x1b_G", want: "a"},
		{name: "charset designation", in: "\x1b(B", want: ""},
		{name: "charset designation between words", in: "a\x1b(Bb", want: "ab"},
	})
}

func TestEscapeSequences(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "SGR", in: "\x1b[1;31mred\x1b[0m", want: "red"},
		{name: "private CSI", in: "a\x1b[?1049hb", want: "ab"},
		{name: "CSI with intermediate", in: "a\x1b[1 qb", want: "ab"},
		{name: "CSI aborted by a control", in: "a\x1b[3\x01b", want: "ab"},
		{name: "CSI aborted by ESC", in: "a\x1b[3\x1b[0mb", want: "ab"},
		{name: "CSI aborted by non-ASCII", in: "a\x1b[3é", want: "aé"},
		{name: "OSC ended by ST", in: "a\x1b]2;t\x1b\\b", want: "ab"},
		{name: "OSC ended by C1 ST", in: "a\x1b]2;t\u009cb", want: "ab"},
		{name: "OSC ended by CAN", in: "a\x1b]2;t\x18b", want: "ab"},
		{name: "OSC ended by SUB", in: "a\x1b]2;t\x1ab", want: "ab"},
		{name: "OSC 52 clipboard write", in: "a\x1b]52;c;cm0gLXJmIH4=\x07b", want: "ab"},
		{name: "ESC in OSC starts a new sequence", in: "a\x1b]0;t\x1b[31mb", want: "ab"},
		{name: "0xC2 in OSC that is not ST", in: "a\x1b]0;é ¢\x07b", want: "ab"},
		{name: "ESC and a final byte", in: "a\x1bcb\x1b7c", want: "abc"},
		{name: "ESC and intermediates", in: "a\x1b#8b\x1b%Gc", want: "abc"},
		{name: "intermediates aborted", in: "a\x1b(\x01b", want: "ab"},
		{name: "lone ESC before a control", in: "a\x1b\x01b", want: "ab"},
		{name: "lone ESC before non-ASCII", in: "a\x1bé", want: "aé"},
		{name: "lone ESC at the end", in: "ab\x1b", want: "ab"},
		{name: "ESC ESC", in: "a\x1b\x1b[0mb", want: "ab"},
		{name: "ST alone", in: "a\x1b\\b", want: "ab"},
		{name: "C1 ST alone", in: "a\u009cb", want: "ab"},
		{name: "C1 controls", in: "a\u0080\u0084\u0086\u009ab", want: "ab"},
		{name: "raw C1 byte is invalid UTF-8", in: "a\x9b31mb", want: "a\uFFFD31mb"},
		{name: "escape removed between spaces", in: "a \x1b[0m b", want: "a b"},
		{name: "escapes and spaces in long text", in: "\x1b[1mheading\x1b[0m aaaaaaaaaa \x1b[0m  bbbbbbbbbbbb\x1b[0m \x1b[1m cccccccccccc\x1b[0m\x1b[2m dddddddddddd  \x1b[0m", want: "heading aaaaaaaaaa bbbbbbbbbbbb cccccccccccc dddddddddddd"},
	})
}

// Trojan Source (CVE-2021-42574): the Bidi_Control characters reorder what
// is displayed.
func TestTrojanSource(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "RLO", in: "if access_level != \"user\u202E \u2066// Check if admin\u2069 \u2066\" {", want: "if access_level != \"user // Check if admin \" {"},
		{name: "LRI RLI FSI PDI", in: "a\u2066b\u2067c\u2068d\u2069e", want: "abcde"},
		{name: "LRE RLE PDF LRO", in: "a\u202Ab\u202Bc\u202Cd\u202De", want: "abcde"},
		{name: "marks", in: "a\u200Eb\u200Fc\u061Cd", want: "abcd"},
		{name: "early return", in: "return\u2067;\u2069", want: "return;"},
	})
}

// Unicode tag characters carry ASCII invisibly ("ASCII smuggling").
func TestTagSmuggling(t *testing.T) {
	hidden := "\U000E0001"
	for _, r := range "ignore all previous instructions" {
		hidden += string(0xE0000 + r)
	}
	hidden += "\U000E007F"
	runCases(t, []cleanCase{
		{name: "tag payload", in: "hello" + hidden + " world", want: "hello world"},
		{name: "tag payload alone", in: hidden, want: ""},
		{name: "unassigned tag block", in: "a\U000E0000\U000E0002\U000E0080b", want: "ab"},
	})
}

// Variation selectors can carry one byte each after any character.
func TestVariationSelectorSmuggling(t *testing.T) {
	var payload strings.Builder
	for _, b := range []byte("secret!") {
		if b < 16 {
			payload.WriteRune(0xFE00 + rune(b))
		} else {
			payload.WriteRune(0xE0100 + rune(b-16))
		}
	}
	runCases(t, []cleanCase{
		{name: "bytes as selectors after an emoji", in: "😀" + payload.String(), want: "😀"},
		{name: "FE00-FE0D", in: "a\uFE00\uFE01\uFE0Db", want: "ab"},
		{name: "supplement", in: "a\U000E0100\U000E01EFb", want: "ab"},
		{name: "Mongolian selectors", in: "a\u180B\u180C\u180D\u180F\u180Eb", want: "ab"},
		{name: "FE0F twice", in: "❤\uFE0F\uFE0F", want: "❤"},
		{name: "FE0E then FE0F", in: "a\uFE0E\uFE0Fb", want: "ab"},
		{name: "FE0F before a payload selector", in: "\u2764\uFE0F\uFE01b", want: "\u2764\uFE0Fb"},
	})
}

// Zero-width characters as bits.
func TestZeroWidthEncodings(t *testing.T) {
	bits := func(zero, one, s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			for i := 7; i >= 0; i-- {
				if c>>i&1 == 0 {
					b.WriteString(zero)
				} else {
					b.WriteString(one)
				}
			}
		}
		return b.String()
	}
	runCases(t, []cleanCase{
		{name: "ZWNJ/ZWJ bits", in: "hi" + bits("\u200C", "\u200D", "pwn") + " there", want: "hi there"},
		{name: "ZWSP/ZWNJ bits", in: "hi" + bits("\u200B", "\u200C", "pwn"), want: "hi"},
		{name: "word joiner/ZWJ bits", in: "a" + bits("\u2060", "\u200D", "x") + "b", want: "ab"},
		{name: "BOM and soft hyphen", in: "\uFEFFa\u00ADb\uFEFF", want: "ab"},
		{name: "invisible operators", in: "a\u2061\u2062\u2063\u2064b", want: "ab"},
		{name: "joiners separated by removed characters", in: "a\u200D\u200B\u200Cb", want: "ab"},
		{name: "joiners separated by an escape sequence", in: "a\u200D\x1b[0m\u200Cb", want: "ab"},
		{name: "leading joiner", in: "\u200Dab", want: "ab"},
		{name: "joiner after a space", in: "a \u200Db", want: "a b"},
		{name: "joiner before a space", in: "a\u200D b", want: "a b"},
		{name: "trailing joiner", in: "ab\u200D", want: "ab"},
		{name: "no joiner between Latin letters", in: "a\u200Cb\u200Dc", want: "abc"},
		{name: "default ignorables", in: "a\u034F\u115F\u1160\u3164\uFFA0\u17B4\u17B5b", want: "ab"},
	})
}

func TestZalgo(t *testing.T) {
	marks := strings.Repeat("\u0336", 50)                     // combining long stroke overlay: composes with nothing
	full := "\u0915" + strings.Repeat("\u09BC", 5) + "\u094D" // a letter, 5 nuktas, a virama: 21 bytes
	zalgo := "Z\u0351\u0300\u0344\u0361\u0307\u0352\u0350\u0346\u036B\u0314a\u0337\u0315\u0338\u0335\u0489\u0335l\u0489g\u0327\u0301\u0300o"
	runCases(t, []cleanCase{
		{name: "50 marks capped at 8", in: "a" + marks + "b", want: "a" + marks[:8*2] + "b"},
		{name: "marks at the start", in: marks, want: ""},
		{name: "marks at the start, a letter after", in: "\x1b[1m " + marks + "x", want: "x"},
		{name: "marks after a space", in: "a " + marks, want: "a " + marks[:8*2]},
		{name: "cap counts across removed characters", in: "a" + marks[:10] + "\u200B" + marks[:10], want: "a" + marks[:8*2]},
		{name: "a joiner does not restart the count", in: "a" + marks[:16] + "\u200D" + marks[:16], want: "a" + marks[:16]},
		{name: "dropped joiners do not end a run", in: "a" + marks[:10] + "\u200D\u200C" + marks[:10], want: "a" + marks[:16]},
		{name: "zalgo text keeps its first 8 marks", in: zalgo, want: norm.NFC.String("Z\u0351\u0300\u0344\u0361\u0307\u0352\u0350a\u0337\u0315\u0338\u0335\u0489\u0335l\u0489g\u0327\u0301\u0300o")},
		{name: "a space after a kept ZWJ is drawn in the ZWJ's cell, and so are the marks after it", in: "\u09a4\u09cd\u200d " + strings.Repeat("\u0902", 8), want: "\u09a4\u09cd\u200d " + strings.Repeat("\u0902", 3)},
		{name: "a ZWJ whose cell a space after it would take past 21 bytes is removed", in: "\u0915" + strings.Repeat("\u0334", 6) + "\u094d\u200d x", want: "\u0915" + strings.Repeat("\u0334", 6) + "\u094d x"},
		{name: "and kept when the space fits", in: "\u0915" + strings.Repeat("\u0334", 5) + "\u094d\u200d x", want: "\u0915" + strings.Repeat("\u0334", 5) + "\u094d\u200d x"},
		{name: "Hangul vowel jamo counted like marks, 3 bytes each in a cell of 21", in: "a" + strings.Repeat("\u1161", 40), want: "a" + strings.Repeat("\u1161", 6)},
		// Found by FuzzClean: a virama's joiner went into a full cell.
		{name: "a joiner that would pass the cell's 21 bytes is removed", in: full + "\u200C\u0915", want: full + "\u0915"},
		{name: "so is one at the end", in: full + "\u200D", want: full},
		{name: "a joiner that fits is kept", in: full[:3] + full[6:] + "\u200C\u0915", want: full[:3] + full[6:] + "\u200C\u0915"},
		{name: "a decomposing mark counts twice", in: "a" + strings.Repeat("\u0344", 20), want: norm.NFC.String("a" + strings.Repeat("\u0344", 4))},
	})
}

// Text that is already clean survives exactly.
func TestSurvivors(t *testing.T) {
	for _, s := range []string{
		"👨‍👩‍👧 family", "👨‍❤️‍👨", "🏳️‍🌈 rainbow flag", "🏳️‍⚧️", "❤️‍🔥", "👁️‍🗨️", "😶‍🌫️", "🧑🏿‍🚀", "🧔🏻‍♀️",
		"🇯🇵🇫🇷🇧🇷", "1️⃣ #️⃣ *️⃣", "👍🏽👍🏿", "⌚︎ text style", "🫱🏼‍🫲🏾",
		"مرحبا بالعالم", "שלום עולם", "می‌خواهم کتاب‌ها را بخوانم", "هم‌اکنون",
		"हिन्दी", "क्‍ष", "ക്‍", "தமிழ்", "বাংলা", "ไทย", "한국어 텍스트", "日本語のテキスト", "中文",
		"Ελληνικά", "Русский текст", "Tiếng Việt", "naïve café", "ﷺ", "Å", "🏴", "ⓐ",
		"x\u20E3", "\uFFFD",
	} {
		runCases(t, []cleanCase{{name: s, in: s, want: s}, {name: s + " as a message", in: s, limit: MessageLimit, want: s}})
		if got := Clean(s, 0); got != s {
			t.Errorf("Clean(%+q) = %+q", s, got)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "truncated 2-byte", in: "a\xc3", want: "a\uFFFD"},
		{name: "truncated 2-byte inside", in: "a\xc3b", want: "a\uFFFDb"},
		{name: "truncated 3-byte", in: "a\xe2\x82b", want: "a\uFFFDb"},
		{name: "truncated 3-byte at end", in: "a\xe2\x82", want: "a\uFFFD"},
		{name: "truncated 4-byte", in: "a\xf0\x9f\x98b", want: "a\uFFFDb"},
		{name: "truncated 4-byte before ESC", in: "a\xf0\x9f\x1b[0mb", want: "a\uFFFDb"},
		{name: "lead before a space", in: "a\xe2 b", want: "a\uFFFD b"},
		{name: "lead before a newline", in: "a\xc3\nb", want: "a\uFFFD b"},
		{name: "overlong slash", in: "a\xc0\xafb", want: "a\uFFFDb"},
		{name: "overlong NUL", in: "a\xc0\x80b", want: "a\uFFFDb"},
		{name: "overlong 3-byte", in: "a\xe0\x80\xafb", want: "a\uFFFDb"},
		{name: "overlong 4-byte", in: "a\xf0\x80\x80\xafb", want: "a\uFFFDb"},
		{name: "encoded surrogate", in: "a\xed\xa0\x80b", want: "a\uFFFDb"},
		{name: "encoded surrogate pair", in: "a\xed\xa0\xbd\xed\xb8\x80b", want: "a\uFFFDb"},
		{name: "above U+10FFFF", in: "a\xf4\x90\x80\x80b", want: "a\uFFFDb"},
		{name: "F5 lead", in: "a\xf5\x80\x80\x80b", want: "a\uFFFDb"},
		{name: "FF FE", in: "\xff\xfe", want: "\uFFFD"},
		{name: "stray continuation", in: "a\x80b", want: "a\uFFFDb"},
		{name: "stray continuations", in: "a\x80\xbf\x80b", want: "a\uFFFDb"},
		{name: "two runs split by a control", in: "\xff\x01\xff", want: "\uFFFD\uFFFD"},
		{name: "valid U+FFFD kept", in: "\uFFFD\xff", want: "\uFFFD\uFFFD"},
		{name: "invalid then valid multibyte", in: "\xe2\x82é", want: "\uFFFDé"},
		{name: "binary noise", in: "\x00\x01\x02\xfe\xff\x7f\x80", want: "\uFFFD\uFFFD"}, // DEL is valid UTF-8
	})
}

func TestWhitespaceAndControls(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "ASCII whitespace", in: "a\tb\nc\vd\fe\rf", want: "a b c d e f"},
		{name: "CRLF", in: "a\r\nb", want: "a b"},
		{name: "Unicode spaces", in: "a\u0085b\u00A0c\u1680d\u2000e\u2009f\u2028g\u2029h\u202Fi\u205Fj\u3000k", want: "a b c d e f g h i j k"},
		{name: "runs collapse", in: "a \t\n\u00A0 b", want: "a b"},
		{name: "trim", in: " \t a b \r\n", want: "a b"},
		{name: "only whitespace", in: " \t\n\u3000 ", want: ""},
		{name: "C0 controls", in: "a\x00b\x07c\x08d\x1ce\x1ff", want: "abcdef"},
		{name: "DEL", in: "a\x7fb", want: "ab"},
		{name: "backspace overstrike", in: "safe\x08\x08\x08\x08evil", want: "safeevil"},
		{name: "carriage return overwrite", in: "rm -rf /\rls", want: "rm -rf / ls"},
		{name: "noncharacters", in: "a\uFDD0\uFFFE\uFFFF\U0001FFFE\U0010FFFFb", want: "ab"},
		{name: "format characters", in: "a\u0600\u06DD\u180E\uFFF9\uFFFB\U000110BDb", want: "ab"},
		{name: "spaces around removed characters", in: "a \u200B b", want: "a b"},
	})
}

func TestNormalization(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "compose", in: "e\u0301", want: "é"},
		{name: "singleton", in: "\u212B \u2126", want: "Å Ω"},
		{name: "exclusion", in: "\u0958", want: "\u0915\u093C"},
		{name: "reorder", in: "a\u0301\u0323", want: "\u1EA1\u0301"},
		{name: "Hangul jamo", in: "\u1112\u1161\u11AB", want: "한"},
		{name: "compose across a removed character", in: "e\u200B\u0301", want: "é"},
		{name: "compose after an escape", in: "e\x1b[0m\u0301", want: "é"},
	})
}

func TestLimit(t *testing.T) {
	long := strings.Repeat("a", 2000)
	runCases(t, []cleanCase{
		{name: "message", in: long, limit: MessageLimit, want: long[:999] + "…"},
		{name: "source", in: long, limit: SourceLimit, want: long[:79] + "…"},
		{name: "exactly the limit", in: "abcde", limit: 5, want: "abcde"},
		{name: "one over", in: "abcdef", limit: 5, want: "abcd…"},
		{name: "limit 1", in: "ab", limit: 1, want: "…"},
		{name: "space before the ellipsis", in: "hello world", limit: 7, want: "hello…"},
		{name: "trailing whitespace does not count", in: "abcde \t ", limit: 5, want: "abcde"},
		{name: "removed characters do not count", in: "ab\x1b[31mcd\u200Be", limit: 5, want: "abcde"},
		{name: "surrogate pairs count twice", in: strings.Repeat("😀", 10), limit: 5, want: "😀😀…"},
		{name: "flags stay whole", in: strings.Repeat("🇯🇵", 10), limit: 10, want: "🇯🇵🇯🇵…"},
		{name: "a ZWJ sequence that fits a cell stays whole", in: "ab 👨‍👩‍👧x", limit: 11, want: "ab…"},
		{name: "a ZWJ sequence past a cell is split", in: "ab 👨‍👩‍👧‍👦", limit: 12, want: "ab 👨‍👩‍👧…"},
		{name: "long cluster cut at a code point", in: "👨‍👩‍👧‍👦", limit: 6, want: "👨\u200D👩…"},
		{name: "first cluster longer than the room", in: "e" + strings.Repeat("\u0336", 20) + "f", limit: 6, want: "e" + strings.Repeat("\u0336", 4) + "…"},
		{name: "keycap stays whole", in: "1️⃣2️⃣3️⃣", limit: 7, want: "1️⃣2️⃣…"},
		{name: "joiner before the ellipsis", in: "👨\u200D👩\u200D👧", limit: 4, want: "👨…"},
		{name: "FE0F before the ellipsis", in: "1\uFE0F\u20E3\u0301", limit: 3, want: "1…"},
		{name: "NFC shrinks below the limit", in: strings.Repeat("e\u0301", 6), limit: 6, want: "éééééé"},
		{name: "NFC grows past the limit", in: strings.Repeat("\u0958", 4), limit: 6, want: "\u0915\u093C\u0915\u093C…"},
		{name: "mark on the last ASCII letter that fits", in: "abcd\u0336efg", limit: 5, want: "abc…"},
		{name: "mark after the cut", in: "abcde\u0336fg", limit: 5, want: "abcd…"},
		{name: "cut in Persian", in: "می‌خواهم کتاب‌ها", limit: 5, want: "می‌خ…"},
	})
}

func TestAlreadyCleanIsReturnedAsIs(t *testing.T) {
	for _, s := range []string{"plain ascii text", "naïve café 日本語 😀", "می\u200Cخواهم", "hello…"} {
		// Not allocating means s itself is returned: a copy would allocate.
		if got := Clean(s, 0); got != s {
			t.Errorf("Clean(%q) = %q", s, got)
		}
		if n := testing.AllocsPerRun(100, func() { Clean(s, 0) }); n != 0 {
			t.Errorf("Clean(%q) allocates %v times", s, n)
		}
		if n := testing.AllocsPerRun(100, func() { Message(s) }); n != 0 {
			t.Errorf("Message(%q) allocates %v times", s, n)
		}
	}
	// A substring needs no copy either.
	if n := testing.AllocsPerRun(100, func() { Clean("  padded  ", 0) }); n != 0 {
		t.Errorf("trimming allocates %v times", n)
	}
}

// Message of a huge input: it stops reading early (BenchmarkMessage1MiB
// shows the time), and the result is the same as if it had read it all.
func TestMessageOfHugeInput(t *testing.T) {
	big := strings.Repeat("word ", 1<<20)
	got := Message(big)
	if want := strings.Repeat("word ", 200)[:999] + "…"; got != want {
		t.Errorf("Message(5 MiB) = %.40q…, want %.40q…", got, want)
	}
}
