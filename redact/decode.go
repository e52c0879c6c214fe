package redact

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoding (docs/redaction.md, "Decoding"). A secret pasted base64-, hex-,
// percent- or \u-encoded passes every rule; gitleaks decodes by default.
// The book decodes each span that may encode text, runs the rules on what
// it decodes to (and decodes that once more: depth 2), and when the
// decoded text holds a finding, the whole encoded span becomes the marker
// of its first finding's rule. A span that does not decode to valid UTF-8
// text (no control characters but tab, newline and carriage return) is not
// searched: nearly every long run of letters and digits (hashes, names)
// fails within its first bytes.

const (
	maxDecodeDepth = 2
	minBase64      = 16 // characters of a base64 run, padding aside
	minHex         = 32 // digits of a hex run
)

type encoding uint8

const (
	encBase64  encoding = iota // standard or URL alphabet, padded or not
	encHex                     // hex digits
	encPercent                 // %XX escapes among other characters
	encEscape                  // \uXXXX or \xXX escapes among other characters
)

// b64val is each byte's value in base64, standard (+ /) or URL (- _)
// alphabet, or 0xff.
var b64val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

func hexVal(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xff
}

// encodedSpans calls f with each span of text that may encode text: a
// maximal run of base64 characters (at least minBase64, padding after
// it), all of them hex digits if at least minHex, and each maximal run of
// bytes other than whitespace and quotes that holds a %XX escape or a
// \uXXXX or \xXX escape. rs is the run scan's (candidatesRuns): a base64
// run lies within one of its runs, so only those are read. f returns
// false to stop.
func encodedSpans[T string | []byte](text T, rs *textRuns, f func(start, end int, e encoding) bool) {
	if rs.longest >= minBase64 {
		if rs.over {
			if !base64Spans(text, 0, len(text), f) {
				return
			}
		} else {
			for k, r := range rs.at[:rs.n] {
				start, end := int(r[0]), int(r[1])
				switch cls := rs.class[k]; {
				case end-start < minBase64:
				case cls&runHex != 0 && end-start >= minHex: // the run is one hex span
					if !f(start, end, encHex) {
						return
					}
				case cls&runB64 != 0: // the run is one base64 span
					if !f(start, end, encBase64) {
						return
					}
				default:
					if !base64Spans(text, start, end, f) {
						return
					}
				}
			}
		}
	}
	escapeSpans(text, f)
}

// escapeSpans calls f with each span around a %XX or \u/\x escape, in
// order of the escape byte ('%' first), until f returns false; it reports
// whether f never did.
func escapeSpans[T string | []byte](text T, f func(start, end int, e encoding) bool) bool {
	for _, e := range [...]struct {
		c   byte
		enc encoding
	}{{'%', encPercent}, {'\\', encEscape}} {
		for at := 0; at < len(text); {
			k := indexByte(text[at:], e.c)
			if k < 0 {
				break
			}
			k += at
			if !escapeAt(text, k, e.enc) {
				at = k + 1
				continue
			}
			start, end := k, k
			for start > 0 && !spanStop(text[start-1]) {
				start--
			}
			for end < len(text) && !spanStop(text[end]) {
				end++
			}
			if !f(start, end, e.enc) {
				return false
			}
			at = end
		}
	}
	return true
}

// b64class is each byte's class: isB64 for a base64 character, isHex
// also for a hex digit.
var b64class = func() (t [256]byte) {
	for c := range t {
		if b64val[c] != 0xff {
			t[c] = isB64
		}
		if hexVal(byte(c)) != 0xff {
			t[c] |= isHex
		}
	}
	return t
}()

const (
	isB64 = 1 << iota
	isHex
)

// base64Spans calls f with each base64 (or hex) span of text[from:to];
// it returns false if f did.
func base64Spans[T string | []byte](text T, from, to int, f func(start, end int, e encoding) bool) bool {
	for i := from; i < to; {
		if b64class[text[i]] == 0 {
			i++
			continue
		}
		start, cls := i, byte(isB64|isHex)
		// Eight bytes a step while all are base64 characters (hashes and
		// tokens are long runs).
		for i+8 <= to {
			w := text[i : i+8]
			c := b64class[w[0]] & b64class[w[1]] & b64class[w[2]] & b64class[w[3]] &
				b64class[w[4]] & b64class[w[5]] & b64class[w[6]] & b64class[w[7]]
			if c == 0 {
				break
			}
			cls &= c
			i += 8
		}
		for i < to {
			c := b64class[text[i]]
			if c == 0 {
				break
			}
			cls &= c
			i++
		}
		n := i - start
		for i < to && i-start-n < 2 && text[i] == '=' {
			i++
		}
		switch {
		case cls&isHex != 0 && n >= minHex:
			if !f(start, start+n, encHex) {
				return false
			}
		case n >= minBase64:
			if !f(start, i, encBase64) {
				return false
			}
		}
	}
	return true
}

