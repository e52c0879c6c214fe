package redact

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/diag"
)

// Marker returns what a match of the rule id becomes: "[REDACTED:id]".
func Marker(id string) string { return "[REDACTED:" + id + "]" }

// hit is one match to redact: text[start:end] becomes the rule's marker.
type hit struct {
	start, end int
	rule       int
}

// Text returns text with every secret replaced by its marker, and the
// count of matches by rule. The rules and every decision are in the
// package documentation. Text does not sanitize or cut: Clean, Message and
// Source do both around it. A text with no secret comes back as itself,
// with nil counts, without allocating.
func Text(text string) (string, diag.Redacted) {
	return book().redact(text)
}

// Clear reports whether no rule can match text: then Text(string(text))
// returns it as it is, with nil counts. It does not allocate, so that a
// caller holding bytes (the sanitize --redact filter) converts only a text
// that may hold a secret.
func Clear(text []byte) bool {
	var rs textRuns
	c := candidatesRuns(book(), text, &rs)
	return c.empty() && !mayDecode(text, &rs) && (rs.ascii || !mayFold(text))
}

// redact replaces matches until none is left: a match dropped for
// overlapping a longer one may leave a match of its own beside that one's
// marker. Each pass replaces text that is not a marker (no rule matches a
// marker, and no match is a marker alone), so the passes end; nearly
// always after one pass, or two when something was found.
func (b *ruleBook) redact(text string) (string, diag.Redacted) {
	out, counts := b.pass(text)
	for c := counts; c != nil; {
		out, c = b.pass(out)
		counts = counts.Add(c)
	}
	return out, counts
}

func (b *ruleBook) pass(text string) (string, diag.Redacted) {
	hits := b.findHits(text, maxDecodeDepth)
	if len(hits) == 0 {
		return text, nil
	}
	hits = b.resolve(hits)
	var out strings.Builder
	out.Grow(len(text))
	counts := make(diag.Redacted, len(hits))
	at := 0
	for _, h := range hits {
		out.WriteString(text[at:h.start])
		id := b.rules[h.rule].id
		out.WriteString(Marker(id))
		counts[id]++
		at = h.end
	}
	out.WriteString(text[at:])
	return out.String(), counts
}

// findHits returns every match in text (overlaps not yet resolved), and,
// to depth, every encoded span whose decoded text holds one (decode.go),
// and the matches of its folded view (fold.go).
func (b *ruleBook) findHits(text string, depth int) []hit {
	// The regexes read the text as it is (upstream's matches), then, if it
	// has trailing punctuation, with that read as spaces (see the package
	// doc): the same length, so offsets hold for both. Overlaps between the
	// two are resolved like any others.
	var rs textRuns
	cands := candidatesRuns(b, text, &rs)
	var hits []hit
	if depth > 0 {
		hits = b.decodedHits(text, &rs, depth)
	}
	if !rs.ascii {
		hits = append(hits, b.foldedHits(text, depth)...)
	}
	if cands.empty() {
		return hits
	}
	view := punctuationAsSpace(text)
	for i := range b.rules {
		if !cands.has(i) {
			continue
		}
		r := &b.rules[i]
		for _, loc := range r.findAll(text) {
			if h, ok := b.accept(r, i, text, loc); ok {
				hits = append(hits, h)
			}
		}
		if view == nil || r.nameCheck {
			continue // the view's , . ) ] } > end only prefixed tokens (boundary.go)
		}
		for _, loc := range r.findAllBytes(*view) {
			if h, ok := b.accept(r, i, text, loc); ok {
				hits = append(hits, h)
			}
		}
	}
	if view != nil {
		views.Put(view)
	}
	return hits
}

