package redact

import (
	"reflect"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// handRules are the book's rules that have a hand-written matcher: the
// JWT's and the Slack bot token's, as boundary.go leaves their regexes
// (a change there, or upstream's, drops a matcher and fails here).
func handRules(t testing.TB) []*rule {
	var out []*rule
	b := book()
	for i := range b.rules {
		r := &b.rules[i]
		r.build()
		if r.compiled.hand != nil {
			out = append(out, r)
		}
	}
	ids := []string{}
	for _, r := range out {
		ids = append(ids, r.id)
	}
	if !reflect.DeepEqual(ids, []string{"jwt", "slack-bot-token"}) {
		t.Fatalf("rules with a hand-written matcher: %v, want jwt and slack-bot-token", ids)
	}
	return out
}

// checkHand compares a rule's hand matcher with its regex on text, as a
// string and as bytes.
func checkHand(t testing.TB, r *rule, text string) {
	t.Helper()
	want := r.compiled.re.FindAllStringSubmatchIndex(text, -1)
	if got := r.compiled.hand.str(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s on %q:\n hand  %v\n regex %v", r.id, text, got, want)
	}
	if got := r.compiled.hand.bytes([]byte(text)); !reflect.DeepEqual(got, regexp.MustCompile(r.spec.Regex).FindAllSubmatchIndex([]byte(text), -1)) {
		t.Fatalf("%s on []byte(%q): hand %v", r.id, text, got)
	}
}

// The hand matchers find what their regexes find: on generated matches
// set among the characters that end, extend or split them, and on the
// cases where the regex's order of preference decides (a \n written out
// inside the last part, padding, a part too short to take).
func TestHandMatchersEqualRegex(t *testing.T) {
	rng := newRand(83)
	rules := handRules(t)
	around := []string{"", " ", "x", "_", "é", "\\", "\\n", "\\r", "\\nx", "=", "==", "===", "=\"", ".", "-", "|", "&", ")", "\t", "\f",
		"0123456789", "abcdefghijklmnop", "/", "'", "`", ";", "<", "{", "\n"}
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiAiZGpSWGhoOFJJUUFqIiwgImlhdCI6IDE3MDAwMDAwMDB9."
	fixed := []string{
		jwt, jwt + "8MuTdzLDRPHaXhuTWUDsf4_bsx6bpDNBIzsHdw0wcDg expired", jwt + "abc", jwt + "abcdefghij\\nabc", jwt + "abcdefghij\\nab\\rc",
		jwt + "abcdefghi\\nab", jwt + "\\nabcdefghijkl", jwt + "abcdefghijkl==", jwt + "abcdefghijkl===", jwt + "abcdefghijkl=x", jwt + "abcdefghij\\n=",
		"x" + jwt + " " + jwt + "|", "_" + jwt, jwt + "a.b", "eyAAAAAAAAAAAAAAAAAAAA.eyBBBBBBBBBBBBBBBBBBBB.\\n",
		"xoxb-1234567890-1234567890", "xoxb-1234567890123-12345678901234567abc-DEF x", "xoxb-12345678901234-1234567890", "xoxb-123456789-1234567890",
		"xoxb-1234567890-123456789a", "xoxbxoxb-1234567890-1234567890xoxb-1234567890-1234567890", "xoxb-1234567890-1234567890\u212a",
	}
	for _, r := range rules {
		for _, text := range fixed {
			checkHand(t, r, text)
		}
		parsed, err := syntax.Parse(r.spec.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for range 3000 {
			var b strings.Builder
			b.WriteString(around[rng.IntN(len(around))])
			genMatch(rng, parsed, &b)
			for n := rng.IntN(3); n > 0; n-- {
				b.WriteString(around[rng.IntN(len(around))])
			}
			if rng.IntN(2) == 0 {
				genMatch(rng, parsed, &b)
				b.WriteString(around[rng.IntN(len(around))])
			}
			checkHand(t, r, b.String())
		}
	}
}

// FuzzHandMatchers holds the hand matchers equal to their regexes on any
// text built of the pieces JWTs and Slack tokens are made of.
func FuzzHandMatchers(f *testing.F) {
	for _, s := range []string{"", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiAiZGpSWGhoOFJJUUFqIiwgIm.abcdefghij\\nx", "xoxb-1234567890-1234567890ab"} {
		f.Add([]byte(s))
	}
	pieces := []string{"ey", "eyJhbGciOiJIUzI1Ni", "Jhb", ".", "xoxb-", "x", "o", "b", "-", "0123456789", "1", "=", "==", "\\", "\\n", "\\r", "n",
		"/", "_", " ", "\t", "'", "`", ";", "|", "&", ",", "(", ")", "[", "]", "{", "}", "<", ">", "é", "\u212a", "\n", "abcdefghij", "A"}
	rules := handRules(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			data = data[:300]
		}
		var b strings.Builder
		for _, c := range data {
			if c < 0x80 {
				b.WriteString(pieces[int(c)%len(pieces)])
			} else {
				b.WriteByte(c) // any byte, invalid UTF-8 included
			}
		}
		for _, r := range rules {
			checkHand(t, r, b.String())
		}
	})
}
