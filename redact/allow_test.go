package redact

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// joinedAllows is an allowlist as upstream evaluates it, the reference
// for allow.allows: the regexes joined into one (joined), the stopwords searched in
// the lowercased secret one by one.
func joinedAllows(a allowSpec, joined *regexp.Regexp, secret, match, line string) bool {
	t := secret
	switch a.Target {
	case targetMatch:
		t = match
	case targetLine:
		t = line
	}
	reOK := false
	if len(a.Regexes) > 0 && t != "" {
		reOK = joined.MatchString(t)
	}
	stopOK := false
	lower := strings.ToLower(secret)
	for _, w := range a.Stopwords {
		if secret != "" && strings.Contains(lower, w) {
			stopOK = true
			break
		}
	}
	if a.And {
		return (len(a.Regexes) == 0 || reOK) && (len(a.Stopwords) == 0 || stopOK)
	}
	return reOK || stopOK
}

// allowTargets are strings near what each allowlist allows: its stopwords
// and the words of its regexes, alone, inside secret-like text, in other
// cases, with the non-ASCII letters that fold to ASCII ones, and cut.
func allowTargets(a allowSpec) []string {
	rng := newRand(7)
	var words []string
	words = append(words, a.Stopwords...)
	word := regexp.MustCompile(`[A-Za-z0-9_.:/{}$%@-]{2,}`)
	for _, re := range a.Regexes {
		words = append(words, word.FindAllString(re, -1)...)
	}
	words = append(words, "true", "NULL", "aaaaaa", "${HOME}", "$1", "{{ .Values.key }}",
		"${{ secrets.TOKEN }}", "%PATH%", "%s", "{0}", "@FOO@", "/Users/dev/x", "/tmp/x y",
		"import { a, b } from 'x'", "--mount=type=secret,id=x",
		"AKIAIOSFODNN7EXAMPLE", "admin:changeme", "s."+pick(rng, upper+lower, 24))
	meta := strings.NewReplacer("$", "", "^", "", `\`, "", "(", "", ")", "", "?", "", "*", "", "+", "", "|", "")
	for _, w := range words {
		if m := meta.Replace(w); m != w && m != "" {
			words = append(words, m)
		}
	}
	kelvin := strings.NewReplacer("k", "\u212a", "K", "\u212a")
	longS := strings.NewReplacer("s", "\u017f")
	dotI := strings.NewReplacer("i", "\u0130")
	var out []string
	for _, w := range words {
		body := pick(rng, alnum, 8+rng.IntN(24))
		out = append(out, w, strings.ToUpper(w), body+w, w+body, body[:4]+w+body[4:],
			"api_key="+body+w, kelvin.Replace(w), longS.Replace(w), dotI.Replace(w),
			strings.Map(unicode.ToUpper, w[:len(w)/2])+w[len(w)/2:])
		if len(w) > 3 {
			out = append(out, w[1:], w[:len(w)-1])
		}
	}
	for range 500 {
		out = append(out, pick(rng, alnum+"_.-=/+", 1+rng.IntN(60)))
	}
	return out
}

// The compiled allowlists answer as the joined regexes and the plain
// stopword search do, for every allowlist of the table, on every target.
func TestAllowAsJoined(t *testing.T) {
	lists := []allowSpec{gitleaksGlobal}
	for _, s := range allSpecs() {
		lists = append(lists, s.Allow...)
	}
	for li, spec := range lists {
		a := compileAllow(spec)
		joined := regexp.MustCompile("(?:" + strings.Join(spec.Regexes, ")|(?:") + ")")
		targets := allowTargets(spec)
		allowed := 0
		for _, s := range targets {
			for _, c := range [][3]string{{s, s, s}, {s, "x=" + s, "line: x=" + s + " end"}} {
				want := joinedAllows(spec, joined, c[0], c[1], c[2])
				if got := a.allows(c[0], c[1], c[2]); got != want {
					t.Fatalf("allowlist %d: allows(%q, %q, %q) = %v, joined %v", li, c[0], c[1], c[2], got, want)
				}
				if want {
					allowed++
				}
			}
		}
		// The targets must reach both answers, or the test shows nothing.
		if allowed == 0 || allowed == 2*len(targets) {
			t.Errorf("allowlist %d: %d of %d targets allowed", li, allowed, 2*len(targets))
		}
	}
}

// Splitting keeps the alternatives Go's parser leaves, each with the
// literals every match holds.
func TestAlternatives(t *testing.T) {
	sets := func(a alternative) string {
		var s []string
		for _, set := range a.need {
			s = append(s, strings.Join(set, "|"))
		}
		return strings.Join(s, " ")
	}
	got := alternatives(`(?i)(?:rapid|capital|[a-z0-9-]*?api[a-z0-9-]*?:jar:|key[_.-]?(?:alias|board))`)
	if len(got) != 4 {
		t.Fatalf("alternatives: %v", got)
	}
	for i, want := range []string{"rapid", "capital", "api :jar:", "key alias|board"} {
		if sets(got[i]) != want {
			t.Errorf("alternative %v: literals %q, want %q", got[i].tree, sets(got[i]), want)
		}
	}
	for expr, want := range map[string]string{
		`^\$(?:\d+|{\d+})$`: "$",
		`(?i)(?:api|credentials|token)[_.-]?(?:endpoint|ur[il])`: "api|credentials|token endpoint|ur",
		`(?:[A-Z_]+=\n[A-Z_]+=|[_a-z]+=\n[_a-z]+=)(?:\n|$)`:      "=\n|=\n",
		`(?i)p(?:rimary|ub(?:lic)?)key`:                          "p rimary|ub key",
		`^[a-zA-Z_.-]+$`:                                         "",
	} {
		if a := alternatives(expr); len(a) != 1 || sets(a[0]) != want {
			t.Errorf("%s: %q, want literals %q", expr, sets(a[0]), want)
		}
	}
}

// One finding's allowlists, the generic rule's (the costly ones):
//
//	go test -run '^$' -bench Allowlist -benchmem ./redact
func BenchmarkAllowlist(b *testing.B) {
	bk := book()
	var r *rule
	for i := range bk.rules {
		if bk.rules[i].id == "generic-api-key" {
			r = &bk.rules[i]
		}
	}
	line := "loaded config api_key=BCDFGHJKLMNPQRSTVWXZbcdfghjk9x from env"
	m := r.regexp().FindStringSubmatchIndex(line)
	match, secret := line[m[0]:m[1]], line[m[2]:m[3]]
	b.ReportAllocs()
	for b.Loop() {
		if bk.global.allows(secret, match, line) {
			b.Fatal("allowed")
		}
		for _, a := range r.allowlists() {
			if a.allows(secret, match, line) {
				b.Fatal("allowed")
			}
		}
	}
}
