package redact

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"strings"
)

// Required literals: for the few rules whose least run is too short to
// skip them on prose (url-credentials' "://", curl-auth-*'s "curl" and
// "-H"), what every match must hold, so that a text without it skips
// them too. Each is found with IndexByte on its rarest byte.

// needGroup is a set of literals, case-sensitive, one of which every
// match holds.
type needGroup []literal

type literal struct {
	s    string
	rare int  // the index of its rarest byte (byteRank)
	c    byte // that byte, here so that a check reads no string it need not
}

// requiredGroups returns the groups of re's top-level parts that are
// literals, or alternations of parts that each hold one, rarest first, at
// most two; nil if none.
func requiredGroups(re *syntax.Regexp) []needGroup {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	var groups []needGroup
	for i, p := range parts {
		if g := partGroup(p); g != nil {
			groups = append(groups, g)
		}
		// A few strings in two or three parts in a row: an alternation
		// the parser factored (-u|--user is - then u|-user).
		for j := i + 2; j <= min(i+3, len(parts)); j++ {
			if g := stringsGroup(&syntax.Regexp{Op: syntax.OpConcat, Sub: parts[i:j]}); g != nil {
				groups = append(groups, g)
			}
		}
	}
	slices.SortStableFunc(groups, func(x, y needGroup) int { return x.cost() - y.cost() })
	if len(groups) > 2 {
		groups = groups[:2]
	}
	return groups
}

func partGroup(p *syntax.Regexp) needGroup {
	for p.Op == syntax.OpCapture {
		p = p.Sub[0]
	}
	if p.Op == syntax.OpConcat {
		return stringsGroup(p)
	}
	switch p.Op {
	case syntax.OpLiteral:
		if s := caselessRun(p); s != "" {
			return needGroup{newLiteral(s)}
		}
	case syntax.OpAlternate:
		var g needGroup
		for _, s := range p.Sub {
			sub := requiredGroups(s)
			if len(sub) == 0 || len(sub[0]) != 1 {
				return nil
			}
			g = append(g, sub[0][0])
		}
		return g
	}
	return nil
}

// stringsGroup is the strings re matches as a group, if they are few,
// found as they are (caseExact), each of at least two bytes (or one rare
// byte) and none with a space (which log text is full of).
func stringsGroup(re *syntax.Regexp) needGroup {
	if !caseExact(re) {
		return nil
	}
	lang, ok := language(re)
	if !ok || len(lang) > maxGroupStrings {
		return nil
	}
	var g needGroup
	for _, s := range lang {
		if len(s) < 2 && (len(s) == 0 || byteRank(s[0]) > 3) || strings.ContainsAny(s, " \t\n\r\f\v") {
			return nil
		}
		g = append(g, newLiteral(s))
	}
	return g
}

// maxGroupStrings bounds the strings of a part taken as a group.
const maxGroupStrings = 8

