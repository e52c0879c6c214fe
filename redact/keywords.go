package redact

// The keyword scan: one pass over the text, an Aho-Corasick automaton built
// as a complete DFA over byte classes, folding case as it reads. It is this
// package's own rather than a module's because folding inside the class
// table lets it scan without the lowercased copy of the text (and without
// the per-match allocations) that a library over lowercased input needs:
// a clean message costs no allocation (docs/redaction.md, "Speed").

// scanner finds which rules' keywords occur in a text.
type scanner struct {
	class   [256]uint8 // byte -> class; 0 is every byte no keyword has
	classes int        // number of classes, 0 included
	// next[state*classes+class] is the next state, with outputFlag if
	// keywords end there; nil when table holds the automaton.
	next []uint16
	out  [][]uint16 // keywords that end at a state (suffixes included)
	// table is the automaton in an array a uint16 indexes, so that the
	// scan reads it without a bounds check, its states renumbered so that
	// those with keywords come last, from outBase, and each entry the next
	// state times classes: a byte costs an add and a load, no multiply.
	// nil if the automaton has more than 1<<16 entries.
	table   *[1 << 16]uint16
	outBase uint16
	outPre  [][]uint16 // by renumbered state: out
	depth   int        // the automaton's: its longest keyword's bytes, at most keywordCut
	rest    []string   // by keyword: its bytes past keywordCut
}

// Bytes of the non-ASCII characters that fold to an ASCII letter, as the
// upstream keyword scan (strings.ToLower) or Go's (?i) sees them: U+212A
// KELVIN SIGN is k, U+0130 (İ) lowercases to i + U+0307, and U+017F (ſ)
// matches s under (?i). Reading them as the letter makes the scan find a
// superset of upstream's keywords, so no rule upstream runs is skipped.
const (
	kelvin0, kelvin1, kelvin2 = 0xE2, 0x84, 0xAA
	dotI0, dotI1              = 0xC4, 0xB0
	longS0, longS1            = 0xC5, 0xBF
)

// outputFlag marks, in scanner.next, a state where keywords end.
const outputFlag = 1 << 15

// keywordCut is the most bytes of a keyword the automaton holds; the
// rest is compared where those occur. A shallow automaton has fewer states
// (more of its table in the cache) and lets the scan split a text of a
// line's length in two (scanText).
const keywordCut = 8

