package redact

import "math/bits"

// Which rules run on a text: the run prefilter (runs.go), then the keyword
// scan, then, at each keyword occurrence, the run window and the anchor.
// Each step only skips rules whose regex cannot match.

// kwRule is a rule a keyword triggers, with where the keyword sits in the
// rule's anchor (none: the rule has no anchor).
type kwRule struct {
	rule    uint16
	offsets []int32
}

// maxRuns bounds the long runs a text's scan keeps; past it, every window
// check passes (still correct, only slower).
const maxRuns = 24

// textRuns is what the run scan found: the longest run, or k-1 if none
// is k bytes long (it may be as long as that), and the runs of at least
// k bytes, in order.
type textRuns struct {
	ascii   bool // no byte above 0x7f
	longest int
	n       int
	over    bool
	escape  bool // a token of at least k bytes holds a % or a \ (decode.go)
	at      [maxRuns][2]int32
	class   [maxRuns]uint8 // the AND of each run's bytes' runClass
}

// scanRuns finds the maximal runs of run-class bytes of at least k (>= 8)
// bytes. It reads the text eight bytes at a time for its tokens (bytes
// above space), since a run lies within one, and only a token of at least
// k bytes is read again byte by byte for its runs: in prose, whose words
// are short, that is none.
func scanRuns[T string | []byte](text T, k int, rs *textRuns) {
	const lo7, add, hi = 0x7f7f7f7f7f7f7f7f, 0x5f5f5f5f5f5f5f5f, 0x8080808080808080
	rs.longest = k - 1
	rs.escape = false
	n := len(text)
	tok := 0 // the token's start
	i := 0
	var high uint64 // the words' bits 7: the text is ASCII if none
	for ; i+8 <= n; i += 8 {
		w := text[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		high |= x
		// Bit 7 of each byte at or below space: exact, no borrow between
		// bytes (the sum stays within each byte).
		m := ^((x & lo7) + add | x) & hi
		if m == 0 {
			continue
		}
		// Tokens within the word are at most six bytes: only the one it
		// ends and the one it starts matter.
		if end := i + bits.TrailingZeros64(m)>>3; end-tok >= k {
			refineRuns(text, tok, end, k, rs)
		}
		tok = i + 8 - bits.LeadingZeros64(m)>>3
	}
	for ; i < n; i++ {
		high |= uint64(text[i])
		if text[i] <= ' ' {
			if i-tok >= k {
				refineRuns(text, tok, i, k, rs)
			}
			tok = i + 1
		}
	}
	rs.ascii = high&hi == 0
	if n-tok >= k {
		refineRuns(text, tok, n, k, rs)
	}
}

// refineRuns adds the runs of at least k bytes in text[s:e].
func refineRuns[T string | []byte](text T, s, e, k int, rs *textRuns) {
	t := text[s:e]
	for i := 0; i < len(t); {
		start := i
		cls := uint8(runChar | runB64 | runHex)
		// Eight bytes a step while they are all of the class: the long
		// tokens (hashes, UUIDs, paths) are mostly runs.
		for i+8 <= len(t) {
			w := t[i : i+8]
			c := runClass[w[0]] & runClass[w[1]] & runClass[w[2]] & runClass[w[3]] &
				runClass[w[4]] & runClass[w[5]] & runClass[w[6]] & runClass[w[7]]
			if c == 0 {
				break
			}
			cls &= c
			i += 8
		}
		for i < len(t) && runClass[t[i]] != 0 {
			cls &= runClass[t[i]]
			i++
		}
		// A byte that ends a run may start an escape: noted here, where
		// the long tokens are read anyway, so that mayDecode need not scan
		// a text for % and \ (its escapes span at least 12 > k bytes, so
		// they lie in a token this reads).
		if i < len(t) && (t[i] == '%' || t[i] == '\\') {
			rs.escape = true
		}
		if i-start >= k {
			rs.longest = max(rs.longest, i-start)
			if rs.n < maxRuns {
				rs.class[rs.n] = cls
				rs.at[rs.n] = [2]int32{int32(s + start), int32(s + i)}
				rs.n++
			} else {
				rs.over = true
			}
		}
		i++
	}
}

// window reports whether text[q:end] may hold a run of least bytes: a
// kept run overlaps it by that much, or least is below what the scan
// keeps.
func (rs *textRuns) window(q, end, least, k int) bool {
	if least < k || rs.over {
		return true
	}
	for _, r := range rs.at[:rs.n] {
		s, e := int(r[0]), int(r[1])
		if s >= end {
			break
		}
		if min(e, end)-max(s, q) >= least {
			return true
		}
	}
	return false
}

// possible reports whether any rule may match a text whose longest run is
// longest: rules by their least run, a rule with required literals only
// if the text holds them.
func possible[T string | []byte](b *ruleBook, text T, longest int) bool {
	if longest >= b.below {
		return true // a rule without literals may match
	}
	var sc litScan
	for _, g := range b.gate {
		if g.least > longest {
			return false
		}
		if holdsAll(&b.lits, text, g.need, &sc) {
			return true
		}
	}
	return false
}

// candidates returns the rules to run on text: of those the run prefilter
// allows, the rules with no keywords, those one of whose keywords occurs
// and that have no anchor, and those whose run window and anchor pass at
// an occurrence, in text or in its view (read as punctuationAsSpace
// would make it).
func candidates[T string | []byte](b *ruleBook, text T) ruleSet {
	var rs textRuns
	return candidatesRuns(b, text, &rs)
}

// candidatesRuns is candidates, leaving the run scan's findings in rs
// (rs.longest: the decoding's gate, decode.go).
func candidatesRuns[T string | []byte](b *ruleBook, text T, rs *textRuns) ruleSet {
	var run ruleSet
	scanRuns(text, b.runK, rs)
	if !possible(b, text, rs.longest) {
		return run
	}
	// A rule the keywords or an anchor would run still needs its
	// literals: a \bcurl\b rule need not run on every "libcurl".
	var sc litScan
	admit := func(ri uint16) { // run ri if it holds its literals
		if need := b.rules[ri].need; need == nil || holdsAll(&b.lits, text, need, &sc) {
			run.add(ri)
		}
	}
	for _, i := range b.always {
		if b.rules[i].least <= rs.longest {
			admit(uint16(i))
		}
	}
	var seen ruleSet
	folded := scanKnown(b.scan, text, rs.ascii, func(k uint16, end int) {
		start := end - len(b.keywords[k])
		for _, h := range b.hitsOf[k] {
			ri := h.rule
			if run.has(int(ri)) || int(b.least[ri]) > rs.longest {
				continue
			}
			seen.add(ri)
			a := b.rules[ri].anchor
			if a == nil {
				admit(ri)
				continue
			}
			for _, o := range h.offsets {
				q := start - int(o)
				if q < 0 {
					continue
				}
				end := min(len(text), q+a.max+1)
				if !rs.window(q, end, a.least, b.runK) || !atBoundaries(a, text, q) {
					continue
				}
				pre := a.prefilter()
				if pre == nil {
					admit(ri)
					break
				}
				ok, stop := prefilterMatches(pre, text, q, end, false)
				// The view needs a look only if it may differ from the
				// text before where the text's walk stopped.
				if !ok && punctuationIn(text, q, min(stop+1, end)) {
					ok, _ = prefilterMatches(pre, text, q, end, true)
				}
				if ok {
					admit(ri)
					break
				}
			}
		}
	})
	if folded {
		// An occurrence may be longer than its keyword: no anchors.
		for i := range run {
			run[i] |= seen[i]
		}
	}
	return run
}

// punctuationIn reports whether text[from:to] has a byte that its view
// may read as a space (one of , . ) ] } >), so that the view may differ
// there.
func punctuationIn[T string | []byte](text T, from, to int) bool {
	for i := from; i < to; i++ {
		if trailingPunct(text[i]) {
			return true
		}
	}
	return false
}

// punctuationBeforeSpace reports whether the run of trailing punctuation
// at text[i] ends the text or stands before whitespace: the view reads it
// as spaces.
func punctuationBeforeSpace[T string | []byte](text T, i int) bool {
	for i < len(text) && trailingPunct(text[i]) {
		i++
	}
	return i == len(text) || isSpace(text[i])
}
