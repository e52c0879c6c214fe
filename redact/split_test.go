package redact

import (
	"reflect"
	"regexp/syntax"
	"strings"
	"testing"
)

// splitRules are the book's rules that have a split matcher.
func splitRules(t testing.TB) []*rule {
	var out []*rule
	b := book()
	for i := range b.rules {
		r := &b.rules[i]
		r.build()
		if r.compiled.split != nil {
			out = append(out, r)
		}
	}
	if len(out) < 90 {
		t.Fatalf("%d rules with a split matcher, want the 95 of lazyWordPrefix", len(out))
	}
	return out
}

// The split matcher finds what the regex finds, on generated matches of
// each rule set in text that tempts the lazy run: word characters, other
// keywords, Kelvin signs, dots and dashes before and after.
func TestSplitMatcherEqualsRegex(t *testing.T) {
	rng := newRand(61)
	rules := splitRules(t)
	around := []string{"", " ", "x", "my_", "a.b-c", strings.Repeat("w", 60), "key ", "\u212aey=", "token=", "API", "==", "\n", "é"}
	n := 0
	for _, r := range rules {
		parsed, err := syntax.Parse(r.spec.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			var b strings.Builder
			b.WriteString(around[rng.IntN(len(around))])
			genMatch(rng, parsed, &b)
			b.WriteString(around[rng.IntN(len(around))])
			if rng.IntN(2) == 0 {
				genMatch(rng, parsed, &b)
			}
			text := b.String()
			want := r.compiled.re.FindAllStringSubmatchIndex(text, -1)
			if got := r.compiled.split.findAll(text); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q:\n split %v\n regex %v", r.id, text, got, want)
			}
			n++
		}
	}
	t.Logf("%d texts of %d rules", n, len(rules))
}

// FuzzSplitMatcher holds the split matcher equal to the regex on any text
// built of the pieces keys and values are made of.
func FuzzSplitMatcher(f *testing.F) {
	for _, s := range []string{"", "api_key=Q2xM9zR4pW7vK3nTx9", "my.secret-token : 'abcdefghij12'"} {
		f.Add([]byte(s), uint8(0))
	}
	pieces := []string{"key", "api", "API", "Api", "aPI", "token", "secret", "passwd", "password", "auth", "access", "creds",
		"credential", "\u212a", "\u017f", "=", ":", "::=", "||", "=>", "?=", ",", ">", " ", "\t", "'", "\"", "`", ";", "|", "&",
		"\\n", ".", "-", "_", "+", "/", "Q2xM9zR4pW", "abcdefghij", "0123456789", "x", "é", "\n", "ID", "adafruit", "github"}
	rules := splitRules(f)
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if len(data) > 256 {
			data = data[:256]
		}
		var b strings.Builder
		for _, c := range data {
			if c < 0x80 {
				b.WriteString(pieces[int(c)%len(pieces)])
			} else {
				b.WriteByte(alnum[int(c)%len(alnum)])
			}
		}
		text := b.String()
		r := rules[int(which)%len(rules)]
		for _, r := range []*rule{r, rules[0]} {
			want := r.compiled.re.FindAllStringSubmatchIndex(text, -1)
			if got := r.compiled.split.findAll(text); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q:\n split %v\n regex %v", r.id, text, got, want)
			}
		}
	})
}
