package sanitize

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// realText is text people write, which must come through Clean unchanged
// (docs/sanitizer.md): each script's marks,
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
	{"emoji ZWJ sequences", "👨\u200d👩\u200d👧 👨\u200d❤\ufe0f\u200d👨 👩🏽\u200d💻 🏳\ufe0f\u200d🌈 ❤\ufe0f\u200d🔥 👁\ufe0f\u200d🗨\ufe0f 🧑\u200d🤝\u200d🧑 🏴\u200d☠\ufe0f"},
	{"flags", "🇯🇵 🇫🇷 🇺🇦 🇧🇷"},
	{"keycaps", "1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3 0\ufe0f\u20e3"},
	{"skin tones", "👍🏽 👋🏿 🤝🏻 🧑🏾"},
	{"text and emoji presentation", "⌚\ufe0e ☺\ufe0f ❤\ufe0f ©\ufe0f ✔\ufe0f"},
	{"14.0 emoji", "🫠 🫱🏼\u200d🫲🏾 🛝"},
	{"Korean, long", "대한민국 헌법 제1조 대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고, 모든 권력은 국민으로부터 나온다."},
	{"Old Hangul", "ᄒᆞᆫ글 ᄫᆞᄅᆞᆷ 나랏말ᄊᆞ미 듕귁에 달아 문ᄍᆞᆼ와로 서르 ᄉᆞᄆᆞᆺ디 아니ᄒᆞᆯᄊᆡ" + strings.Repeat("ᄒᆞᆫ", 40)},
	{"Khitan small script with its filler", "\U00018B00\U00016FE4 \U00018B01"},
}

// decomposedText is real text as systems store it decomposed (macOS file
// names are NFD): Clean gives its NFC form, however long. (Fourth edition:
// conjoining jamo are letters, not marks of one cluster.)
var decomposedText = []struct{ name, text string }{
	{"Korean in conjoining jamo", "대한민국헌법 제일조 대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고, 모든 권력은 국민으로부터 나온다."},
	{"Korean in conjoining jamo, one long word", strings.Repeat("각", 60)},
	{"Korean sentences", "한국어는 한글로 씁니다. 다람쥐 헌 쳇바퀴에 타고파. 키스의 고유조건은 입술끼리 만나야 하고 특별한 기술은 필요치 않다."},
	{"Vietnamese", "Tiếng Việt có dấu: Nguyễn Thị Minh Khai, phở bò, người Việt, thuở ấy, cuộc đời, Trường Sa, Hoàng Sa, ước mơ, đường phố Hà Nội"},
	{"Greek polytonic", "ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν"},
	{"Tibetan, composition exclusions", "བོད་སྐད་ རྒྱ་མཚོ་ \u0f69 \u0f52\u0fb7 \u0f4d \u0f90\u0fac\u0301 ཧཱུྃ"},
	{"Japanese kana with voiced marks", "ガギグゲゴ ザジズゼゾ パピプペポ がっこう"},
}

func TestDecomposedTextComesOutNFC(t *testing.T) {
	for _, c := range decomposedText {
		in := norm.NFD.String(c.text)
		want := norm.NFC.String(c.text)
		if in == want && in == c.text {
			t.Fatalf("%s: the test text has nothing to decompose", c.name)
		}
		for _, limit := range []int{0, MessageLimit} {
			for _, form := range []string{in, c.text} {
				if got := Clean(form, limit); got != want {
					t.Errorf("%s: Clean(%+q, %d)\n got %+q\nwant %+q", c.name, form, limit, got, want)
				}
			}
		}
		if got, err := streamed(in, 0, everyByte(in)); err != nil || got != want {
			t.Errorf("%s: Writer byte by byte: %+q, %v", c.name, got, err)
		}
	}
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
