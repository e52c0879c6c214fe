package redact

import "strings"

// Boundaries (docs/redaction.md, "Boundaries"). Upstream's rules put \b
// before a token's fixed prefix, so "KEY_AKIA…" and "xAKIA…" pass, and end
// most tokens with a class of quotes, whitespace and ';', so "sk_live_…|"
// and a JWT followed by ':' or '&' pass. A diagnostic is often a token
// pasted into a line of other text, so the book reads those rules more
// widely: a prefix also matches after a letter, digit or '_', and any of
// | : & , brackets also ends a token. The rewrite is done on the specs
// before their analysis, so the anchors and least runs are those of the
// regex that runs.

// upstreamEnd is the group that ends 150 of upstream's regexes: the token
// is followed by a quote, whitespace, ';', a literal \n or \r, or the end.
const upstreamEnd = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"

// widerEnd is what the book reads instead for a rule whose secret starts
// with a fixed prefix: also | : & , and brackets.
const widerEnd = "(?:[\\x60'\"\\s;|:&,()\\[\\]{}<>]|\\\\[nr]|$)"

// narrowEnd is what it reads for the others (generic-api-key, the
// "<service> … key = …" rules, vault's s.): only | : & more. In code ,
// ( ) and brackets follow names at every line ("PrivateKey: testKey,"),
// and those rules take a name for a token; | : & directly after a name
// are rare there, and in a diagnostic end a pasted token.
const narrowEnd = "(?:[\\x60'\"\\s;|:&]|\\\\[nr]|$)"

// keepBoundary lists rules whose prefix keeps its \b: "EAAA" and "EAA"
// stand inside base64 blobs ("…AQEBAQEAAAAAAAAAAQAC…" on the Go standard
// library's tests), where a token cannot start.
var keepBoundary = map[string]bool{"square-access-token": true, "facebook-page-access-token": true}

// twoLetterPrefix lists tokens whose fixed prefix is two letters and
// whose shape is still a token's: the JWT's "ey", then 17 letters or
// digits, ".ey" and 17 more. It keeps its \b (two letters stand in every
// "key" and "they" of a log line) but ends as a prefixed token does.
var twoLetterPrefix = map[string]bool{"jwt": true}

// widen returns s with its regex read as the package doc says: a token
// with a fixed prefix ends at any of widerEnd, and its leading \b is
// dropped unless keepBoundary or twoLetterPrefix says otherwise; another
// rule ends at narrowEnd.
func widen(s ruleSpec) ruleSpec {
	n, ok := fixedPrefix(s.ID, s.Regex, s.SecretGroup)
	if !ok {
		s.Regex = strings.ReplaceAll(s.Regex, upstreamEnd, narrowEnd)
		return s
	}
	if n >= 3 && !keepBoundary[s.ID] {
		s.Regex = strings.TrimPrefix(s.Regex, `\b`)
	}
	s.Regex = strings.ReplaceAll(s.Regex, upstreamEnd, widerEnd)
	return s
}

// fixedPrefix reports whether re's secret starts where re does, with a
// fixed prefix of at least three characters (or two, for
// twoLetterPrefix), and the prefix's length.
func fixedPrefix(id, re string, group int) (int, bool) {
	re = strings.TrimPrefix(re, `\b`)
	body, secretAtStart := re, !hasCapture(re) // no group: the match is the secret
	if strings.HasPrefix(re, "(") && !strings.HasPrefix(re, "(?") && group <= 1 {
		body, secretAtStart = re[1:], true
	}
	n := literalPrefix(body)
	return n, secretAtStart && (n >= 3 || twoLetterPrefix[id] && n >= 2)
}

// literalPrefix is how many characters every match of re starts with
// that are fixed literals: plain letters, digits, _ and -, escaped
// punctuation, and groups of alternatives that are all such literals
// (counting the shortest). It stops at anything else.
func literalPrefix(re string) int {
	n, _, _ := literalRun(re, false)
	return n
}