// accept decides about one match of rule r (index i) as upstream does
// (entropy, then the global allowlist, then the rule's), and returns the
// span to replace: the match less the delimiters it consumed at either end.
func (b *ruleBook) accept(r *rule, i int, text string, loc []int) (hit, bool) {
	start, end := loc[0], loc[1]
	// Upstream trims newlines off the match; a sanitized text has none,
	// but Text takes any text.
	for start < end && text[start] == '\n' {
		start++
	}
	for end > start && text[end-1] == '\n' {
		end--
	}
	if start == end {
		return hit{}, false
	}
	match := text[start:end]
	sStart, sEnd := start, end // the secret
	groups := len(loc)/2 - 1
	if groups > 0 {
		g := r.secretGroup
		if g == 0 {
			for k := 1; k <= groups; k++ {
				if loc[2*k] >= 0 && loc[2*k+1] > loc[2*k] {
					g = k
					break
				}
			}
		}
		if g > 0 {
			if loc[2*g] < 0 {
				return hit{}, false // upstream skips a finding whose group did not take part
			}
			sStart, sEnd = max(loc[2*g], start), min(loc[2*g+1], end)
			if sStart > sEnd {
				sStart, sEnd = start, end
			}
		}
	}
	secret := text[sStart:sEnd]
	if r.entropy != 0 && shannon(secret) <= r.entropy {
		return hit{}, false
	}
	if r.nameCheck && !upstreamEnds(text, sEnd) && codeLike(secret) {
		return hit{}, false // a name in code, found only by the wider end (boundary.go)
	}
	if b.global.allows(secret, match, text) {
		return hit{}, false
	}
	allow := r.allowlists()
	for k := range allow {
		if allow[k].allows(secret, match, text) {
			return hit{}, false
		}
	}
	if r.spec.NotSecret != nil && r.spec.NotSecret(secret, match) {
		return hit{}, false
	}
	// Keep the delimiters the regex consumed at either end, never entering
	// the secret (a rule without groups: the whole match is the secret, so
	// only delimiters at its ends go).
	lo, hi := sStart, sEnd
	if lo == start && hi == end {
		lo, hi = end, start // no group: trim freely, but keep one byte
	}
	for start < lo && start < end-1 && leadingDelimiter(text[start]) {
		start++
	}
	for end > hi && end > start+1 {
		if trailingDelimiter(text[end-1]) {
			end--
		} else if end-2 >= max(hi, start+1) && text[end-2] == '\\' && (text[end-1] == 'n' || text[end-1] == 'r') {
			end -= 2
		} else {
			break
		}
	}
	return hit{start: start, end: end, rule: i}, true
}

// leadingDelimiter is a character a rule's regex consumes before a secret
// to see where it starts: space, quotes, brackets and the separators
// upstream's rules name.
func leadingDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '\'', '"', '`', ';', ',', '(', ')', '[', ']', '{', '}', '<', '>', '=', ':', '\\':
		return true
	}
	return false
}

// trailingDelimiter is a character a rule's regex consumes after a secret
// to see where it ends. '=' is not one: base64 ends with it.
func trailingDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '\'', '"', '`', ';', ',', '.', '(', ')', '[', ']', '{', '}', '<', '>', '\\', '|', ':', '&':
		return true
	}
	return false
}

// resolve keeps, of overlapping hits, the longest, then the more specific
// rule (not generic), then the earlier rule in the table; it returns the
// kept hits in text order.
func (b *ruleBook) resolve(hits []hit) []hit {
	if len(hits) == 1 {
		return hits
	}
	slices.SortStableFunc(hits, func(x, y hit) int {
		if d := (y.end - y.start) - (x.end - x.start); d != 0 {
			return d
		}
		gx, gy := b.rules[x.rule].generic, b.rules[y.rule].generic
		if gx != gy {
			if gx {
				return 1
			}
			return -1
		}
		if x.rule != y.rule {
			return x.rule - y.rule
		}
		return x.start - y.start
	})
	kept := hits[:0:0]
	for _, h := range hits {
		overlaps := false
		for _, k := range kept {
			if h.start < k.end && k.start < h.end {
				overlaps = true
				break
			}
		}
		if !overlaps {
			kept = append(kept, h)
		}
	}
	slices.SortFunc(kept, func(x, y hit) int { return x.start - y.start })
	return kept
}

// views holds the buffers of punctuationAsSpace, so that a clean message
// costs no allocation.
var views = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledView bounds what the pool keeps (a service frame is 64 KiB).
const maxPooledView = 64 << 10

// punctuationAsSpace returns text with each run of , . ) ] } > that ends
// the text or stands before whitespace turned into spaces, so that a rule
// whose regex wants a space, quote or end after a secret still matches
// "…secret," (docs/redaction.md, "Decisions"); the caller puts it back in views. It returns nil
// when there is none: the regexes read text itself.
func punctuationAsSpace[T string | []byte](text T) *[]byte {
	var view *[]byte
	var buf []byte
	for i := 0; i < len(text); i++ {
		if !trailingPunct(text[i]) {
			continue
		}
		j := i
		for j < len(text) && trailingPunct(text[j]) {
			j++
		}
		if j == len(text) || isSpace(text[j]) {
			if view == nil {
				view = views.Get().(*[]byte)
				if cap(*view) > maxPooledView {
					*view = nil
				}
				buf = append((*view)[:0], text...)
				*view = buf
			}
			for k := i; k < j; k++ {
				buf[k] = ' '
			}
		}
		i = j
	}
	return view
}

func trailingPunct(c byte) bool {
	switch c {
	case ',', '.', ')', ']', '}', '>':
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// shannon is upstream's entropy: over the characters, divided by the
// length in bytes, as gitleaks computes it. The sum runs in a fixed order
// so that the same secret always gets the same value.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, c := range s {
		if c < utf8.RuneSelf {
			ascii[c]++
			continue
		}
		if other == nil {
			other = map[rune]int{}
		}
		other[c]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	for _, n := range ascii {
		if n > 0 {
			f := float64(n) * inv
			e -= f * math.Log2(f)
		}
	}
	keys := make([]rune, 0, len(other))
	for c := range other {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		f := float64(other[c]) * inv
		e -= f * math.Log2(f)
	}
	return e
}