// newScanner builds the automaton for keywords, lowercase ASCII; a scan
// reports keyword i by its index.
func newScanner(keywords []string) *scanner {
	s := &scanner{rest: make([]string, len(keywords))}
	// Classes: one per distinct byte of the keywords' first keywordCut.
	n := 1
	for ki, k := range keywords {
		if len(k) > keywordCut {
			k, s.rest[ki] = k[:keywordCut], k[keywordCut:]
		}
		for i := 0; i < len(k); i++ {
			if s.class[k[i]] == 0 {
				s.class[k[i]] = uint8(n)
				n++
			}
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		s.class[c-'a'+'A'] = s.class[c]
	}
	s.classes = n
	// The trie.
	type node struct {
		child []uint16 // by class; 0 is none (the root is never a child)
		fail  uint16
		out   []uint16
	}
	nodes := []node{{child: make([]uint16, n)}}
	for ki, k := range keywords {
		k = k[:min(len(k), keywordCut)]
		s.depth = max(s.depth, len(k))
		cur := 0
		for i := 0; i < len(k); i++ {
			c := s.class[k[i]]
			if nodes[cur].child[c] == 0 {
				nodes = append(nodes, node{child: make([]uint16, n)})
				nodes[cur].child[c] = uint16(len(nodes) - 1)
			}
			cur = int(nodes[cur].child[c])
		}
		nodes[cur].out = append(nodes[cur].out, uint16(ki))
	}
	if len(nodes) >= outputFlag {
		panic("redact: too many keyword states")
	}
	// Breadth first: failure links, outputs along them, and the complete
	// transition table.
	s.next = make([]uint16, len(nodes)*n)
	queue := make([]uint16, 0, len(nodes))
	for c := 0; c < n; c++ {
		if ch := nodes[0].child[c]; ch != 0 {
			s.next[c] = ch
			queue = append(queue, ch)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		f := nodes[u].fail
		nodes[u].out = union(nodes[u].out, nodes[f].out)
		for c := 0; c < n; c++ {
			if ch := nodes[u].child[c]; ch != 0 {
				nodes[ch].fail = s.next[int(f)*n+c]
				s.next[int(u)*n+c] = ch
				queue = append(queue, ch)
			} else {
				s.next[int(u)*n+c] = s.next[int(f)*n+c]
			}
		}
	}
	s.out = make([][]uint16, len(nodes))
	for i := range nodes {
		s.out[i] = nodes[i].out
	}
	if len(s.next) <= len(s.table) {
		s.premultiply()
		return s
	}
	// Mark the transitions into a state with output, so that the scan
	// reads out only there.
	for i, to := range s.next {
		if len(s.out[to]) > 0 {
			s.next[i] = to | outputFlag
		}
	}
	return s
}

// premultiply builds table from next and out, and drops them.
func (s *scanner) premultiply() {
	n := len(s.out)
	renum := make([]uint16, n)
	k := uint16(0)
	for pass := range 2 {
		for st := range n {
			if (len(s.out[st]) > 0) == (pass == 1) {
				if pass == 1 && s.outBase == 0 {
					s.outBase = k * uint16(s.classes)
				}
				renum[st] = k
				k++
			}
		}
	}
	if s.outBase == 0 {
		s.outBase = uint16(n * s.classes) // no state has output (no keywords)
	}
	if len(s.out[0]) > 0 {
		panic("redact: an empty keyword")
	}
	s.table = new([1 << 16]uint16)
	s.outPre = make([][]uint16, n)
	for st := range n {
		base := int(renum[st]) * s.classes
		for c := range s.classes {
			s.table[base+c] = renum[s.next[st*s.classes+c]] * uint16(s.classes)
		}
		s.outPre[renum[st]] = s.out[st]
	}
	s.next, s.out = nil, nil
}

func union(a, b []uint16) []uint16 {
	for _, x := range b {
		found := false
		for _, y := range a {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			a = append(a, x)
		}
	}
	return a
}

// ruleSet is a set of rule indices.
type ruleSet [(maxRules + 63) / 64]uint64

func (r *ruleSet) add(i uint16)   { r[i/64] |= 1 << (i % 64) }
func (r *ruleSet) has(i int) bool { return r[i/64]&(1<<(i%64)) != 0 }
func (r *ruleSet) empty() bool {
	for _, w := range r {
		if w != 0 {
			return false
		}
	}
	return true
}

// scan calls visit(k, end) for every occurrence of keyword k ending at
// byte end, ASCII case folded. It returns whether the text has one of the
// three characters above, read as their letter: an occurrence then may
// not be len(keyword) bytes long.
func (s *scanner) scan(text string, visit func(k uint16, end int)) (folded bool) {
	return scanText(s, text, visit)
}

func scanText[T string | []byte](s *scanner, text T, visit func(k uint16, end int)) (folded bool) {
	return scanKnown(s, text, s.splits(len(text)) && isASCII(text), visit)
}

// splits reports whether scanKnown splits an ASCII text of n bytes in two:
// each half is then at least depth bytes past its overlap.
func (s *scanner) splits(n int) bool { return n >= 2*s.depth+8 }

// scanKnown is scanText on a text that ascii says is all ASCII (false:
// not known to be).
func scanKnown[T string | []byte](s *scanner, text T, ascii bool, visit func(k uint16, end int)) (folded bool) {
	if s.table == nil {
		return scanSlice(s, text, visit)
	}
	if !ascii || !s.splits(len(text)) {
		return scanFrom(s, text, 0, 0, visit)
	}
	// Two scans at once, so that each byte's dependent load overlaps the
	// other scan's: the first reads [0, m), the second [m-depth, end) and
	// reports only what ends after m. Its state is right from m on, since
	// a state stands for at most depth bytes before it (an ASCII text: a
	// byte is a letter).
	t, class, outBase := s.table, &s.class, s.outBase
	m := (len(text) + s.depth) / 2
	ta, tb := text[:m], text[m-s.depth:]
	tb = tb[:len(ta)] // the same length: no bounds checks below
	var v, w uint16   // the two states, times classes (the root is 0)
	for k := 0; k < len(ta); k++ {
		// The inner loop calls nothing, so that the states stay in
		// registers: a spilled state puts a store and a load on each
		// byte's dependent chain.
		for ; k < len(ta); k++ {
			v = t[v+uint16(class[ta[k]])]
			w = t[w+uint16(class[tb[k]])]
			if max(v, w) >= outBase {
				break
			}
		}
		if k == len(ta) {
			break
		}
		if v >= outBase {
			report(s, text, s.outPre[int(v)/s.classes], k+1, visit)
		}
		if w >= outBase && k >= s.depth { // the second reports from m on
			report(s, text, s.outPre[int(w)/s.classes], m-s.depth+k+1, visit)
		}
	}
	return scanFrom(s, text, m-s.depth+len(ta), w, visit)
}

// scanFrom scans text[i:] from state v (times classes). It returns whether
// it read a folded character.
func scanFrom[T string | []byte](s *scanner, text T, i int, v uint16, visit func(k uint16, end int)) (folded bool) {
	t, class, outBase := s.table, &s.class, s.outBase
	for ; i < len(text); i++ {
		// ASCII bytes to no output without a call, as in scanKnown.
		for ; i < len(text); i++ {
			b := text[i]
			if b >= 0x80 {
				break
			}
			if v = t[v+uint16(class[b])]; v >= outBase {
				break
			}
		}
		if i == len(text) {
			break
		}
		if b := text[i]; b >= 0x80 {
			var f bool
			b, i, f = foldByte(text, i)
			folded = folded || f
			v = t[v+uint16(class[b])]
		}
		if v >= outBase {
			report(s, text, s.outPre[int(v)/s.classes], i+1, visit)
		}
	}
	return folded
}

func isASCII[T string | []byte](text T) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			return false
		}
	}
	return true
}

