package redact

import (
	"regexp/syntax"
	"sync"
	"unicode"
	"unicode/utf8"
)

// An anchor lets a rule skip its regex on a text where no match can be:
// see docs/redaction.md, "Where a rule runs". Every match of the rule's
// regex must contain, in one run of its top-level parts (the key part), a
// keyword; so a match has a keyword occurrence at a known offset in the
// key part, and from the key part on it matches the anchor's regex: the
// key part and the bounded parts after it, and the part after those cut
// to what it must match first (x{n,} becomes x{n}). If that anchored
// regex fails at every keyword occurrence, the rule's regex cannot match
// anywhere, and is not run. If it passes anywhere, the rule's regex runs
// over the whole text, as upstream runs it: the anchor only ever skips
// work, never changes a result.
type anchor struct {
	// cat is the key part, the bounded rest and the cut part, which must
	// match at the start of the window (the tests check that the
	// prefilter passes wherever ^(?:cat) matches). The prefilter runs cat,
	// assertions taken to hold, as a lazy DFA; it is built on first use,
	// as the rule's regex is (compiledRule). A book's anchor has only
	// expr, cat as String writes it (analysis.go), parsed then.
	cat  *syntax.Regexp
	expr string
	once sync.Once
	pre  *prefilter // nil if it could not be built: every window passes
	// max is the most bytes re can match: it runs on text[q:q+max+1].
	max int
	// offsets[kw] are the byte offsets at which keyword kw can sit in the
	// key part's match; a keyword of the rule that cannot sit there has
	// none.
	offsets map[string][]int
	// least is the least run (runs.go) a match of re holds.
	least int
	// boundary lists where, from the key part's start, the regex asserts
	// \b: just before the key part, and just after it when it matches one
	// string only. The prefilter takes assertions to hold; these are
	// checked on the text (Go's \b is ASCII), so that \bcurl\b does not
	// pass at every "libcurl".
	boundary []int
}

// maxLang bounds the strings a key part may stand for.
const maxLang = 256

// newAnchor builds the anchor of a regex (parsed with syntax.Perl, not
// changed) and its keywords, or returns nil when the regex's shape does
// not prove that every match holds a keyword (the rule then runs wherever
// a keyword occurs).
func newAnchor(re *syntax.Regexp, keywords []string) *anchor {
	if len(keywords) == 0 {
		return nil
	}
	parts := flatten(re, nil)
	for k := range parts {
		if hasAssertion(parts[k]) {
			continue
		}
		// A part too large to list may still start with a short list of
		// strings that hold a keyword: (?:hvs\.\w{90,}|s\.\w{24}).
		if _, ok := language(parts[k]); !ok {
			if pre, ok := prefixes(parts[k]); ok {
				if offsets, all := keywordOffsets(pre, keywords); all {
					return build(parts, k, offsets)
				}
			}
			continue
		}
		// The shortest run parts[k:j] whose strings all hold a keyword.
		var lang []string
		for j := k; j < len(parts) && !hasAssertion(parts[j]); j++ {
			next, ok := language(parts[j])
			if !ok {
				break
			}
			lang = product(lang, next, j == k)
			if lang == nil {
				break
			}
			offsets, all := keywordOffsets(lang, keywords)
			if !all {
				continue
			}
			return build(parts, k, offsets)
		}
	}
	return nil
}

// build makes the anchored regex from parts[k:]: the bounded run, then the
// first unbounded part cut.
func build(parts []*syntax.Regexp, k int, offsets map[string][]int) *anchor {
	a := buildAnchor(parts, k, offsets)
	if a == nil {
		return nil
	}
	if k > 0 && parts[k-1].Op == syntax.OpWordBoundary {
		a.boundary = append(a.boundary, 0)
	}
	if lang, ok := language(parts[k]); ok && len(lang) == 1 && caseExact(parts[k]) &&
		k+1 < len(parts) && parts[k+1].Op == syntax.OpWordBoundary {
		a.boundary = append(a.boundary, len(lang[0]))
	}
	return a
}

