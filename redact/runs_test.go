package redact

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// longestRun is the reference for scanRuns: the longest run of run-class
// bytes, read byte by byte.
func longestRun(s string) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if runClass[s[i]] != 0 {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Every finding of every rule sits in a text whose longest run is at
// least the rule's least run, and holds the rule's required literals: the
// run prefilter never skips a rule that would have found something.
func TestRunPrefilterHolds(t *testing.T) {
	b := book()
	rng := newRand(42)
	draws := 20
	if raceEnabled {
		draws = 3
	}
	checked := 0
	for i, s := range allSpecs() {
		re, err := syntax.Parse(s.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		r := &b.rules[i]
		for range draws {
			var sb strings.Builder
			genMatch(rng, re.Simplify(), &sb)
			m := sb.String()
			for _, text := range []string{m, "x " + m + ", y", "k=" + m, "(" + m + ")"} {
				for _, loc := range r.regexp().FindAllStringSubmatchIndex(text, -1) {
					if _, ok := b.accept(r, i, text, loc); !ok {
						continue
					}
					checked++
					if n := longestRun(text); n < r.least {
						t.Fatalf("rule %s: finding in %q, longest run %d < least %d", s.ID, text, n, r.least)
					}
					var sc litScan
					if !holdsAll(&b.lits, text, r.need, &sc) {
						t.Fatalf("rule %s: finding in %q lacks a required literal %v", s.ID, text, r.need)
					}
				}
			}
		}
	}
	if checked < len(allSpecs()) {
		t.Fatalf("only %d findings checked", checked)
	}
	t.Logf("%d findings checked", checked)
}

// scanRuns finds exactly the runs of at least k bytes a byte-by-byte read
// finds, whatever the alignment.
func TestScanRunsExact(t *testing.T) {
	rng := newRand(43)
	const alphabet = "ab9_.=+/~- \t,:;@\"'\x00\x7f\xe2\x84\xaa\xc5\xbf\xc3\xa9"
	for range 3000 {
		n := rng.IntN(90)
		var sb strings.Builder
		for range n {
			if rng.IntN(3) == 0 {
				sb.WriteString(strings.Repeat("x", rng.IntN(14)))
			}
			sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		for _, k := range []int{8, 10, 12} {
			var rs textRuns
			scanRuns(text, k, &rs)
			var want [][2]int32
			start := 0
			for i := 0; i <= len(text); i++ {
				if i < len(text) && runClass[text[i]] != 0 {
					continue
				}
				if i-start >= k {
					want = append(want, [2]int32{int32(start), int32(i)})
				}
				start = i + 1
			}
			got := rs.at[:rs.n]
			if len(got) != len(want) {
				t.Fatalf("k %d, %q: runs %v, want %v", k, text, got, want)
			}
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("k %d, %q: runs %v, want %v", k, text, got, want)
				}
			}
			if rs.ascii != isASCII(text) {
				t.Fatalf("k %d, %q: ascii %v", k, text, rs.ascii)
			}
			if l := longestRun(text); rs.longest != max(l, k-1) && !(l < k && rs.longest == k-1) {
				t.Fatalf("k %d, %q: longest %d, want %d", k, text, rs.longest, l)
			}
		}
	}
}

// The prefilter does skip: the clean message needs no keyword scan, and a
// long word near a keyword needs no anchor.
func TestRunPrefilterSkips(t *testing.T) {
	b := book()
	var rs textRuns
	msg := cleanMessage()
	scanRuns(msg, b.runK, &rs)
	if possible(b, msg, rs.longest) {
		t.Errorf("the clean message (longest run %d) may match a rule", rs.longest)
	}
	for _, text := range []string{msg, "auth: using default credentials from the environment"} {
		if c := candidates(b, text); !c.empty() {
			t.Errorf("%q has candidates", text)
		}
	}
	if b.runK < 8 {
		t.Errorf("runK %d: scanRuns needs at least 8", b.runK)
	}
}
