package sanitize

import (
	"math/rand/v2"
	"testing"
)

// A generator of text in 26 scripts, with each script's marks (viramas,
// nuktas, vowel signs, harakat), joiners, emoji pieces and escape
// sequences mixed in: the bytes of the fuzzer's input choose, one token
// each, so that the fuzzer spends its time where the cell, mark, jamo and
// joiner rules meet, not on random bytes that are mostly removed.
type script struct {
	name           string
	letters, marks string
}

var scripts = [26]script{
	{"Latin", "aeoszAÉıßŋ", "\u0301\u0300\u0308\u0323\u0327\u0336\u0344"},
	{"Greek", "αβγωΑΩάῆ", "\u0301\u0313\u0314\u0342\u0345"},
	{"Cyrillic", "абвжшщяЖЯё", "\u0301\u0306\u0308\u0483"},
	{"Armenian", "աբգդՀՊ", "\u0301"},
	{"Hebrew", "אבגדשת", "\u05B0\u05B4\u05BC\u05C1\u05C2\u0591"},
	{"Arabic", "بتثرزمنهوىیکـ", "\u064E\u064F\u0650\u0651\u0652\u0654\u0670"},
	{"Syriac", "ܐܒܓܕܗ", "\u0730\u0731\u0732\u0711"},
	{"Thaana", "ހށނރ", "\u07A6\u07A7\u07B0"},
	{"NKo", "ߊߋߌߓߔ", "\u07EB\u07EC\u07F3"},
	{"Devanagari", "कखगषरहक़", "\u094D\u093C\u093E\u093F\u0902\u0901\u0951"},
	{"Bengali", "কখগযর", "\u09CD\u09BC\u09BE\u09BF\u09D7"},
	{"Gurmukhi", "ਕਖਗਰ", "\u0A4D\u0A3C\u0A3E\u0A70"},
	{"Gujarati", "કખગર", "\u0ACD\u0ABC\u0ABE"},
	{"Oriya", "କଖଗର", "\u0B4D\u0B3C\u0B3E\u0B56\u0B57"},
	{"Tamil", "கஙசஷ", "\u0BCD\u0BBE\u0BC6\u0BD7"},
	{"Telugu", "కఖగర", "\u0C4D\u0C3E\u0C46\u0C56"},
	{"Kannada", "ಕಖಗರ", "\u0CCD\u0CBC\u0CC6\u0CD5\u0CC2"},
	{"Malayalam", "കഖഗരന", "\u0D4D\u0D3E\u0D46\u0D57\u0D4E"},
	{"Sinhala", "කඛගරය", "\u0DCA\u0DCF\u0DD9\u0DDF"},
	{"Thai", "กขคงนภ", "\u0E31\u0E34\u0E48\u0E49\u0E3A"},
	{"Tibetan", "ཀཁགཌཧ\u0F69\u0F4D", "\u0F71\u0F72\u0F80\u0F84\u0FB7\u0FAC\u0F90\u0F73"},
	{"Myanmar", "ကခဂင", "\u1039\u103A\u102C\u1037"},
	{"Khmer", "កខគង", "\u17D2\u17B6\u17C6"},
	{"Mongolian", "ᠠᠡᠢᠣ", "\u18A9\u180B"},
	{"Hangul jamo", "\u1100\u1112\u1107\uAC00\uAC01\uD55C\uA960", "\u1161\u1175\u119E\u11A8\u11AB\u11F0\uD7B0\u302E"},
	{"Han, kana and Khitan", "日本語𠀋カガ\U00018B00\U00018B01", "\u3099\u309A\uFF9E\U00016FE4"},
}

var (
	scriptJoiners = []string{"\u200D", "\u200C", "\uFE0E", "\uFE0F", "\u200D\u200C", "\uFE0F\u200D"}
	scriptEmoji   = []string{"👨", "👩", "👧", "👦", "🏳", "🌈", "❤", "💋", "🏽", "🏿", "⃣", "#", "1", "🇯", "🇵", "🏴", "\U000E0067", "😀", "⌚"}
	scriptJunk    = []string{" ", "  ", "\t", "\n", "\x1b[31m", "\x1b[0m", "\x1b]0;t\x07", "\x1b", "\u009b1m", "\u202E", "\u200B", "\u00AD", "\xff", "\xe2\x80", "\uFFFD", "\U00031350", "\U0001FAF9", "\u2800"}
)

// scriptText spells data as text: each byte is a token, its top three
// bits the kind (letters three times in eight, marks twice, then joiners,
// emoji, and escapes, spaces and removed characters), and a byte of kind
// seven switches to script b%26.
func scriptText(data []byte) string {
	var b []byte
	sc := &scripts[0]
	if len(data) > 0 {
		sc = &scripts[int(data[0])%len(scripts)]
	}
	pick := func(s string, n int) string {
		rs := []rune(s)
		return string(rs[n%len(rs)])
	}
	for _, c := range data {
		n := int(c & 31)
		switch c >> 5 {
		case 0, 1, 2:
			b = append(b, pick(sc.letters, n)...)
		case 3, 4:
			b = append(b, pick(sc.marks, n)...)
		case 5:
			b = append(b, scriptJoiners[n%len(scriptJoiners)]...)
		case 6:
			if n < 19 {
				b = append(b, scriptEmoji[n]...)
			} else {
				b = append(b, scriptJunk[n%len(scriptJunk)]...)
			}
		case 7:
			sc = &scripts[n%len(scripts)]
			if n >= 26 {
				b = append(b, scriptJunk[n%len(scriptJunk)]...)
			}
		}
	}
	return string(b)
}

// FuzzScripts checks the output contract, idempotence above all, of
// Clean, Message and Source on the script generator's text, and that a
// Writer fed it in pieces agrees with Clean.
func FuzzScripts(f *testing.F) {
	rng := rand.New(rand.NewPCG(26, 26))
	for k := range 26 {
		data := []byte{byte(k)}
		for range 40 {
			data = append(data, byte(rng.IntN(256)))
		}
		f.Add(data, 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		in := scriptText(data)
		for _, limit := range []int{0, MessageLimit, SourceLimit, limit % 200} {
			cleanChecked(t, in, limit)
		}
		out := Clean(in, 0)
		if s, err := streamed(in, 0, []int{len(in) / 3, len(in) / 2}); err != nil || s != out {
			t.Errorf("Writer(%+q) = %+q, %v; Clean = %+q", in, s, err, out)
		}
	})
}

// The generator's text through the contract, deterministically: the
// always-on cousin of FuzzScripts.
func TestScriptSentences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 26))
	n := 6000
	if testing.Short() {
		n = 600
	}
	for range n {
		data := make([]byte, rng.IntN(80))
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		in := scriptText(data)
		for _, limit := range []int{0, MessageLimit, SourceLimit, rng.IntN(30)} {
			out := Clean(in, limit)
			for _, v := range violations(in, limit, out) {
				t.Fatalf("Clean(%+q, %d) = %+q: %s", in, limit, out, v)
			}
		}
	}
}