// atBoundaries reports whether text has a word boundary at q plus each
// of a.boundary.
func atBoundaries[T string | []byte](a *anchor, text T, q int) bool {
	for _, o := range a.boundary {
		p := q + o
		before := p > 0 && p <= len(text) && isWordByte(text[p-1])
		after := p < len(text) && isWordByte(text[p])
		if before == after {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func buildAnchor(parts []*syntax.Regexp, k int, offsets map[string][]int) *anchor {
	var seq []*syntax.Regexp
	total := 0
	for _, p := range parts[k:] {
		if n, ok := maxLen(p); ok {
			seq = append(seq, p)
			total += n
			continue
		}
		if c := cut(p); c != nil {
			if n, ok := maxLen(c); ok {
				seq = append(seq, c)
				total += n
			}
		}
		break
	}
	// The last part need only match its shortest start: x{n,m} as x{n}
	// keeps the window short (a long window costs the backtracker its
	// clearing).
	if last := len(seq) - 1; last > 0 {
		if c := shortest(seq[last]); c != nil {
			total -= mustMaxLen(seq[last])
			seq[last] = c
			total += mustMaxLen(c)
		}
	}
	cat := &syntax.Regexp{Op: syntax.OpConcat, Sub: seq}
	return &anchor{cat: cat, max: total, offsets: offsets, least: leastRun(cat, 0, 0)}
}

// prefilter is the anchor's prefilter, built on first use; nil if it
// cannot be (then the anchor skips nothing).
func (a *anchor) prefilter() *prefilter {
	a.once.Do(func() {
		if a.cat == nil {
			re, err := syntax.Parse(a.expr, syntax.Perl)
			if err != nil {
				panic("redact: an anchor's regex: " + err.Error()) // TestAnalysisTable parses them all
			}
			a.cat = re
		}
		a.pre = newPrefilter(a.cat)
	})
	return a.pre
}

// flatten lists the top-level parts of a concatenation, looking through
// groups (a capture does not change what matches).
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		for _, s := range re.Sub {
			out = flatten(s, out)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	}
	return append(out, re)
}

func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasAssertion(s) {
			return true
		}
	}
	return false
}

// maxLen is the most bytes re can match, and false if it is unbounded.
func maxLen(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += foldedLen(r, re.Flags&syntax.FoldCase != 0)
		}
		return n, true
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0, true
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], utf8.MaxRune)), true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxLen(re.Sub[0])
		return n * re.Max, ok
	case syntax.OpConcat, syntax.OpAlternate:
		// A concatenation takes the sum of its parts, an alternation
		// its longest branch.
		n := 0
		for _, s := range re.Sub {
			m, ok := maxLen(s)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
		}
		return n, true
	}
	return 0, false // star, plus
}

// foldedLen is the most bytes r takes, with its case folds if fold.
func foldedLen(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if fold {
		for f := unicodeSimpleFold(r); f != r; f = unicodeSimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	return max(n, 1)
}

// cut returns what a match of re must start with, bounded: x{n,} as
// x{n}, x* and x+ as nothing and x, alternatives cut each, a sequence up
// to its first unbounded part cut; nil if nothing bounded remains.
func cut(re *syntax.Regexp) *syntax.Regexp {
	if _, ok := maxLen(re); ok {
		return re
	}
	switch re.Op {
	case syntax.OpCapture:
		return cut(re.Sub[0])
	case syntax.OpStar:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpPlus:
		return cut(re.Sub[0])
	case syntax.OpRepeat:
		sub := cut(re.Sub[0])
		if sub == nil {
			return nil
		}
		if _, ok := maxLen(re.Sub[0]); !ok {
			if re.Min == 0 {
				return &syntax.Regexp{Op: syntax.OpEmptyMatch}
			}
			return sub
		}
		return atMin(re)
	case syntax.OpAlternate:
		return alternate(re, cut)
	case syntax.OpConcat:
		out := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags}
		for _, s := range re.Sub {
			if _, ok := maxLen(s); ok {
				out.Sub = append(out.Sub, s)
				continue
			}
			if c := cut(s); c != nil {
				out.Sub = append(out.Sub, c)
			}
			break
		}
		return out
	}
	return nil
}

// atMin is the repetition re at its minimum: x{n,m} and x{n,} as x{n}.
func atMin(re *syntax.Regexp) *syntax.Regexp {
	return &syntax.Regexp{Op: syntax.OpRepeat, Min: re.Min, Max: re.Min, Sub: []*syntax.Regexp{re.Sub[0]}, Flags: re.Flags}
}

// alternate is the alternation re with f applied to each alternative; nil
// if f gives nil for any.
func alternate(re *syntax.Regexp, f func(*syntax.Regexp) *syntax.Regexp) *syntax.Regexp {
	out := &syntax.Regexp{Op: syntax.OpAlternate, Flags: re.Flags}
	for _, s := range re.Sub {
		c := f(s)
		if c == nil {
			return nil
		}
		out.Sub = append(out.Sub, c)
	}
	return out
}

func unicodeSimpleFold(r rune) rune { return unicode.SimpleFold(r) }

func mustMaxLen(re *syntax.Regexp) int {
	n, _ := maxLen(re)
	return n
}

// shortest returns what a match of the bounded re must start with, with
// every repetition at its minimum: x{n,m} as x{n}, x? as nothing.
func shortest(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return shortest(re.Sub[0])
	case syntax.OpQuest:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpRepeat:
		return atMin(re)
	case syntax.OpAlternate:
		return alternate(re, shortest)
	case syntax.OpConcat:
		// Only the last part of a sequence may be cut short.
		out := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: append([]*syntax.Regexp(nil), re.Sub...)}
		if n := len(out.Sub); n > 0 {
			out.Sub[n-1] = shortest(out.Sub[n-1])
		}
		return out
	}
	return re
}
