package sanitize

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

// realText is text people write, which must come through Clean unchanged
// (SPEC §5 rule 9, with §5.1's narrower rules): each script's marks,
// conjuncts and joiners, and the emoji sequences that use selectors,
// joiners and modifiers. (Emoji tag sequences, the subdivision flags, do
// lose their tags: the package doc says so.)
var realText = []struct{ name, text string }{
	{"Vietnamese", "Tiếng Việt có dấu: Nguyễn Thị Minh Khai, phở bò, người Việt, thuở ấy, cuộc đời"},
	{"Tibetan stacks", "བོད་སྐད་ བསྒྲུབས་ རྒྱ་མཚོ་ སྒྲོལ་མ་ ཨོཾ་མ་ཎི་པདྨེ་ཧཱུྃ"},
	{"Hebrew with niqqud", "שָׁלוֹם עֲלֵיכֶם בְּרֵאשִׁית בָּרָא אֱלֹהִים"},
	{"Devanagari conjuncts", "क्षत्रिय संस्कृत श्रीमान् द्वार हिन्दी क़िला"},
	{"Devanagari ZWJ half form and ZWNJ explicit virama", "क्\u200dष क्\u200cष"},
	{"Bengali ZWJ before a virama (র‍্য)", "র\u200d্যাব"},
	{"Malayalam chillu and ZWNJ", "കണ്\u200dമണി അവന്\u200c"},
	{"Sinhala ZWJ conjunct", "ශ්\u200dරී ලංකා"},
	{"Persian ZWNJ", "می\u200cخواهم کتاب\u200cها نمی\u200cدانم"},
	{"Arabic with harakat", "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ"},
	{"Thai", "ภาษาไทย น้ำใจ ที่นี่"},
	{"Korean", "한국어 깍두기 읽다"},
	{"CJK and Extension B", "日本語 中文 𠀋𡈽𪚲"},
	{"Greek polytonic", "ἐν ἀρχῇ ἦν ὁ λόγος"},
	{"emoji ZWJ sequences", "👨\u200d👩\u200d👧\u200d👦 👩🏽\u200d💻 🏳\ufe0f\u200d🌈 ❤\ufe0f\u200d🔥 👁\ufe0f\u200d🗨\ufe0f 🧑\u200d🤝\u200d🧑 🏴\u200d☠\ufe0f"},
	{"flags", "🇯🇵 🇫🇷 🇺🇦 🇧🇷"},
	{"keycaps", "1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3 0\ufe0f\u20e3"},
	{"skin tones", "👍🏽 👋🏿 🤝🏻 🧑🏾"},
	{"text and emoji presentation", "⌚\ufe0e ☺\ufe0f ❤\ufe0f ©\ufe0f ✔\ufe0f"},
	{"14.0 emoji", "🫠 🫱🏼\u200d🫲🏾 🛝"},
}

func TestRealTextUnchanged(t *testing.T) {
	for _, c := range realText {
		if !norm.NFC.IsNormalString(c.text) {
			t.Fatalf("%s: the test text is not NFC: %+q", c.name, c.text)
		}
		for _, limit := range []int{0, MessageLimit} {
			if got := Clean(c.text, limit); got != c.text {
				t.Errorf("%s: Clean(%+q, %d) = %+q", c.name, c.text, limit, got)
			}
		}
		if got, err := streamed(c.text, 0, everyByte(c.text)); err != nil || got != c.text {
			t.Errorf("%s: Writer byte by byte: %+q, %v", c.name, got, err)
		}
	}
}
