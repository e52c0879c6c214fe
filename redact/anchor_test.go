package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"testing"
)

// plainBook is the book with every anchor and the run prefilter off: each
// rule runs wherever a keyword occurs, as upstream runs it.
func plainBook() *ruleBook {
	b := *book()
	b.rules = append([]rule(nil), b.rules...)
	b.least = make([]uint16, len(b.rules))
	for i := range b.rules {
		b.rules[i].anchor = nil
		b.rules[i].least = 0
		b.rules[i].need = nil
	}
	b.below = 0
	return &b
}

// sameAsPlain checks that the anchors only skip work.
func sameAsPlain(t *testing.T, plain *ruleBook, text string) {
	t.Helper()
	got, gc := book().redact(text)
	want, wc := plain.redact(text)
	if got != want || gc.Total() != wc.Total() {
		t.Errorf("anchors changed the result of %q:\n got %q %v\nwant %q %v", text, got, gc, want, wc)
	}
}

func TestAnchorsOnlySkipWork(t *testing.T) {
	plain := plainBook()
	rng := newRand(40)
	var texts []string
	draws := 3
	if raceEnabled {
		draws = 1
	}
	for range draws {
		for _, l := range likelyLeaks(rng) {
			texts = append(texts, l.text)
		}
	}
	texts = append(texts, notSecrets(rng)...)
	texts = append(texts, blns(t)...)
	// A generated match of every rule, with its neighbours cut and glued.
	for _, s := range allSpecs() {
		re, err := syntax.Parse(s.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for range draws {
			var b strings.Builder
			genMatch(rng, re.Simplify(), &b)
			m := b.String()
			kw := ""
			if len(s.Keywords) > 0 {
				kw = s.Keywords[0]
			}
			texts = append(texts, m, "x "+m+", y", kw+"="+m, m[:len(m)/2], m[len(m)/3:], strings.ToUpper(m), "("+m+")")
		}
	}
	n := 0
	for _, s := range texts {
		sameAsPlain(t, plain, s)
		n++
	}
	t.Logf("%d texts", n)
	// How many rules have an anchor.
	with := 0
	for _, r := range book().rules {
		if r.anchor != nil {
			with++
		}
	}
	t.Logf("%d of %d rules have an anchor", with, len(book().rules))
}

// The DFA prefilter matches wherever the anchor's regex does (it takes
// assertions to hold, so it may match more, never less).
func TestPrefilterCoversTheRegex(t *testing.T) {
	rng := newRand(41)
	var texts []string
	for _, l := range likelyLeaks(rng) {
		texts = append(texts, l.text)
	}
	texts = append(texts, notSecrets(rng)...)
	for _, s := range allSpecs() {
		re, _ := syntax.Parse(s.Regex, syntax.Perl)
		for range 5 {
			var b strings.Builder
			genMatch(rng, re.Simplify(), &b)
			texts = append(texts, b.String(), "x="+b.String()+", "+strings.ToLower(b.String()))
		}
	}
	b := book()
	checked, more := 0, 0
	for _, text := range texts {
		// Where candidates asks: at each keyword occurrence, each offset.
		b.scan.scan(text, func(k uint16, end int) {
			start := end - len(b.keywords[k])
			for _, ri := range b.rulesOf[k] {
				a := b.rules[ri].anchor
				if a == nil {
					continue
				}
				for _, o := range a.offsets[b.keywords[k]] {
					q := start - o
					if q < 0 {
						continue
					}
					stop := min(len(text), q+a.max+1)
					re, pre := anchorRegexp(a).MatchString(text[q:stop]), a.prefilter().matches(text, q, stop)
					if re && !pre {
						t.Fatalf("rule %s at %d of %q: the regex matches, the prefilter does not", b.rules[ri].id, q, text)
					}
					if re {
						checked++
					} else if pre {
						more++
					}
				}
			}
		})
	}
	t.Logf("%d matches covered; the prefilter passed %d more", checked, more)
}

var anchorRegexps sync.Map // *anchor -> *regexp.Regexp

// anchorRegexp is ^(?:a.expr), which every match of the rule matches at
// the keyword's part.
func anchorRegexp(a *anchor) *regexp.Regexp {
	if re, ok := anchorRegexps.Load(a); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`^(?:` + a.expr + `)`)
	anchorRegexps.Store(a, re)
	return re
}

// An anchor checks the word boundaries its regex asserts around the key
// part on the text: \bcurl\b does not run at every "libcurl", and still
// runs at "curl".
func TestAnchorBoundaries(t *testing.T) {
	b := book()
	ri := indexOf(t, "curl-auth-user")
	if a := b.rules[ri].anchor; a == nil || len(a.boundary) != 2 {
		t.Fatalf("curl-auth-user's anchor: %+v", a)
	}
	for text, want := range map[string]bool{
		"curl -u admin:Xq7pLm2vRt9z https://x":              true,
		"$ curl --user admin:Xq7pLm2vRt9z https://x":        true,
		"libcurl4 -updates -u admin:Xq7pLm2vRt9z https://x": false,
		"curly -u admin:Xq7pLm2vRt9z https://x":             false,
	} {
		c := candidates(b, text)
		if got := c.has(ri); got != want {
			t.Errorf("%q: curl-auth-user runs %v, want %v", text, got, want)
		}
		if want {
			mustRedact(t, text, "curl-auth-user", "Xq7pLm2vRt9z")
		}
	}
}
