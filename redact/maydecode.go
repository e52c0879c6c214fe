package redact

import "math/bits"

// Before decoding anything, Clear asks the cheap question of this file:
// does text hold a span that may decode to text at all? decode.go has the
// spans and the decoding itself.

// mayDecode reports whether text has a span that may decode to text
// (Clear's question: it does not allocate, and looks only at a span's
// first bytes). It reads what the run scan left in rs, the spans
// encodedSpans would give, without its callback: a base64 or hex span
// lies within one of the scan's runs, and an escape that matters (a span
// of at least minEscapeSpan bytes) within a token the scan read, which
// noted its % or \ (rs.escape).
func mayDecode[T string | []byte](text T, rs *textRuns) bool {
	if rs.longest >= minBase64 {
		if rs.over {
			found := false
			base64Spans(text, 0, len(text), func(start, end int, e encoding) bool {
				found = spanStartsText(text[start:end], e)
				return !found
			})
			if found {
				return true
			}
		} else {
			for k, r := range rs.at[:rs.n] {
				start, end := int(r[0]), int(r[1])
				switch cls := rs.class[k]; {
				case end-start < minBase64:
				case cls&runHex != 0 && end-start >= minHex:
					if hexStartsText(text[start:end]) {
						return true
					}
				case cls&runB64 != 0:
					if base64StartsText(text[start:end]) {
						return true
					}
				default:
					if mixedRunStartsText(text[start:end]) {
						return true
					}
				}
			}
		}
	}
	if !rs.escape {
		return false
	}
	return !escapeSpans(text, func(start, end int, _ encoding) bool {
		return end-start < minEscapeSpan
	})
}

// minEscapeSpan is the shortest span of escapes mayDecode takes: a
// secret's escapes are longer. It must be at least the run scan's k
// (TestRunScanSeesEscapes), so that such a span lies in a token the scan
// reads.
const minEscapeSpan = 12

// spanStartsText is mayDecode's test of a base64 or hex span.
func spanStartsText[T string | []byte](s T, e encoding) bool {
	if e == encHex {
		return hexStartsText(s)
	}
	return base64StartsText(s)
}

// mixedRunStartsText reports whether a run of the run scan that holds
// bytes outside base64 (. = ~, and the bytes of U+212A and U+017F) has a
// base64 or hex span (base64Spans's) that may start text. Padding is left
// out: base64StartsText stops there. It finds those bytes eight at a
// time (paths and module names are such runs, split every few bytes).
func mixedRunStartsText[T string | []byte](run T) bool {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	// eq is bit 7 of each byte of x equal to c's byte (exact: the sum
	// stays within each byte).
	eq := func(x, c uint64) uint64 {
		v := x ^ c
		return ^((v&lo7 + lo7) | v) & hi
	}
	start := 0 // of the current span
	i := 0
	for ; i+8 <= len(run); i += 8 {
		w := run[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		m := x&hi | eq(x, 0x2e2e2e2e2e2e2e2e) | eq(x, 0x3d3d3d3d3d3d3d3d) | eq(x, 0x7e7e7e7e7e7e7e7e)
		for ; m != 0; m &= m - 1 {
			j := i + bits.TrailingZeros64(m)>>3
			if j-start >= minBase64 && spanAt(run, start, j) {
				return true
			}
			start = j + 1
		}
	}
	for ; i < len(run); i++ {
		if b64class[run[i]] == 0 {
			if i-start >= minBase64 && spanAt(run, start, i) {
				return true
			}
			start = i + 1
		}
	}
	return spanAt(run, start, len(run))
}

// spanAt is mixedRunStartsText's test of the base64 characters
// run[start:end].
func spanAt[T string | []byte](run T, start, end int) bool {
	switch n := end - start; {
	case n < minBase64:
		return false
	case n >= minHex && allHex(run[start:end]):
		return hexStartsText(run[start:end])
	}
	return base64StartsText(run[start:end])
}

func allHex[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if b64class[s[i]]&isHex == 0 {
			return false
		}
	}
	return true
}

// base64StartsText reports whether the first bytes s decodes to (up to
// twelve) may start text. Most runs (paths, hashes, names) fail at their
// first byte or two.
func base64StartsText[T string | []byte](s T) bool {
	var st textStart
	var acc uint32
	bits, n := 0, 0
	for i := 0; i < len(s) && n < 12 && s[i] != '='; i++ {
		acc = acc<<6 | uint32(b64val[s[i]])
		if bits += 6; bits < 8 {
			continue
		}
		bits -= 8
		n++
		if !st.next(byte(acc >> bits)) {
			return false
		}
	}
	return true
}

// textStart tells, a byte at a time, whether bytes may start text: no
// control character but tab, newline and carriage return, and UTF-8's
// lead and continuation bytes where they can stand (looser than
// utf8.Valid: a maybe is safe, Clear only says no more often).
type textStart struct{ cont int }

func (st *textStart) next(c byte) bool {
	switch {
	case st.cont > 0:
		if c&0xc0 != 0x80 {
			return false
		}
		st.cont--
	case c < ' ':
		return c == '\t' || c == '\n' || c == '\r'
	case c < 0x7f:
	case 0xc2 <= c && c <= 0xdf:
		st.cont = 1
	case 0xe0 <= c && c <= 0xef:
		st.cont = 2
	case 0xf0 <= c && c <= 0xf4:
		st.cont = 3
	default:
		return false
	}
	return true
}

// hexStartsText reports whether the first bytes s decodes to (up to
// twelve) may start text.
func hexStartsText[T string | []byte](s T) bool {
	var st textStart
	for i := 0; i+1 < len(s) && i < 24; i += 2 {
		if !st.next(hexVal(s[i])<<4 | hexVal(s[i+1])) {
			return false
		}
	}
	return true
}
