package redact

import (
	"regexp/syntax"
	"slices"
	"strings"
)

// The strings a part of a regex stands for: how an anchor proves that a
// match holds a keyword (anchor.go).

// language returns every string re matches, ASCII lowercased, if there
// are at most maxLang of them. Non-ASCII case folds (U+212A, U+017F) are
// not followed: the scan turns anchors off for a text that has them.
func language(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		var b strings.Builder
		for _, r := range re.Rune {
			b.WriteString(strings.ToLower(string(asciiLower(r))))
		}
		return []string{b.String()}, true
	case syntax.OpCharClass:
		set := map[string]bool{}
		for i := 0; i < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > maxLang {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set[string(asciiLower(r))] = true
				if len(set) > maxLang {
					return nil, false
				}
			}
		}
		out := make([]string, 0, len(set))
		for s := range set {
			out = append(out, s)
		}
		slices.Sort(out) // the analysis is generated: the same every run
		return out, true
	case syntax.OpCapture:
		return language(re.Sub[0])
	case syntax.OpConcat:
		var out []string
		for i, s := range re.Sub {
			l, ok := language(s)
			if !ok {
				return nil, false
			}
			if out = product(out, l, i == 0); out == nil {
				return nil, false
			}
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			l, ok := language(s)
			if !ok || len(out)+len(l) > maxLang {
				return nil, false
			}
			out = append(out, l...)
		}
		return out, true
	case syntax.OpQuest:
		l, ok := language(re.Sub[0])
		if !ok || len(l) >= maxLang {
			return nil, false
		}
		return append(l, ""), true
	case syntax.OpRepeat:
		if re.Max < 0 || re.Max > 8 {
			return nil, false
		}
		l, ok := language(re.Sub[0])
		if !ok {
			return nil, false
		}
		var out []string
		cur := []string{""}
		for n := 0; n <= re.Max; n++ {
			if n >= re.Min {
				if len(out)+len(cur) > maxLang {
					return nil, false
				}
				out = append(out, cur...)
			}
			if cur = product(cur, l, false); cur == nil {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

func asciiLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// product is every a+b, or nil past maxLang; with first, a is ignored.
func product(a, b []string, first bool) []string {
	if first {
		return b
	}
	if len(a)*len(b) > maxLang {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

// keywordOffsets returns where each keyword sits in the strings of lang,
// and whether every string holds one.
func keywordOffsets(lang, keywords []string) (map[string][]int, bool) {
	offsets := map[string][]int{}
	for _, w := range lang {
		held := false
		for _, kw := range keywords {
			for o := 0; o+len(kw) <= len(w); o++ {
				if w[o:o+len(kw)] == kw {
					held = true
					if !containsInt(offsets[kw], o) {
						offsets[kw] = append(offsets[kw], o)
					}
				}
			}
		}
		if !held {
			return nil, false
		}
	}
	return offsets, true
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// prefixes returns strings one of which starts every match of re, ASCII
// lowercased, if there are at most maxLang of them: a sequence's leading
// parts with their languages, up to and into the first that has too many.
func prefixes(re *syntax.Regexp) ([]string, bool) {
	if l, ok := language(re); ok {
		return l, true
	}
	switch re.Op {
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpPlus:
		return prefixes(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min == 0 {
			return []string{""}, true
		}
		return prefixes(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			l, ok := prefixes(s)
			if !ok || len(out)+len(l) > maxLang {
				return nil, false
			}
			out = append(out, l...)
		}
		return out, true
	case syntax.OpConcat:
		var out []string
		for i, s := range re.Sub {
			if hasAssertion(s) {
				return nil, false
			}
			l, ok := language(s)
			if !ok {
				p, ok := prefixes(s)
				if !ok {
					return nil, false
				}
				if out = product(out, p, i == 0); out == nil {
					return nil, false
				}
				return out, true
			}
			if out = product(out, l, i == 0); out == nil {
				return nil, false
			}
		}
		return out, true
	}
	return []string{""}, true // star, quest: a match may start with anything
}
