package sanitize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The script benchmarks: CJK in plane 2 against CJK in the
// BMP, and Message on long words in Cyrillic and Greek against ASCII words
// of the same lengths in characters.

// cjkInput returns about n bytes of ideographs from [lo, lo+span),
// a space after every 12.
func cjkInput(n int, lo, span rune) string {
	rng := rand.New(rand.NewPCG(5, 5))
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteRune(lo + rune(rng.IntN(int(span))))
		if i%12 == 11 {
			b.WriteByte(' ')
		}
	}
	return trimValid(b.String(), n)
}

func trimValid(s string, n int) string {
	if n > len(s) {
		n = len(s)
	}
	for !utf8.ValidString(s[:n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}

// wordsInput returns words of 8-20 letters drawn from alphabet, single
// spaces between them, about n characters in all. The lengths come from
// one seed, so two alphabets give words of the same lengths in characters.
func wordsInput(n int, alphabet []rune) string {
	rng := rand.New(rand.NewPCG(3, 3))
	var b strings.Builder
	for chars := 0; chars < n; {
		k := 8 + rng.IntN(13)
		for range k {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		b.WriteByte(' ')
		chars += k + 1
	}
	return strings.TrimSpace(b.String())
}

var (
	asciiLetters = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	// Cyrillic and Greek letters, lower and upper case, with the accented
	// Greek vowels (precomposed, NFC-stable).
	cyrGreekLetters = []rune("абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЭЮЯαβγδεζηθικλμνξοπρστυφχψωάέήίόύώΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ")
)

// 1 MiB of CJK Unified Ideographs (U+4E00-U+9FFF, the BMP), no limit.
func BenchmarkCleanCJKBMP(b *testing.B) { benchClean(b, cjkInput(mib, 0x4E00, 0x5200), 0) }

// 1 MiB of CJK Extension B (U+20000-U+2A6DF, plane 2), no limit: within
// 1.5x of CleanCJKBMP's time per byte.
func BenchmarkCleanCJKExtB(b *testing.B) { benchClean(b, cjkInput(mib, 0x20000, 0xA6E0), 0) }

// Message on words of 8-20 ASCII letters, 4000 characters of input (the
// cut is at 1000 units): the peer of MessageWordsCyrGreek.
func BenchmarkMessageWordsASCII(b *testing.B) {
	benchMessage(b, wordsInput(4000, asciiLetters))
}

// Message on words of 8-20 Cyrillic and Greek letters, the same lengths
// in characters: within 3x of MessageWordsASCII.
func BenchmarkMessageWordsCyrGreek(b *testing.B) {
	benchMessage(b, wordsInput(4000, cyrGreekLetters))
}

func benchMessage(b *testing.B, in string) {
	b.ReportAllocs()
	for b.Loop() {
		Message(in)
	}
}
