package redact

// Hand-written matchers (docs/redaction.md, "Speed"): the JWT's and the
// Slack bot token's regexes, the two heavy ones the split matcher does
// not cover, run in Go's regexp backtracker on every candidate line. Each
// matcher below is written for one regex, byte for byte as the book runs
// it (after boundary.go), and gives FindAllSubmatchIndex's answer, groups
// included: TestHandMatchersEqualRegex and FuzzHandMatchers hold them
// equal. A rule whose regex is not that text (upstream changed it) runs
// its regex.

// handMatcher is a hand matcher: FindAllStringSubmatchIndex(text, -1)
// of its regex, and FindAllSubmatchIndex for the view's bytes.
type handMatcher struct {
	str   func(string) [][]int
	bytes func([]byte) [][]int
}

// handMatchers maps each regex, as the book runs it, to its matcher.
var handMatchers = map[string]*handMatcher{
	jwtRegex:      {findAllJWT[string], findAllJWT[[]byte]},
	slackBotRegex: {findAllSlackBot[string], findAllSlackBot[[]byte]},
}

const (
	jwtRegex      = `\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;|:&,()\[\]{}<>]|\\[nr]|$)`
	slackBotRegex = `xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`
)

// The byte classes the two regexes use.
const (
	hcAlnum = 1 << iota // [a-zA-Z0-9]
	hcJWT               // [a-zA-Z0-9\/\\_-]
	hcEnd               // [\x60'"\s;|:&,()\[\]{}<>] (\s: \t \n \f \r space)
	hcWord              // \b's word characters: [0-9A-Za-z_]
	hcSlack             // [a-zA-Z0-9-]
	hcDigit             // [0-9]
)

var handClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' {
			t[c] |= hcAlnum | hcJWT | hcWord | hcSlack
		}
		if '0' <= b && b <= '9' {
			t[c] |= hcDigit
		}
	}
	for _, c := range "/\\_-" {
		t[c] |= hcJWT
	}
	t['_'] |= hcWord
	t['-'] |= hcSlack
	for _, c := range "`'\"\t\n\f\r ;|:&,()[]{}<>" {
		t[c] |= hcEnd
	}
	return t
}()

// handRun returns the end of the run of class cls starting at i.
func handRun[T string | []byte](s T, i int, cls uint8) int {
	for i < len(s) && handClass[s[i]]&cls != 0 {
		i++
	}
	return i
}

// findAllJWT is FindAllSubmatchIndex(s, -1) of jwtRegex.
func findAllJWT[T string | []byte](s T) [][]int {
	var out [][]int
	for p := 0; p+1 < len(s); p++ {
		if s[p] != 'e' || s[p+1] != 'y' || p > 0 && handClass[s[p-1]]&hcWord != 0 {
			continue
		}
		if m := jwtAt(s, p); m != nil {
			out = append(out, m)
			p = m[1] - 1 // the next search starts at the match's end
		}
	}
	return out
}

// jwtAt is the match of jwtRegex starting at p (s[p:] starts with "ey"
// at a word boundary), or nil. Each run before a literal is maximal, the
// literal not being of its class; only the optional third part and its
// ending need the regex's order of preference.
func jwtAt[T string | []byte](s T, p int) []int {
	i := handRun(s, p+2, hcAlnum)
	if i-(p+2) < 17 || i >= len(s) || s[i] != '.' {
		return nil
	}
	i++
	if i+1 >= len(s) || s[i] != 'e' || s[i+1] != 'y' {
		return nil
	}
	j := handRun(s, i+2, hcJWT)
	if j-(i+2) < 17 || j >= len(s) || s[j] != '.' {
		return nil
	}
	q := j + 1 // the optional third part starts here
	// endAt is the length of the ending at k: a class byte, \n or \r
	// written out, or the text's end; -1 if none.
	endAt := func(k int) int {
		switch {
		case k == len(s):
			return 0
		case handClass[s[k]]&hcEnd != 0:
			return 1
		case s[k] == '\\' && k+1 < len(s) && (s[k+1] == 'n' || s[k+1] == 'r'):
			return 2
		}
		return -1
	}
	if l := handRun(s, q, hcJWT); l-q >= 10 {
		// The part taken, longest first: all of the run and its padding
		// (as much as there is, up to two: a shorter one would leave an
		// = before the ending)...
		e := l
		for e < len(s) && e-l < 2 && s[e] == '=' {
			e++
		}
		if n := endAt(e); n >= 0 {
			return []int{p, e + n, p, e}
		}
		// ...then shorter, ending at a \n or \r written out within the
		// run (no other ending is of the run's class).
		for k := l - 1; k >= q+10; k-- {
			if s[k] == '\\' && k+1 < l && (s[k+1] == 'n' || s[k+1] == 'r') {
				return []int{p, k + 2, p, k}
			}
		}
	}
	// The part left out.
	if n := endAt(q); n >= 0 {
		return []int{p, q + n, p, q}
	}
	return nil
}

// findAllSlackBot is FindAllSubmatchIndex(s, -1) of slackBotRegex: the
// first digits are the whole run (a shorter one is followed by a digit,
// not -), and the trailing class takes the second's digits past ten.
func findAllSlackBot[T string | []byte](s T) [][]int {
	var out [][]int
	for p := 0; p+5 <= len(s); p++ {
		if s[p] != 'x' || s[p+1] != 'o' || s[p+2] != 'x' || s[p+3] != 'b' || s[p+4] != '-' {
			continue
		}
		d := handRun(s, p+5, hcDigit)
		if n := d - (p + 5); n < 10 || n > 13 || d >= len(s) || s[d] != '-' {
			continue
		}
		if handRun(s, d+1, hcDigit)-(d+1) < 10 {
			continue
		}
		e := handRun(s, d+1, hcSlack)
		out = append(out, []int{p, e})
		p = e - 1
	}
	return out
}
