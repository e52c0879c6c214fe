package redact

import (
	"regexp/syntax"
	"sync"
	"unicode/utf8"
)

// prefilter runs an anchor's regex as a lazily built DFA: what Go's regexp
// spends in its backtracker on each keyword occurrence (microseconds) is
// then a table lookup per byte. It treats every assertion (\b, $, ^) as
// holding, so it matches a superset of what the regex matches: still a
// sound reason to skip a rule when it fails, never a reason to redact.
// TestPrefilterCoversTheRegex checks the superset.
type prefilter struct {
	prog    *syntax.Prog
	closure [][]uint64 // by pc: the consuming and match pcs reachable without input
	match   []uint64   // the match pcs
	start   []uint64
	startID int32

	mu     sync.Mutex
	states []dstate
	index  map[string]int32
}

type dstate struct {
	set   []uint64
	next  [128]int32 // by ASCII byte: 0 unknown, -1 dead, else state+1
	match bool
}

// maxDFAStates bounds a prefilter's cache; past it, states are computed
// afresh on every step (still correct, only slower).
const maxDFAStates = 2048

func newPrefilter(re *syntax.Regexp) *prefilter {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	n := len(prog.Inst)
	words := (n + 63) / 64
	p := &prefilter{prog: prog, closure: make([][]uint64, n), match: make([]uint64, words), index: map[string]int32{}}
	for pc := range prog.Inst {
		set := make([]uint64, words)
		p.follow(uint32(pc), set, make([]bool, n))
		p.closure[pc] = set
		if prog.Inst[pc].Op == syntax.InstMatch {
			p.match[pc/64] |= 1 << (pc % 64)
		}
	}
	p.start = p.closure[prog.Start]
	p.startID = p.state(p.start)
	return p
}

// follow adds to set what pc reaches without consuming input.
func (p *prefilter) follow(pc uint32, set []uint64, seen []bool) {
	if seen[pc] {
		return
	}
	seen[pc] = true
	in := &p.prog.Inst[pc]
	switch in.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		p.follow(in.Out, set, seen)
		p.follow(in.Arg, set, seen)
	case syntax.InstNop, syntax.InstCapture, syntax.InstEmptyWidth:
		p.follow(in.Out, set, seen) // an assertion is taken to hold
	case syntax.InstFail:
	default: // rune instructions and match
		set[pc/64] |= 1 << (pc % 64)
	}
}

func (p *prefilter) isMatch(set []uint64) bool {
	for i, w := range set {
		if w&p.match[i] != 0 {
			return true
		}
	}
	return false
}

// step is the set after reading r.
func (p *prefilter) step(set []uint64, r rune) []uint64 {
	next := make([]uint64, len(set))
	any := false
	for i, w := range set {
		for w != 0 {
			b := w & -w
			w &^= b
			pc := i*64 + bitIndex(b)
			in := &p.prog.Inst[pc]
			ok := false
			switch in.Op {
			case syntax.InstRune, syntax.InstRune1:
				ok = in.MatchRune(r)
			case syntax.InstRuneAny:
				ok = true
			case syntax.InstRuneAnyNotNL:
				ok = r != '\n'
			}
			if ok {
				for j, c := range p.closure[in.Out] {
					next[j] |= c
				}
				any = true
			}
		}
	}
	if !any {
		return nil
	}
	return next
}

func bitIndex(b uint64) int {
	n := 0
	for b > 1 {
		b >>= 1
		n++
	}
	return n
}

// state returns the id of set's state, adding it if there is room; -1 if
// set is nil (dead), -2 if the cache is full.
func (p *prefilter) state(set []uint64) int32 {
	if set == nil {
		return -1
	}
	key := setKey(set)
	if id, ok := p.index[key]; ok {
		return id
	}
	if len(p.states) >= maxDFAStates {
		return -2
	}
	p.states = append(p.states, dstate{set: set, match: p.isMatch(set)})
	id := int32(len(p.states) - 1)
	p.index[key] = id
	return id
}

func setKey(set []uint64) string {
	b := make([]byte, 8*len(set))
	for i, w := range set {
		for k := 0; k < 8; k++ {
			b[8*i+k] = byte(w >> (8 * k))
		}
	}
	return string(b)
}

// matches reports whether the anchor's regex (assertions taken to hold)
// matches a prefix of text[q:end].
func (p *prefilter) matches(text string, q, end int) bool {
	ok, _ := prefilterMatches(p, text, q, end, false)
	return ok
}

// matchesUntil is matches, and where it stopped reading when it did not
// match: a text that agrees with this one up to there does not match
// either.
func (p *prefilter) matchesUntil(text string, q, end int) (bool, int) {
	return prefilterMatches(p, text, q, end, false)
}

// matchesBytes is matches on a []byte.
func (p *prefilter) matchesBytes(text []byte, q, end int) bool {
	ok, _ := prefilterMatches(p, text, q, end, false)
	return ok
}

// With asView, it reads text as its view does (punctuationAsSpace): each
// run of trailing punctuation that ends the text or stands before
// whitespace as spaces, without making the view.
func prefilterMatches[T string | []byte](p *prefilter, text T, q, end int, asView bool) (bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.startID
	set := p.start
	if p.isMatch(set) {
		return true, q
	}
	i := q
	for i < end {
		c := text[i]
		if asView && trailingPunct(c) && punctuationBeforeSpace(text, i) {
			c = ' '
		}
		if cur >= 0 && c < utf8.RuneSelf {
			st := &p.states[cur]
			nx := st.next[c]
			if nx == 0 {
				id := p.state(p.step(st.set, rune(c)))
				switch id {
				case -1:
					p.states[cur].next[c] = -1
					return false, i
				case -2:
					set = p.step(p.states[cur].set, rune(c))
					cur = -2
					i++
					if set == nil {
						return false, i
					}
					if p.isMatch(set) {
						return true, i
					}
					continue
				}
				p.states[cur].next[c] = id + 1
				nx = id + 1
			}
			if nx < 0 {
				return false, i
			}
			cur = nx - 1
			if p.states[cur].match {
				return true, i
			}
			set = p.states[cur].set
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = decodeRune(text[i:end])
		}
		if cur >= 0 {
			set = p.states[cur].set
		}
		if set = p.step(set, r); set == nil {
			return false, i
		}
		if p.isMatch(set) {
			return true, i
		}
		cur = p.state(set)
		i += size
	}
	return false, i
}

func decodeRune[T string | []byte](s T) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.RuneError, 1
}
