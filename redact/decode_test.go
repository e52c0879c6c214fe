package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// Each of the seven formats, in each encoding: the encoded span becomes
// the marker of the secret it holds, the text around it stays.
func TestDecodedSecrets(t *testing.T) {
	encodings := []struct {
		name string
		enc  func(string) string
	}{
		{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
		{"base64 unpadded", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
		{"base64url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
		{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
		{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
		{"%XX", percentAll},
		{"\\uXXXX", func(s string) string { return escapeAll(s, `\u%04x`) }},
		{"\\xXX", func(s string) string { return escapeAll(s, `\x%02x`) }},
		{"base64 of %XX (depth 2)", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(percentAll(s))) }},
		{"base64 of base64 (depth 2)", func(s string) string {
			return base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s))))
		}},
		{"hex of \\u (depth 2)", func(s string) string { return hex.EncodeToString([]byte(escapeAll(s, `\u%04x`))) }},
	}
	for _, f := range sevenFormats(newRand(41)) {
		for _, e := range encodings {
			encoded := e.enc(f.secret)
			in := "upload failed: " + encoded + " (retry 2)"
			want := "upload failed: " + Marker(f.rule) + " (retry 2)"
			out, counts := Text(in)
			if out != want || counts[f.rule] != 1 {
				t.Errorf("%s, %s: Text(%.80q…)\n = %.120q %v\nwant %q", f.name, e.name, in, out, counts, want)
			}
		}
	}
}

// Depth 2 is the limit: a secret encoded three times passes. Spans that
// decode to no text, or to text without a secret, stay.
func TestDecodingLimits(t *testing.T) {
	tok := "ghp_" + pick(newRand(42), alnum, 36)
	thrice := tok
	for range 3 {
		thrice = base64.StdEncoding.EncodeToString([]byte(thrice))
	}
	for _, in := range []string{
		"deep: " + thrice,
		"prose: " + base64.StdEncoding.EncodeToString([]byte("nothing to see here, move along")),
		"sha: " + hex.EncodeToString([]byte(pick(newRand(43), alnum, 32)))[:40],
		"a name: ReadUint16LengthPrefixed and 100% done, path C:\\x\\users",
		"url: https://example.com/search?q=a%20b%20c",
	} {
		if out, counts := Text(in); out != in || counts != nil {
			t.Errorf("Text(%q) = %q %v, want it unchanged", in, out, counts)
		}
	}
}

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func escapeAll(s, format string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, format, c)
	}
	return b.String()
}

// mayDecodeBySpans is mayDecode as the spans encodedSpans gives read it:
// mayDecode must answer the same without the callback, with the escapes
// gated by the run scan.
func mayDecodeBySpans(text string, rs *textRuns) bool {
	found := false
	encodedSpans(text, rs, func(start, end int, e encoding) bool {
		switch e {
		case encBase64, encHex:
			found = spanStartsText(text[start:end], e)
		default:
			found = end-start >= minEscapeSpan
		}
		return !found
	})
	return found
}

// The run scan notes every escape mayDecode needs (its spans lie in
// tokens the scan reads), and mayDecode answers as the spans do, on texts
// of escapes, base64, hex and the run characters that split them.
func TestRunScanSeesEscapes(t *testing.T) {
	if k := book().runK; k > minEscapeSpan {
		t.Fatalf("runK %d: the run scan skips tokens of %d bytes, where an escape span may lie", k, minEscapeSpan)
	}
	pieces := []string{"%", "%6", "%67", "%zz", "\\", "\\u0067", "\\x41", "\\u00", "Z2hw", "aGVs", "bG8g", "d29y", "/", "+", "-", "_",
		".", "=", "==", "~", "0123456789abcdef", "DEADBEEF", "é", "\u212a", "\u017f", " ", "\t", "\"", "'", "x", "ghp_", "AKIA"}
	rng := newRand(71)
	seen := [2]int{}
	for range 20000 {
		var b strings.Builder
		for n := rng.IntN(24); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		var rs textRuns
		candidatesRuns(book(), text, &rs)
		want := mayDecodeBySpans(text, &rs)
		if got := mayDecode(text, &rs); got != want {
			t.Fatalf("mayDecode(%q) = %v, the spans say %v", text, got, want)
		}
		if got := mayDecode([]byte(text), &rs); got != want {
			t.Fatalf("mayDecode([]byte(%q)) = %v, the spans say %v", text, got, want)
		}
		if want {
			seen[1]++
		} else {
			seen[0]++
		}
	}
	if seen[0] < 1000 || seen[1] < 1000 {
		t.Fatalf("texts that may decode / not: %v: the generator tests too little", seen)
	}
}
