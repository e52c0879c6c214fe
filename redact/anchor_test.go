package redact

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// plainBook is the book with every anchor off: each rule runs wherever a
// keyword occurs, as upstream runs it.
func plainBook() *ruleBook {
	b := *book()
	b.rules = append([]rule(nil), b.rules...)
	for i := range b.rules {
		b.rules[i].anchor = nil
	}
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
	for range 3 {
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
		for range 3 {
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
