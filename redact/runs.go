package redact

import (
	"math"
	"regexp/syntax"
)

// The run prefilter: nearly every rule's match holds a long run of the
// characters secrets are made of (ghp_ and 36 of [0-9A-Za-z]; generic's
// ten or more of [\w.=-]), and a diagnostic's prose has none: its words
// are short. So each rule carries the least run every match of it holds,
// computed from its regex (and its entropy threshold: a secret of entropy
// above e has more than 2^e distinct characters); a text whose longest run
// is shorter cannot match it, and a keyword occurrence whose anchor window
// holds no such run cannot start a match there. Like the anchors, the
// runs only skip work, never change a result.

// runClass is the run class: letters, digits and _ . = + / ~ -, and the
// bytes of U+212A and U+017F, which (?i) lets stand for k and s, so that a
// run counted in bytes is never shorter than the run of characters the
// analysis counts (it counts those two as their letters). It is 1 for a
// byte of the class and 0 for any other, so that eight can be tested at
// once.
// The bits of runClass: every run character has runChar; a base64
// character (either alphabet) also runB64, a hex digit also runHex, so
// that the run scan tells the decoding (decode.go) which runs are one
// base64 or hex span.
const (
	runChar = 1 << iota
	runB64
	runHex
)

var runClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = runChar|runB64, runChar|runB64
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = runChar | runB64 | runHex
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = runChar|runB64|runHex, runChar|runB64|runHex
	}
	for _, c := range "_.=+/~-" {
		t[c] = runChar
	}
	for _, c := range "_+/-" {
		t[c] |= runB64
	}
	for _, c := range []byte{kelvin0, kelvin1, kelvin2, longS0, longS1} {
		t[c] = 1
	}
	return t
}()

// inRunClass reports whether every rune in [lo, hi] is in the run class.
func inRunClass(lo, hi rune) bool {
	for r := lo; r <= hi; r++ {
		if r == 0x17F || r == 0x212A {
			continue
		}
		if r >= 0x80 || runClass[r] == 0 {
			return false
		}
	}
	return true
}

// runInfo bounds, over every match of a regex, its runs of run-class
// characters: full means a match is all run class (n its least length);
// otherwise pre, suf and best are the least run a match starts with, ends
// with, and holds anywhere.
type runInfo struct {
	full           bool
	n              int
	pre, suf, best int
}

func fullRun(n int) runInfo { return runInfo{full: true, n: n, pre: n, suf: n, best: n} }

var noRun = runInfo{}

func (a runInfo) then(b runInfo) runInfo {
	switch {
	case a.full && b.full:
		return fullRun(a.n + b.n)
	case a.full:
		return runInfo{pre: a.n + b.pre, suf: b.suf, best: max(b.best, a.n+b.pre)}
	case b.full:
		return runInfo{pre: a.pre, suf: a.suf + b.n, best: max(a.best, a.suf+b.n)}
	}
	return runInfo{pre: a.pre, suf: b.suf, best: max(a.best, b.best, a.suf+b.pre)}
}

func (a runInfo) or(b runInfo) runInfo {
	if a.full && b.full {
		return fullRun(min(a.n, b.n))
	}
	return runInfo{pre: min(a.pre, b.pre), suf: min(a.suf, b.suf), best: min(a.best, b.best)}
}

// optional is x? or x*: the empty match is possible.
func (a runInfo) optional() runInfo {
	if a.full {
		return fullRun(0)
	}
	return noRun
}

func (a runInfo) least() int {
	if a.full {
		return a.n
	}
	return a.best
}

// runAnalysis computes runInfo; secret, if not 0, is the capture group
// that is certainly the secret wherever it takes part, and distinct the
// least number of distinct characters the secret has.
type runAnalysis struct {
	secret   int
	distinct int
}

func (an runAnalysis) runs(re *syntax.Regexp) runInfo {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return fullRun(0)
	case syntax.OpLiteral:
		out := fullRun(0)
		for _, r := range re.Rune {
			c := noRun
			if inRunClass(r, r) && (re.Flags&syntax.FoldCase == 0 || foldsInRunClass(r)) {
				c = fullRun(1)
			}
			out = out.then(c)
		}
		return out
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return noRun
		}
		for i := 0; i < len(re.Rune); i += 2 {
			if !inRunClass(re.Rune[i], re.Rune[i+1]) {
				return noRun
			}
		}
		return fullRun(1)
	case syntax.OpCapture:
		x := an.runs(re.Sub[0])
		if re.Cap == an.secret && x.full && x.n > 0 {
			x = fullRun(max(x.n, an.distinct))
		}
		return x
	case syntax.OpStar, syntax.OpQuest:
		return an.runs(re.Sub[0]).optional()
	case syntax.OpPlus:
		x := an.runs(re.Sub[0])
		if x.full {
			return x
		}
		return runInfo{pre: x.pre, suf: x.suf, best: max(x.best, x.suf+x.pre)}
	case syntax.OpRepeat:
		x := an.runs(re.Sub[0])
		if re.Min == 0 {
			return x.optional()
		}
		if x.full {
			return fullRun(x.n * re.Min)
		}
		out := x
		if re.Min > 1 {
			out = out.then(x) // more copies add nothing: x is not full
		}
		if re.Max != re.Min {
			out = out.then(noRun) // the optional copies may be absent
		}
		return out
	case syntax.OpConcat:
		out := fullRun(0)
		for _, s := range re.Sub {
			out = out.then(an.runs(s))
		}
		return out
	case syntax.OpAlternate:
		out := an.runs(re.Sub[0])
		for _, s := range re.Sub[1:] {
			out = out.or(an.runs(s))
		}
		return out
	}
	return noRun // any character, no match
}

func foldsInRunClass(r rune) bool {
	for f := unicodeSimpleFold(r); f != r; f = unicodeSimpleFold(f) {
		if !inRunClass(f, f) {
			return false
		}
	}
	return true
}

// leastRun is the least run of run-class characters every match of the
// rule's regex holds, for a rule with this secret group (0: the first
// non-empty) and entropy threshold.
func leastRun(re *syntax.Regexp, secretGroup int, entropy float64) int {
	an := runAnalysis{}
	if entropy > 0 {
		// Shannon entropy above e needs more than 2^e distinct characters;
		// the margin keeps a rounding in shannon from making this unsound.
		an.distinct = int(math.Ceil(math.Exp2(entropy) - 1e-6))
	}
	groups := re.MaxCap()
	switch {
	case secretGroup > 0:
		an.secret = secretGroup
	case groups == 1:
		an.secret = 1
	case groups == 0 && an.distinct > 0:
		x := an.runs(re)
		if x.full && x.n > 0 {
			return max(x.n, an.distinct) // the whole match is the secret
		}
		return x.least()
	}
	if an.secret == 0 {
		an.distinct = 0
	}
	return an.runs(re).least()
}
