package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The split matcher (docs/redaction.md, "Speed"). 95 of upstream's
// regexes, generic-api-key's among them, start with (?i)[\w.-]{0,50}?: a
// lazy run of up to 50 word characters before the key name. In Go's
// regexp that run keeps up to 50 threads alive at every byte, so the NFA
// cost some 40 µs on a 100-byte line with a secret. Every match of such a
// regex is that run followed by a match of the rest starting with one of
// the rule's keywords, and Go's leftmost-first choice composes: the
// match's start is where the first position (from the search's start)
// at which the rest matches extends left over word characters, up to 50;
// its end and groups are the rest's there. So the book matches the rest,
// anchored, only where a keyword starts, and walks left: the same
// matches, as FuzzSplitMatcher checks against the regex itself.

// lazyWordPrefix is the run the split matcher takes apart.
const lazyWordPrefix = `(?i)[\w.-]{0,50}?`

// splitRegex is a rule's regex less lazyWordPrefix: the rest, anchored,
// and the runes a match of the rest can start with.
type splitRegex struct {
	rest  *regexp.Regexp
	first [128]bool     // ASCII
	other map[rune]bool // and any other
}

// splitOf returns the split form of spec's regex, or nil if it has none:
// the regex must start with lazyWordPrefix and its rest must not look at
// what precedes it (no \b, \B, ^ or \A), nor have a group of its own
// before the rest's (the prefix has none).
func splitOf(spec *ruleSpec) *splitRegex {
	rest, ok := strings.CutPrefix(spec.Regex, lazyWordPrefix)
	if !ok || strings.Contains(rest, `\b`) || strings.Contains(rest, `\B`) ||
		strings.Contains(rest, `\A`) || strings.Contains(strings.ReplaceAll(rest, "[^", ""), "^") {
		return nil
	}
	re, err := syntax.Parse(`(?i)`+rest, syntax.Perl)
	if err != nil {
		return nil
	}
	s := &splitRegex{rest: regexp.MustCompile(`^(?i)` + rest), other: map[rune]bool{}}
	if !s.addFirst(re.Simplify()) {
		return nil
	}
	return s
}

// addFirst adds the runes a match of re can start with, and reports
// whether it could tell (re cannot match the empty string, and its start
// is literals or small classes).
func (s *splitRegex) addFirst(re *syntax.Regexp) bool {
	add := func(r rune) {
		for f := r; ; {
			if f < utf8.RuneSelf {
				s.first[f] = true
			} else {
				s.other[f] = true
			}
			if re.Flags&syntax.FoldCase == 0 {
				break
			}
			if f = unicode.SimpleFold(f); f == r {
				break
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return false
		}
		add(re.Rune[0])
		return true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if n += int(re.Rune[i+1]-re.Rune[i]) + 1; n > 64 {
				return false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				add(r)
			}
		}
		return n > 0
	case syntax.OpCapture:
		return s.addFirst(re.Sub[0])
	case syntax.OpPlus:
		return s.addFirst(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min > 0 && s.addFirst(re.Sub[0])
	case syntax.OpConcat:
		return len(re.Sub) > 0 && s.addFirst(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !s.addFirst(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// findAll is regexp.FindAllStringSubmatchIndex(text, -1) of the whole
// regex.
func (s *splitRegex) findAll(text string) [][]int {
	var out [][]int
	for pos := 0; pos < len(text); {
		m, q := s.next(text, pos)
		if m == nil {
			break
		}
		// The lazy run: as far left as word characters go, up to 50,
		// not before the search's start.
		p := q
		for n := 0; p > pos && n < 50; n++ {
			r, size := utf8.DecodeLastRuneInString(text[pos:p])
			if !lazyWordRune(r) {
				break
			}
			p -= size
		}
		loc := make([]int, len(m))
		for i, v := range m {
			loc[i] = v
			if v >= 0 {
				loc[i] = v + q
			}
		}
		loc[0] = p
		out = append(out, loc)
		if loc[1] <= pos { // a match is never empty; be safe
			break
		}
		pos = loc[1]
	}
	return out
}

// next returns the first match of the rest at or after pos, and where it
// starts.
func (s *splitRegex) next(text string, pos int) ([]int, int) {
	for q := pos; q < len(text); q++ {
		if c := text[q]; c < utf8.RuneSelf {
			if !s.first[c] {
				continue
			}
		} else if r, _ := utf8.DecodeRuneInString(text[q:]); !s.other[r] {
			continue
		}
		if m := s.rest.FindStringSubmatchIndex(text[q:]); m != nil {
			return m, q
		}
	}
	return nil, 0
}

// lazyWordRune is the class of (?i)[\w.-].
func lazyWordRune(r rune) bool {
	return r < utf8.RuneSelf && (runClass[r]&runB64 != 0 && r != '+' && r != '/' || r == '.') || r == '\u212a' || r == '\u017f'
}
