package redact

import (
	"regexp"
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
	re          *regexp.Regexp
	secretGroup int
	entropy     float64
	allow       []allow
	generic     bool // upstream's "generic" rules: less specific in a tie
	always      bool // no keywords
	anchor      *anchor
}

type allow struct {
	target    target
	and       bool
	re        *regexp.Regexp // the regexes joined; nil if none
	stopwords []string
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
	always   []int      // rules without keywords
}

var book = sync.OnceValue(func() *ruleBook { return compile(allSpecs(), gitleaksGlobal) })

// allSpecs is upstream's table, then diagrelay's.
func allSpecs() []ruleSpec {
	specs := make([]ruleSpec, 0, len(gitleaksRules)+len(ownRules))
	specs = append(specs, gitleaksRules...)
	return append(specs, ownRules...)
}

func compile(specs []ruleSpec, global allowSpec) *ruleBook {
	if len(specs) > maxRules {
		panic("redact: more than maxRules rules")
	}
	b := &ruleBook{global: compileAllow(global)}
	var keywords []string
	var rulesOf [][]uint16
	index := map[string]int{}
	for i, s := range specs {
		r := rule{
			id:          s.ID,
			re:          regexp.MustCompile(s.Regex),
			secretGroup: s.SecretGroup,
			entropy:     s.Entropy,
			generic:     strings.Contains(strings.ToLower(s.ID), "generic"),
			always:      len(s.Keywords) == 0,
			anchor:      newAnchor(s.Regex, s.Keywords),
		}
		for _, a := range s.Allow {
			r.allow = append(r.allow, compileAllow(a))
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
	return b
}

func compileAllow(a allowSpec) allow {
	out := allow{target: a.Target, and: a.And, stopwords: a.Stopwords}
	if len(a.Regexes) > 0 {
		out.re = regexp.MustCompile("(?:" + strings.Join(a.Regexes, ")|(?:") + ")")
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
	reOK := a.re != nil && t != "" && a.re.MatchString(t)
	stopOK := false
	if len(a.stopwords) > 0 && secret != "" {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				stopOK = true
				break
			}
		}
	}
	if a.and {
		return (a.re == nil || reOK) && (len(a.stopwords) == 0 || stopOK)
	}
	return reOK || stopOK
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
