package redact

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// genMatch writes a random string that re's syntax describes: the
// generator of the per-rule corpus. Assertions emit nothing (the caller
// surrounds the string with spaces); classes prefer printable ASCII.
func genMatch(rng *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && rng.IntN(2) == 0 {
				r = unicode.SimpleFold(r)
				if r > unicode.MaxASCII {
					r = unicode.SimpleFold(r)
				}
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		b.WriteRune(pickFromClass(rng, re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte(alnum[rng.IntN(len(alnum))])
	case syntax.OpCapture:
		genMatch(rng, re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 1
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, 3
		case syntax.OpPlus:
			lo, hi = 1, 4
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 8
			}
		}
		n := lo + rng.IntN(hi-lo+1)
		for range n {
			genMatch(rng, re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genMatch(rng, s, b)
		}
	case syntax.OpAlternate:
		genMatch(rng, re.Sub[rng.IntN(len(re.Sub))], b)
	}
}

// pickFromClass picks a rune of the class (pairs of ranges), printable
// ASCII other than space when the class has any.
func pickFromClass(rng *rand.Rand, ranges []rune) rune {
	var ascii []rune
	for i := 0; i < len(ranges); i += 2 {
		for r := max(ranges[i], 0x21); r <= min(ranges[i+1], 0x7e); r++ {
			ascii = append(ascii, r)
		}
	}
	if len(ascii) > 0 {
		return ascii[rng.IntN(len(ascii))]
	}
	if len(ranges) > 0 && ranges[0] <= ' ' && ranges[1] >= ' ' {
		return ' '
	}
	return ranges[0]
}

// finding is a generated text that the rule, applied alone as upstream
// applies it, reports: it contains a keyword, the regex matches, the
// secret passes the entropy threshold and no allowlist allows it.
func finding(s *ruleSpec, re *regexp.Regexp, allows []allow, global allow, text string) (secret string, ok bool) {
	lower := strings.ToLower(text)
	hasKW := len(s.Keywords) == 0
	for _, k := range s.Keywords {
		hasKW = hasKW || strings.Contains(lower, k)
	}
	if !hasKW {
		return "", false
	}
	m := re.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	secret = m[0]
	if s.SecretGroup > 0 {
		secret = m[s.SecretGroup]
	} else {
		for _, g := range m[1:] {
			if g != "" {
				secret = g
				break
			}
		}
	}
	if s.Entropy != 0 && shannon(secret) <= s.Entropy {
		return "", false
	}
	if global.allows(secret, m[0], text) {
		return "", false
	}
	for _, a := range allows {
		if a.allows(secret, m[0], text) {
			return "", false
		}
	}
	if s.NotSecret != nil && s.NotSecret(secret, m[0]) {
		return "", false
	}
	return secret, strings.TrimSpace(secret) != ""
}