// literalRun reads literals from the start of re; inGroup stops it at |
// or ). It returns the count, the bytes read, and whether it stopped at
// the end, a | or a ) (the literals are all of it).
func literalRun(re string, inGroup bool) (n, i int, whole bool) {
	for i < len(re) {
		c := re[i]
		switch {
		case c == '\\' && i+1 < len(re) && strings.IndexByte(`.-_/`, re[i+1]) >= 0:
			n, i = n+1, i+2
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-':
			n, i = n+1, i+1
		case c == '(' && (strings.HasPrefix(re[i:], "(?:") || !strings.HasPrefix(re[i:], "(?")):
			j := i + 1
			if re[j] == '?' {
				j += 2
			}
			least, all := -1, true
			for j < len(re) {
				m, used, w := literalRun(re[j:], true)
				j += used
				if !w {
					all = false
					j = skipAlternative(re, j)
				}
				if least < 0 || m < least {
					least = m
				}
				if j >= len(re) || re[j] == ')' {
					j++
					break
				}
				j++ // the |
			}
			if j < len(re) && strings.IndexByte("?*+{", re[j]) >= 0 {
				return n, i, false // the group is optional or repeated
			}
			n += max(least, 0)
			if !all {
				return n, j, false
			}
			i = j
		default:
			if strings.IndexByte("?*+{", c) >= 0 && n > 0 {
				return n - 1, i, false // the last literal is repeated: not fixed
			}
			return n, i, inGroup && (c == '|' || c == ')')
		}
	}
	return n, i, true
}

// skipAlternative returns the index of the | or ) that ends the
// alternative of re holding index j (len(re) if none).
func skipAlternative(re string, j int) int {
	depth := 0
	for ; j < len(re); j++ {
		switch re[j] {
		case '\\':
			j++
		case '[':
			for j++; j < len(re) && re[j] != ']'; j++ {
				if re[j] == '\\' {
					j++
				}
			}
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return j
			}
			depth--
		case '|':
			if depth == 0 {
				return j
			}
		}
	}
	return j
}

// hasCapture reports whether re has a capturing group.
func hasCapture(re string) bool {
	for i := 0; i+1 < len(re); i++ {
		switch {
		case re[i] == '\\':
			i++
		case re[i] == '(' && (re[i+1] != '?' || strings.HasPrefix(re[i:], "(?P<") || strings.HasPrefix(re[i:], "(?<")):
			return true
		}
	}
	return false
}

// upstreamEnds reports whether the secret at text[end:] ends as upstream's
// group reads it: a quote, whitespace, ';', a literal \n or \r, or the
// end. A rule whose regex had that group and whose secret ends otherwise
// was found by the wider reading (widerEnd, or punctuationAsSpace).
func upstreamEnds(text string, end int) bool {
	if end >= len(text) {
		return true
	}
	switch c := text[end]; c {
	case '`', '\'', '"', ' ', '\t', '\n', '\r', '\f', '\v', ';':
		return true
	case '\\':
		return end+1 < len(text) && (text[end+1] == 'n' || text[end+1] == 'r')
	}
	return false
}

// codeLike reports whether a secret reads as a name in code: nearly all
// of its letters (three quarters, and at least 8) are in words (camelCase
// or snake_case parts of three or more letters with a vowel and no five
// consonants in a row), one of them of five letters or more, and the words
// are marked as a name's are (a capitalized word, or a _ or .), as in
// "testP256PrivateKey" or "s.ReadUint16LengthPrefixed". A secret found
// only by the wider end (followed by , ) | : & or a bracket, which end
// names in code at least as often as tokens) is dropped when it reads so:
// upstream's reading would not have found it, and a random token's
// letters fall into such words far less often.
func codeLike(secret string) bool {
	letters, wordy, long, humped := 0, 0, false, false
	for i := 0; i < len(secret); {
		c := secret[i]
		if !isLetter(c) {
			if c >= 0x80 {
				return false
			}
			humped = humped || c == '_' || c == '.'

			i++
			continue
		}
		// A word: an upper-case run (less its last letter when lower-case
		// letters follow it: "HTTPServer" is HTTP, Server), or one
		// capital and lower-case letters, or lower-case letters.
		j := i
		if isUpper(c) {
			for j < len(secret) && isUpper(secret[j]) {
				j++
			}
			if j < len(secret) && isLower(secret[j]) {
				if j-i > 1 {
					j--
				} else {
					for j < len(secret) && isLower(secret[j]) {
						j++
					}
				}
			}
		} else {
			for j < len(secret) && isLower(secret[j]) {
				j++
			}
		}
		letters += j - i
		if isWord(secret[i:j]) {
			wordy += j - i
			long = long || j-i >= 5
			humped = humped || isUpper(c) && isLower(secret[i+1])
		}
		i = j
	}
	return humped && long && letters >= 8 && wordy*4 >= letters*3
}

// isWord reports whether w may be a word: three or more letters, a vowel,
// and no five consonants in a row.
func isWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	vowel, run := false, 0
	for i := 0; i < len(w); i++ {
		switch w[i] | 0x20 {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			vowel, run = true, 0
		default:
			if run++; run >= 5 {
				return false
			}
		}
	}
	return vowel
}

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
