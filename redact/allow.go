package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

// An allowlist, compiled for speed with upstream's meaning kept. Upstream's
// generic-api-key list is one regex of some 150 alternatives and 1,446
// stopwords: joined, Go's regexp runs it as an NFA, at about 1 µs a byte of
// the match, and the stopwords cost a strings.Contains each, some 70 µs a
// finding in all. So the regexes are split into their top-level
// alternatives, and one keyword scan (keywords.go) of the target for each
// alternative's literals picks those that may match; one scan of
// the secret finds the stopwords. Both only skip work: allows answers as the
// joined regexes and strings.Contains on the lowercased secret do
// (TestAllowAsJoined).
type allow struct {
	target target
	and    bool
	// alts are the regexes' top-level alternatives: a target matches the
	// list if one of them matches it.
	alts   []*lazyRegexp
	always []int // alternatives without literals: always tried
	// need is, by alternative, sets of literals (indices) such that a
	// target it matches holds one of each set; lits finds them.
	need [][][]uint16
	lits *scanner // nil if no alternative has literals
	// stopwords, lowercase; stops finds them in an ASCII secret.
	stopwords []string
	stops     *scanner
}

func compileAllow(a allowSpec) allow {
	out := allow{target: a.Target, and: a.And, stopwords: a.Stopwords}
	var lits []string
	index := map[string]int{}
	for _, expr := range a.Regexes {
		for _, alt := range alternatives(expr) {
			i := len(out.alts)
			if i == maxRules {
				panic("redact: more than maxRules alternatives in an allowlist")
			}
			out.alts = append(out.alts, &lazyRegexp{tree: alt.tree, expr: alt.expr})
			if alt.need == nil {
				out.always = append(out.always, i)
			}
			var need [][]uint16
			for _, set := range alt.need {
				var ix []uint16
				for _, l := range set {
					k, ok := index[l]
					if !ok {
						k = len(lits)
						if k == maxRules {
							panic("redact: more than maxRules literals in an allowlist")
						}
						index[l] = k
						lits = append(lits, l)
					}
					ix = append(ix, uint16(k))
				}
				need = append(need, ix)
			}
			out.need = append(out.need, need)
		}
	}
	if len(lits) > 0 {
		out.lits = newScanner(lits)
	}
	if len(a.Stopwords) > 0 && lowerASCII(a.Stopwords) {
		out.stops = newScanner(a.Stopwords)
	}
	return out
}

// allows reports whether a finding with this secret, match and line is
// allowed, as upstream decides it.
func (a *allow) allows(secret, match, line string) bool {
	t := secret
	switch a.target {
	case targetMatch:
		t = match
	case targetLine:
		t = line
	}
	hasRe, hasStop := len(a.alts) > 0, len(a.stopwords) > 0
	re := func() bool { return hasRe && t != "" && a.matches(t) }
	stop := func() bool { return hasStop && secret != "" && a.hasStopword(secret) }
	if a.and {
		return (!hasRe || re()) && (!hasStop || stop())
	}
	return re() || stop()
}

// matches reports whether one of the alternatives matches t.
func (a *allow) matches(t string) bool {
	for _, i := range a.always {
		if a.alts[i].get().MatchString(t) {
			return true
		}
	}
	if a.lits == nil {
		return false
	}
	// The scan folds case and reads a few non-ASCII letters as ASCII ones
	// (keywords.go), so it finds every literal a (?i) alternative may
	// match, and perhaps more: the regex decides.
	var found ruleSet
	a.lits.scan(t, func(k uint16, _ int) { found.add(k) })
	for i, need := range a.need {
		if need != nil && holdsEach(&found, need) && a.alts[i].get().MatchString(t) {
			return true
		}
	}
	return false
}

// holdsEach reports whether found has a literal of each set.
func holdsEach(found *ruleSet, need [][]uint16) bool {
	for _, set := range need {
		hit := false
		for _, k := range set {
			if found.has(int(k)) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// hasStopword reports whether the secret, lowercased, contains a stopword.
// The scan's folding is strings.ToLower's on ASCII only (it reads U+0130
// as i, where ToLower gives i and a combining dot), so a secret with other
// bytes is lowercased and searched word by word.
func (a *allow) hasStopword(secret string) bool {
	if a.stops == nil || !isASCII(secret) {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				return true
			}
		}
		return false
	}
	found := false
	a.stops.scan(secret, func(uint16, int) { found = true })
	return found
}

// lazyRegexp is an alternative compiled on first use: most never run
// (their literals are missing), and printing and compiling upstream's some
// 200 alternatives cost about 11 ms.
type lazyRegexp struct {
	tree *syntax.Regexp // printed for the expression if expr is ""
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() {
		if l.expr == "" {
			l.expr = l.tree.String()
		}
		l.re = regexp.MustCompile(l.expr)
	})
	return l.re
}

// alternative is a top-level alternative of an allowlist regex: its
// expression (or its parsed form, to print) and sets of ASCII literals,
// lowercase, such that every match holds a literal of each set (none
// found: nil).
type alternative struct {
	tree *syntax.Regexp
	expr string
	need [][]string
}

// alternatives splits expr at its top-level alternation (as Go's parser
// leaves it, common prefixes factored out).
func alternatives(expr string) []alternative {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic("redact: allowlist regex: " + err.Error())
	}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpAlternate {
		return []alternative{{expr: expr, need: literalSets(re)}}
	}
	out := make([]alternative, len(re.Sub))
	for i, s := range re.Sub {
		out[i] = alternative{tree: s, need: literalSets(s)}
	}
	return out
}

// literalSets returns, for each of re's top-level parts (re itself if it
// is no concatenation) that has one, a set of literals one of which every
// match of the part holds: a literal's longest ASCII run, lowercased; for
// an alternation each of whose branches has a set, the union of one set
// of each.
func literalSets(re *syntax.Regexp) [][]string {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	var sets [][]string
	for _, p := range parts {
		for p.Op == syntax.OpCapture || p.Op == syntax.OpPlus ||
			p.Op == syntax.OpRepeat && p.Min >= 1 {
			p = p.Sub[0]
		}
		var set []string
		switch p.Op {
		case syntax.OpLiteral:
			if l := asciiRun(p.Rune); l != "" {
				set = []string{l}
			}
		case syntax.OpAlternate:
			for _, b := range p.Sub {
				sub := literalSets(b)
				if sub == nil {
					set = nil
					break
				}
				set = append(set, bestSet(sub)...)
			}
		}
		if set != nil {
			sets = append(sets, set)
		}
	}
	return sets
}

// bestSet is the set whose shortest literal is longest: likely the rarest.
func bestSet(sets [][]string) []string {
	var best []string
	bestLen := 0
	for _, set := range sets {
		n := 1 << 30
		for _, l := range set {
			n = min(n, len(l))
		}
		if n > bestLen {
			best, bestLen = set, n
		}
	}
	return best
}

// asciiRun is the longest run of ASCII characters in runes, lowercased.
func asciiRun(runes []rune) string {
	best, start := "", 0
	for i := 0; i <= len(runes); i++ {
		if i < len(runes) && runes[i] < 0x80 {
			continue
		}
		if s := runes[start:i]; len(s) > len(best) {
			best = strings.ToLower(string(s))
		}
		start = i + 1
	}
	return best
}

// lowerASCII reports whether every word is non-empty lowercase ASCII, as
// the scanner's keywords must be.
func lowerASCII(words []string) bool {
	for _, w := range words {
		if w == "" || !isASCII(w) || strings.ToLower(w) != w {
			return false
		}
	}
	return true
}