// spanStop ends a span of escapes: whitespace and quotes.
func spanStop(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '`' || c == 0x7f
}

// escapeAt reports whether an escape of e starts at text[k].
func escapeAt[T string | []byte](text T, k int, e encoding) bool {
	hexAt := func(i, n int) bool {
		if i+n > len(text) {
			return false
		}
		for j := i; j < i+n; j++ {
			if hexVal(text[j]) == 0xff {
				return false
			}
		}
		return true
	}
	if e == encPercent {
		return text[k] == '%' && hexAt(k+1, 2)
	}
	if text[k] != '\\' || k+1 >= len(text) {
		return false
	}
	switch text[k+1] {
	case 'u':
		return hexAt(k+2, 4)
	case 'x':
		return hexAt(k+2, 2)
	}
	return false
}

// decodeSpan decodes s as e, and reports whether the result is text.
func decodeSpan(s string, e encoding) (string, bool) {
	var out []byte
	switch e {
	case encBase64:
		s = strings.TrimRight(s, "=")
		if len(s)%4 == 1 {
			s = s[:len(s)-1]
		}
		out = make([]byte, 0, len(s)*3/4)
		var acc uint32
		bits := 0
		for i := 0; i < len(s); i++ {
			acc = acc<<6 | uint32(b64val[s[i]])
			if bits += 6; bits >= 8 {
				bits -= 8
				out = append(out, byte(acc>>bits))
				// Reject early: most runs are no text past a few bytes.
				if c := out[len(out)-1]; c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
					return "", false
				}
			}
		}
	case encHex:
		if len(s)%2 == 1 {
			s = s[:len(s)-1]
		}
		out = make([]byte, 0, len(s)/2)
		for i := 0; i+1 < len(s); i += 2 {
			out = append(out, hexVal(s[i])<<4|hexVal(s[i+1]))
		}
	case encPercent:
		out = make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			if escapeAt(s, i, encPercent) {
				out = append(out, hexVal(s[i+1])<<4|hexVal(s[i+2]))
				i += 2
				continue
			}
			out = append(out, s[i])
		}
	case encEscape:
		out = make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			if !escapeAt(s, i, encEscape) {
				out = append(out, s[i])
				continue
			}
			if s[i+1] == 'x' {
				out = append(out, hexVal(s[i+2])<<4|hexVal(s[i+3]))
				i += 3
				continue
			}
			r := rune(hexVal(s[i+2]))<<12 | rune(hexVal(s[i+3]))<<8 | rune(hexVal(s[i+4]))<<4 | rune(hexVal(s[i+5]))
			i += 5
			if utf16.IsSurrogate(r) && i+2 < len(s) && s[i+2] == 'u' && escapeAt(s, i+1, encEscape) {
				lo := rune(hexVal(s[i+3]))<<12 | rune(hexVal(s[i+4]))<<8 | rune(hexVal(s[i+5]))<<4 | rune(hexVal(s[i+6]))
				if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
					r = d
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		}
	}
	if !isText(out) {
		return "", false
	}
	return string(out), true
}

// isText reports whether b is valid UTF-8 without control characters
// other than tab, newline and carriage return.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

// decodedHits returns a hit for each encoded span of text whose decoded
// text holds a finding (looked for to depth).
func (b *ruleBook) decodedHits(text string, rs *textRuns, depth int) []hit {
	var hits []hit
	encodedSpans(text, rs, func(start, end int, e encoding) bool {
		d, ok := decodeSpan(text[start:end], e)
		if !ok || d == text[start:end] {
			return true
		}
		if inner := b.findHits(d, depth-1); len(inner) > 0 {
			inner = b.resolve(inner)
			hits = append(hits, hit{start: start, end: end, rule: inner[0].rule})
		}
		return true
	})
	return hits
}
