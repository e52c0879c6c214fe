package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Fake credentials are made at test time from a seeded generator, so no
// credential-shaped literal sits in the repository.
const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
	hexLo  = "0123456789abcdef"
	b64    = alnum + "+/"
	urlB64 = alnum + "-_"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// pick returns n characters of alphabet.
func pick(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// testBook compiles specs as the package compiles its tables, with the
// real global allowlist.
func testBook(specs ...ruleSpec) *ruleBook { return compile(specs, gitleaksGlobal, nil) }

// mustRedact checks that redacting text leaves none of secrets in it and
// counts the wanted rule at least once.
func mustRedact(t *testing.T, text, rule string, secrets ...string) string {
	t.Helper()
	out, counts := Message(text)
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("Message(%q) = %q: the secret %q survived", text, out, s)
		}
	}
	if rule != "" && counts[rule] == 0 {
		t.Errorf("Message(%q) = %q, counts %v: want rule %s", text, out, counts, rule)
	}
	return out
}