// scanSlice is scanText over a table too long for an array.
func scanSlice[T string | []byte](s *scanner, text T, visit func(k uint16, end int)) (folded bool) {
	var state uint16
	n := s.classes
	for i := 0; i < len(text); i++ {
		b := text[i]
		if b >= 0x80 {
			var f bool
			b, i, f = foldByte(text, i)
			folded = folded || f
		}
		state = s.next[int(state)*n+int(s.class[b])]
		if state&outputFlag != 0 {
			state &^= outputFlag
			report(s, text, s.out[state], i+1, visit)
		}
	}
	return folded
}

// report visits the keywords ks whose first keywordCut bytes (or all)
// end at end, where the rest of each follows.
func report[T string | []byte](s *scanner, text T, ks []uint16, end int, visit func(k uint16, end int)) {
	for _, k := range ks {
		if rest := s.rest[k]; rest != "" {
			e, ok := hasFolded(text, end, rest)
			if !ok {
				continue
			}
			visit(k, e)
			continue
		}
		visit(k, end)
	}
}

// hasFolded reports whether text[i:], read as the scan reads it (ASCII
// case folded, the three letters as theirs), begins with rest, and where
// that ends.
func hasFolded[T string | []byte](text T, i int, rest string) (int, bool) {
	for j := 0; j < len(rest); j++ {
		if i >= len(text) {
			return 0, false
		}
		b := text[i]
		if b >= 0x80 {
			b, i, _ = foldByte(text, i)
		} else if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != rest[j] {
			return 0, false
		}
		i++
	}
	return i, true
}

// foldByte reads the non-ASCII byte text[i]: one of the three characters
// read as their letter gives the letter, where it ends, and true (a
// folded occurrence); any other byte is itself (it is in no keyword).
func foldByte[T string | []byte](text T, i int) (byte, int, bool) {
	b := text[i]
	switch {
	case b == kelvin0 && i+2 < len(text) && text[i+1] == kelvin1 && text[i+2] == kelvin2:
		return 'k', i + 2, true
	case b == dotI0 && i+1 < len(text) && text[i+1] == dotI1:
		return 'i', i + 1, true
	case b == longS0 && i+1 < len(text) && text[i+1] == longS1:
		return 's', i + 1, true
	}
	return b, i, false
}
