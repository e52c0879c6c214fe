package redact

import (
	"regexp"
	"strings"
	"testing"
)

// A prefix after a letter, digit or _, and a token ended by a character
// outside its class: the token is redacted, the text around it stays.
func TestBoundaries(t *testing.T) {
	rng := newRand(32)
	f := map[string]secretFormat{}
	for _, x := range sevenFormats(rng) {
		f[x.rule] = x
	}
	aws, stripe, jwt := f["aws-access-token"].secret, f["stripe-access-token"].secret, f["jwt"].secret
	gh, generic := f["github-pat"].secret, f["generic-api-key"].secret
	type tc struct{ before, secret, after, rule string }
	cases := []tc{
		{"export KEY_", aws, " done", "aws-access-token"},
		{"id x", aws, " done", "aws-access-token"},
		{"id 7", aws, "| next", "aws-access-token"},
		{"token x", gh, " sent", "github-pat"},
		{"key STRIPE_", stripe, " sent", "stripe-access-token"},
		{"Authorization=", jwt, " sent", "jwt"},
	}
	for _, end := range []string{"|", ":", "&", ";", "'", `"`, ")", "]", "}", ">", ",", "(", "[", "{", "<"} {
		cases = append(cases,
			tc{"charge ", stripe, end + "next", "stripe-access-token"},
			tc{"auth ", jwt, end + "next", "jwt"},
		)
		if strings.Contains("|:&;'\"", end) {
			// A rule without a fixed prefix ends at | : & only, besides
			// upstream's end (names in code end with , and brackets).
			cases = append(cases, tc{"cfg ", generic, end + "next", "generic-api-key"})
		}
	}
	for _, c := range cases {
		in := c.before + c.secret + c.after
		want := c.before + Marker(c.rule) + c.after
		out, counts := Message(in)
		if out != want || counts[c.rule] != 1 {
			t.Errorf("Message(%q)\n = %q %v\nwant %q", in, out, counts, want)
		}
	}
	// Upstream's regexes miss these: the cases test the wider reading.
	for _, in := range []string{"export KEY_" + aws + " done", "charge " + stripe + "|next", "auth " + jwt + ":next"} {
		for _, id := range []string{"aws-access-token", "stripe-access-token", "jwt"} {
			if regexpOf(t, id).MatchString(in) {
				t.Errorf("void: upstream's %s matches %q", id, in)
			}
		}
	}
}

// Names in code that the wider end would otherwise take for tokens stay
// (they were false alarms on the Go standard library).
func TestCodeNamesStay(t *testing.T) {
	for _, in := range []string{
		"\t\tPrivateKey: testP256PrivateKey,",
		"\t\ts.ReadUint16LengthPrefixed,",
		"\tapiKey := cfg.NewAccessTokenSource(ctx)|",
		"token: handshakeClientSecret|",
	} {
		if out, counts := Message(in); counts != nil {
			t.Errorf("Message(%q) = %q %v, want it unchanged", in, out, counts)
		}
	}
	for _, c := range []struct {
		s    string
		code bool
	}{
		{"testP256PrivateKey", true}, {"s.ReadUint16LengthPrefixed", true}, {"HTTPServerConfig", true},
		{"a8Xk2pQz9LmW3vRt7YcB", false}, {"xK9mPqR2tLw8ZbN4vYc7HjD1sF6gA3eQ", false},
		{strings.Repeat("q", 8), false}, {"qwrtzplkjhgfdsxcvbnm", false},
	} {
		if got := codeLike(c.s); got != c.code {
			t.Errorf("codeLike(%q) = %v, want %v", c.s, got, c.code)
		}
	}
}

// literalPrefix counts the fixed characters a regex starts with.
func TestLiteralPrefix(t *testing.T) {
	for re, n := range map[string]int{
		`ghp_[0-9]`: 4, `(?:A3T[A-Z0-9]|AKIA|ASIA)[A-Z]`: 3, `(?:sk|rk)_(?:test|live|prod)_[a-z]`: 8,
		`ey[a-z]{17,}`: 2, `s\.(?i:[a-z])`: 2, `ab?c`: 1, `(?i)abc`: 0, `[Bb]earer`: 0, `(?:ab)?cd`: 0,
		`(hvs\.[\w-]{90}|s\.(?i:x))`: 2,
	} {
		if got := literalPrefix(re); got != n {
			t.Errorf("literalPrefix(%q) = %d, want %d", re, got, n)
		}
	}
}

// regexpOf compiles the rule's regex as upstream's table has it.
func regexpOf(t *testing.T, id string) *regexp.Regexp {
	t.Helper()
	return regexp.MustCompile(upstreamRegex(t, id))
}