// caseExact reports whether re matches only ASCII and folds no case, with
// no uppercase letter in it: language then gives its strings as they are.
func caseExact(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase != 0 {
		return false
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= 0x80 || 'A' <= r && r <= 'Z' {
				return false
			}
		}
	case syntax.OpCharClass: // ranges, lo and hi
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if lo, hi := re.Rune[i], re.Rune[i+1]; hi >= 0x80 || lo <= 'Z' && hi >= 'A' {
				return false
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, s := range re.Sub {
		if !caseExact(s) {
			return false
		}
	}
	return true
}

// caselessRun is the longest run of a literal's characters that stand for
// themselves (under (?i), those without case), of at least two bytes (or
// one rare byte) and no space; or "".
func caselessRun(p *syntax.Regexp) string {
	fold := p.Flags&syntax.FoldCase != 0
	best, start := "", 0
	for i := 0; i <= len(p.Rune); i++ {
		if i < len(p.Rune) {
			r := p.Rune[i]
			if !(r < 0x80 && isSpace(byte(r))) && (!fold || unicodeSimpleFold(r) == r) {
				continue
			}
		}
		// One byte will do if it is rare: a quote, an @.
		if s := string(p.Rune[start:i]); len(s) > len(best) && (len(s) >= 2 || len(s) == 1 && byteRank(s[0]) <= 3) {
			best = s
		}
		start = i + 1
	}
	return best
}

func newLiteral(s string) literal {
	l := literal{s: s}
	for i := 1; i < len(s); i++ {
		if byteRank(s[i]) < byteRank(s[l.rare]) {
			l.rare = i
		}
	}
	l.c = s[l.rare]
	return l
}

// cost is how often the group's rarest bytes stand in a text, roughly.
func (g needGroup) cost() int {
	c := 0
	for _, l := range g {
		c += byteRank(l.s[l.rare])
	}
	return c
}

// byteRank is roughly how common a byte is in log text and prose, in
// tenths of a percent: lower is rarer.
func byteRank(c byte) int {
	const letters = "etaoinsrhldcumfpgwybvkxjqz" // by frequency, most first
	switch {
	case c == ' ':
		return 180
	case 'a' <= c && c <= 'z':
		return 100 - 3*strings.IndexByte(letters, c)
	case '0' <= c && c <= '9':
		return 10
	case 'A' <= c && c <= 'Z':
		return 3
	}
	switch c {
	case '.', ',', '-', '/', ':', '_':
		// Dates, versions, paths and flags: as common in log text as a
		// common letter.
		return 60
	}
	return 1
}

// maxLiterals bounds the required literals of the whole table (found is a
// bit set).
const maxLiterals = 192

// literals is the table's required literals, each once; groups refer to
// them by index.
type literals struct {
	all  []literal
	same [][]uint8 // by literal: those with the same rarest byte, itself included
}

func (ls *literals) add(l literal) uint8 {
	for i, m := range ls.all {
		if m.s == l.s {
			return uint8(i)
		}
	}
	if len(ls.all) == maxLiterals {
		panic("redact: more than maxLiterals required literals")
	}
	ls.all = append(ls.all, l)
	i := uint8(len(ls.all) - 1)
	ls.same = append(ls.same, nil)
	for j, m := range ls.all {
		if m.c == l.c {
			ls.same[i] = append(ls.same[i], uint8(j))
			if j != int(i) {
				ls.same[j] = append(ls.same[j], i)
			}
		}
	}
	return i
}

// litScan is which literals one text holds, found as asked: one
// IndexByte pass over the text for each rarest byte asked about, which
// settles every literal that has it.
type litScan struct{ done, found litSet }

// litSet is a set of literal indices.
type litSet [maxLiterals / 64]uint64

func (s *litSet) add(i uint8)      { s[i/64] |= 1 << (i % 64) }
func (s *litSet) has(i uint8) bool { return s[i/64]&(1<<(i%64)) != 0 }

func holdsLiteral[T string | []byte](ls *literals, text T, i uint8, sc *litScan) bool {
	if sc.done.has(i) {
		return sc.found.has(i)
	}
	l := &ls.all[i]
	c := l.c
	same := ls.same[i]
	for _, j := range same {
		sc.done.add(j)
	}
	p := indexByte(text, c)
	if p >= 0 && len(same) == 1 && len(l.s) == 1 {
		sc.found.add(i) // a one-byte literal: found
		return true
	}
	for p >= 0 {
		for _, j := range same {
			m := &ls.all[j]
			at := p - m.rare
			if at >= 0 && at+len(m.s) <= len(text) && string(text[at:at+len(m.s)]) == m.s {
				sc.found.add(j)
			}
		}
		q := indexByte(text[p+1:], c)
		if q < 0 {
			break
		}
		p += 1 + q
	}
	return sc.found.has(i)
}

// holdsAll reports whether text holds a literal of every group of rule
// need (indices into ls).
func holdsAll[T string | []byte](ls *literals, text T, need [][]uint8, sc *litScan) bool {
	for _, g := range need {
		found := false
		for _, i := range g {
			if holdsLiteral(ls, text, i, sc) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func indexByte[T string | []byte](text T, c byte) int {
	switch t := any(text).(type) {
	case string:
		return strings.IndexByte(t, c)
	case []byte:
		return bytes.IndexByte(t, c)
	}
	return -1
}
