package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ruleSpec is one rule as the tables state it; see docs/redaction.md for
// what each field means (upstream's meaning).
type ruleSpec struct {
	ID string
	// Regex is matched against the sanitized text (Go's regexp).
	Regex string
	// SecretGroup is the capture group that is the secret for Entropy and
	// the allowlists; 0 means the first non-empty group, or the whole match
	// if the regex has none.
	SecretGroup int
	// Entropy, if not 0, is the Shannon entropy the secret must exceed.
	Entropy float64
	// Keywords, lowercase: the rule runs only on a text in which one occurs
	// (case folded). None means it always runs.
	Keywords []string
	// Allow lists what is not a secret after all.
	Allow []allowSpec
	// NotSecret, if set (diagrelay's own rules only), reports that a
	// finding with this secret and match is not a secret after all.
	NotSecret func(secret, match string) bool
}

// What an allowlist's regexes are matched against.
type target uint8

const (
	targetSecret target = iota // the secret (group)
	targetMatch                // the whole match
	targetLine                 // the whole text (a sanitized diagnostic is one line)
)

// allowSpec is an allowlist: a finding is allowed (not redacted) if one of
// Regexes matches its target or its secret, lowercased, contains one of
// Stopwords; with And, every kind present must hold.
type allowSpec struct {
	Target    target
	And       bool
	Regexes   []string
	Stopwords []string
}

// leftOut is an upstream rule the table does not carry, and why.
type leftOut struct{ ID, Why string }

// maxRules bounds the rule tables (ruleSet is a fixed bit set).
const maxRules = 512

type rule struct {
	id          string
	spec        *ruleSpec
	compiled    *compiledRule // built on first use: most rules never run
	secretGroup int
	entropy     float64
	generic     bool // upstream's "generic" rules: less specific in a tie
	always      bool // no keywords
	nameCheck   bool // no fixed prefix, its end widened: no view, and codeLike applies (boundary.go)
	anchor      *anchor
	least       int       // the least run a match holds (runs.go)
	need        [][]uint8 // literals (ruleBook.lits) of which every match holds one of each group (need.go)
}

// compiledRule is what a rule needs only once it runs: its regex and
// allowlists, compiled. Building every rule's at once cost a program that
// redacts one text some 20 ms of CPU (and the anchors' DFAs, built lazily
// too, about 25 ms more: most of the book's 76 ms), for regexes that text
// never runs.
type compiledRule struct {
	once  sync.Once
	re    *regexp.Regexp
	split *splitRegex  // the split matcher, if the regex has one (split.go)
	hand  *handMatcher // the hand-written matcher, if the regex has one (hand.go)
	allow []allow
}

// regexp is the rule's regex, compiled on first use.
func (r *rule) regexp() *regexp.Regexp {
	r.build()
	return r.compiled.re
}

// findAll is r.regexp().FindAllStringSubmatchIndex(text, -1), by the
// split or the hand-written matcher where the regex has one.
func (r *rule) findAll(text string) [][]int {
	r.build()
	if s := r.compiled.split; s != nil {
		return s.findAll(text)
	}
	if h := r.compiled.hand; h != nil {
		return h.str(text)
	}
	return r.compiled.re.FindAllStringSubmatchIndex(text, -1)
}

// findAllBytes is r.regexp().FindAllSubmatchIndex(text, -1), by the
// hand-written matcher where the regex has one.
func (r *rule) findAllBytes(text []byte) [][]int {
	r.build()
	if h := r.compiled.hand; h != nil {
		return h.bytes(text)
	}
	return r.compiled.re.FindAllSubmatchIndex(text, -1)
}

// allowlists are the rule's allowlists, compiled on first use.
func (r *rule) allowlists() []allow {
	r.build()
	return r.compiled.allow
}

func (r *rule) build() {
	c := r.compiled
	c.once.Do(func() {
		c.re = regexp.MustCompile(r.spec.Regex)
		c.split = splitOf(r.spec)
		c.hand = handMatchers[r.spec.Regex]
		for _, a := range r.spec.Allow {
			c.allow = append(c.allow, compileAllow(a))
		}
	})
}

// ruleBook is the compiled tables: built once, on first use, since
// compiling some 230 regexes costs over 100 ms of CPU that a program
// which never redacts should not pay at start.
type ruleBook struct {
	rules    []rule
	global   allow
	scan     *scanner
	keywords []string
	rulesOf  [][]uint16 // by keyword: the rules it triggers
	hitsOf   [][]kwRule // the same, with the keyword's offsets in each anchor
	always   []int      // rules without keywords
	least    []uint16   // by rule: rule.least, compact for the scan
	gate     []gateRule // the rules whose least run is under below, by least: what possible reads
	runK     int        // the run scan keeps runs of at least runK bytes
	lits     literals   // the rules' required literals
	below    int        // the least run of a rule without literals
}

