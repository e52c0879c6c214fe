package redact

import "testing"

// The book compiles a rule's regex, allowlists and anchor prefilter only
// when the rule first runs (an allowlist's alternatives, when first tried); every one of them must compile, so that no
// text ever meets one that does not.
func TestEveryRuleCompiles(t *testing.T) {
	for i := range book().rules {
		r := &book().rules[i]
		if r.regexp() == nil {
			t.Errorf("%s: no regex", r.id)
		}
		if len(r.allowlists()) != len(r.spec.Allow) {
			t.Errorf("%s: %d allowlists of %d", r.id, len(r.allowlists()), len(r.spec.Allow))
		}
		for _, a := range r.allowlists() {
			for _, alt := range a.alts {
				alt.get() // panics if it does not compile
			}
		}
		if r.anchor != nil && r.anchor.prefilter() == nil {
			t.Errorf("%s: the anchor has no prefilter", r.id)
		}
	}
}
