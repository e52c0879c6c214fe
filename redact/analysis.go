package redact

import (
	"regexp/syntax"
	"slices"
)

// A rule's analysis is what the book needs of its regex before the rule
// runs: its least run (runs.go), its required literals (need.go) and its
// anchor (anchor.go). Deriving it parses every regex, half of what
// building the book cost; so the tables' analysis is generated with them
// (analysis_table.go, by TestAnalysisTable) and a process parses a regex
// only when its rule first runs. Other specs (the tests' books) are
// analyzed as they are compiled.

// ruleAnalysis is one rule's analysis.
type ruleAnalysis struct {
	ID     string     // the rule's, to check the table against the specs
	Least  int        // rule.least
	Need   [][]string // rule.need, as literals: rarest group first
	Anchor *anchorSpec
}

// anchorSpec is an anchor as the table writes it.
type anchorSpec struct {
	Expr     string // anchor.cat, as syntax.Regexp.String writes it
	Max      int
	Least    int
	Offsets  []keywordAt // by keyword, in the rule's keyword order
	Boundary []int
}

// keywordAt are where one keyword can sit in an anchor's key part.
type keywordAt struct {
	Keyword string
	At      []int
}

// analyze derives the analysis of one spec from its regex.
func analyze(s ruleSpec) ruleAnalysis {
	parsed, err := syntax.Parse(s.Regex, syntax.Perl)
	if err != nil {
		panic("redact: rule " + s.ID + ": " + err.Error())
	}
	an := ruleAnalysis{ID: s.ID, Least: leastRun(parsed, s.SecretGroup, s.Entropy)}
	for _, g := range requiredGroups(parsed) {
		var ls []string
		for _, l := range g {
			ls = append(ls, l.s)
		}
		an.Need = append(an.Need, ls)
	}
	if a := newAnchor(parsed, s.Keywords); a != nil {
		spec := &anchorSpec{Expr: a.cat.String(), Max: a.max, Least: a.least, Boundary: a.boundary}
		for _, k := range s.Keywords {
			if at, ok := a.offsets[k]; ok && !slices.ContainsFunc(spec.Offsets, func(o keywordAt) bool { return o.Keyword == k }) {
				spec.Offsets = append(spec.Offsets, keywordAt{k, at})
			}
		}
		an.Anchor = spec
	}
	return an
}

// anchor makes the anchor the spec describes; its regex is parsed when
// its prefilter is first built.
func (s *anchorSpec) anchor() *anchor {
	if s == nil {
		return nil
	}
	a := &anchor{expr: s.Expr, max: s.Max, least: s.Least, boundary: s.Boundary, offsets: map[string][]int{}}
	for _, o := range s.Offsets {
		a.offsets[o.Keyword] = o.At
	}
	return a
}

// analyses returns the analysis of each spec: the generated table's for
// the package's own tables, derived from the regexes for any other.
func analyses(specs []ruleSpec, table []ruleAnalysis) []ruleAnalysis {
	if table != nil {
		if len(table) != len(specs) {
			panic("redact: the analysis table does not match the rules: go generate")
		}
		for i := range specs {
			if table[i].ID != specs[i].ID {
				panic("redact: the analysis table does not match rule " + specs[i].ID + ": go generate")
			}
		}
		return table
	}
	out := make([]ruleAnalysis, len(specs))
	for i, s := range specs {
		out[i] = analyze(s)
	}
	return out
}