var book = sync.OnceValue(func() *ruleBook { return compile(allSpecs(), gitleaksGlobal, analysisTable[:]) })

// allSpecs is upstream's table, then diagrelay's, with their regexes
// widened at the boundaries (boundary.go).
func allSpecs() []ruleSpec {
	specs := make([]ruleSpec, 0, len(gitleaksRules)+len(ownRules))
	specs = append(specs, gitleaksRules...)
	specs = append(specs, ownRules...)
	for i := range specs {
		specs[i] = widen(specs[i])
	}
	return specs
}

// compile builds the book of specs, with table their analysis (nil:
// derived from their regexes).
func compile(specs []ruleSpec, global allowSpec, table []ruleAnalysis) *ruleBook {
	if len(specs) > maxRules {
		panic("redact: more than maxRules rules")
	}
	b := &ruleBook{global: compileAllow(global)}
	var keywords []string
	var rulesOf [][]uint16
	index := map[string]int{}
	found := analyses(specs, table)
	for i, s := range specs {
		an := &found[i]
		r := rule{
			id:          s.ID,
			spec:        &specs[i],
			compiled:    &compiledRule{},
			secretGroup: s.SecretGroup,
			entropy:     s.Entropy,
			generic:     strings.Contains(strings.ToLower(s.ID), "generic"),
			always:      len(s.Keywords) == 0,
			nameCheck:   strings.Contains(s.Regex, narrowEnd),
			anchor:      an.Anchor.anchor(),
			least:       an.Least,
		}
		b.rules = append(b.rules, r)
		if r.always {
			b.always = append(b.always, i)
		}
		for _, k := range s.Keywords {
			j, ok := index[k]
			if !ok {
				j = len(keywords)
				index[k] = j
				keywords = append(keywords, k)
				rulesOf = append(rulesOf, nil)
			}
			rulesOf[j] = append(rulesOf[j], uint16(i))
		}
	}
	b.scan = newScanner(keywords)
	b.keywords, b.rulesOf = keywords, rulesOf
	b.hitsOf = make([][]kwRule, len(keywords))
	for k, rs := range rulesOf {
		for _, ri := range rs {
			h := kwRule{rule: ri}
			if a := b.rules[ri].anchor; a != nil {
				for _, o := range a.offsets[keywords[k]] {
					h.offsets = append(h.offsets, int32(o))
				}
			}
			b.hitsOf[k] = append(b.hitsOf[k], h)
		}
	}
	// possible asks a rule whose least run is below every rule's without
	// literals for them; candidates asks any rule its keyword or anchor
	// would run.
	below := 1 << 30
	for i := range b.rules {
		if len(found[i].Need) == 0 {
			below = min(below, b.rules[i].least)
		}
	}
	for i := range b.rules {
		for _, g := range found[i].Need {
			var ix []uint8
			for _, l := range g {
				ix = append(ix, b.lits.add(newLiteral(l)))
			}
			b.rules[i].need = append(b.rules[i].need, ix)
		}
	}
	b.below = below
	b.runK = runScanStride(b.rules)
	for i := range b.rules {
		r := &b.rules[i]
		b.least = append(b.least, uint16(min(r.least, 1<<16-1)))
		if r.least < below {
			b.gate = append(b.gate, gateRule{r.least, r.need})
		}
	}
	slices.SortStableFunc(b.gate, func(x, y gateRule) int { return x.least - y.least })
	return b
}

// gateRule is a rule as possible reads it: apart from the rules, so that
// the few it reads share cache lines.
type gateRule struct {
	least int
	need  [][]uint8
}

// runScanStride is the least run the run scan looks for: no more than the
// least run of a rule without a required literal (below it, possible
// decides by the literals) and of an anchor that has one of at least 10
// (so that its window check has the runs it needs; a window check for less
// is not done); at least 8, so that a token's bytes are read only for a
// token that long.
func runScanStride(rules []rule) int {
	k := 1 << 30
	for i := range rules {
		if rules[i].need == nil {
			k = min(k, rules[i].least)
		}
		if a := rules[i].anchor; a != nil && a.least >= 10 {
			k = min(k, a.least)
		}
	}
	return max(k, 8)
}

// Rules returns the ids of every rule, upstream's then diagrelay's, in
// table order.
func Rules() []string {
	specs := allSpecs()
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.ID
	}
	return ids
}

// UpstreamVersion is the gitleaks release whose rules the table carries.
const UpstreamVersion = gitleaksVersion
