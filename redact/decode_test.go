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
