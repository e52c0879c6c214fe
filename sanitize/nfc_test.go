package sanitize

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// The fast NFC path agrees with norm on every segment it accepts: random
// starters (letters, jamo, composites' bases) with random marks, composing
// and not, in every order.
func TestFastNFCMatchesNorm(t *testing.T) {
	starters := []rune{'a', 'e', 'o', 'u', 'A', 'z', 'c', 'n', 0x03B1, 0x03C9, 0x0415, 0x0438, 0x1100, 0x1112, 0xAC00, 0xAC01, 0x0915, 0x05D0, 0x0627, 0x00E9, 0x01B0, 0x1F00}
	marks := []rune{0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x030A, 0x0323, 0x0327, 0x0328, 0x031B, 0x0315, 0x0336, 0x0334,
		0x0345, 0x035C, 0x0361, 0x0489, 0x0313, 0x0314, 0x0342, 0x093C, 0x094D, 0x05B4, 0x064E, 0x0651, 0x1161, 0x1175, 0x11A8, 0x11C2, 0x3099}
	rng := rand.New(rand.NewPCG(5, 6))
	accepted := 0
	for range 200000 {
		seg := []rune{starters[rng.IntN(len(starters))]}
		for range rng.IntN(12) {
			seg = append(seg, marks[rng.IntN(len(marks))])
		}
		s := string(seg)
		got, ok := fastNFC(nil, s)
		if !ok {
			continue
		}
		accepted++
		if want := norm.NFC.String(s); string(got) != want {
			t.Fatalf("fastNFC(%+q) = %+q, norm says %+q", s, got, want)
		}
	}
	if accepted < 10000 {
		t.Errorf("the fast path took only %d segments", accepted)
	}
	// Every primary composite from its two parts.
	pairsOnce.Do(buildPairs)
	if len(pairs) < 900 {
		t.Errorf("only %d composition pairs", len(pairs))
	}
	for k, c := range pairs {
		s := string(rune(k>>32)) + string(rune(uint32(k)))
		if got, ok := fastNFC(nil, s); ok && string(got) != norm.NFC.String(s) || norm.NFC.String(s) != string(c) {
			t.Fatalf("pair %+q: fast %+q (%v), norm %+q, table %+q", s, got, ok, norm.NFC.String(s), string(c))
		}
	}
}
