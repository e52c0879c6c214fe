package redact

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/sanitize"
)

// fuzzPieces are what the fuzzer glues texts from, besides raw bytes:
// keywords, prefixes, separators, punctuation and markers.
var fuzzPieces = []string{
	"ghp_", "AKIA", "sk_live_", "xoxb-", "eyJ", ".eyJ", "glpat-", "AIza", "npm_", "hf_",
	"https://hooks.slack.com/services/T", "postgres://u:", "@h", "Bearer ", "Authorization: Basic ",
	"-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "api_key=", "token: ", "password=\"",
	"secret", "key", ",", ".", ")", "]", "}", ">", " ", "\\n", "'", "\"", "=", ":",
	"[REDACTED:github-pat]", "[REDACTED:", "true", "null", "ſ", "K", "İ", "\u200d", "é", "\x1b[31m",
	"0123456789", "ABCDEFGHIJKLMNOP", "abcdefghijklmnop", "Q2xM9zR4pW7vK3nT", "+/=", "-_",
	// Encoded and folded pieces (decode.go, fold.go).
	"Z2hwX", "QUtJQ", "%67%68%70%5F", "%3D", "\\u0067\\u0068\\u0070", "\\x5f", "\\ud83d\\ude00", "6768705f",
	"ｇｈｐ＿", "ＡＫＩＡ", "а", "о", "Α", "\u0301", "\u0323", "Ś",
}

func fuzzText(data []byte) string {
	var b strings.Builder
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c < 0x80 {
			b.WriteString(fuzzPieces[int(c)%len(fuzzPieces)])
			continue
		}
		// High bytes repeat the previous byte's piece as random-looking
		// text: runs of letters and digits.
		b.WriteByte(alnum[int(c)%len(alnum)])
	}
	return b.String()
}

func units(s string) int { return len(utf16.Encode([]rune(s))) }

// FuzzMessage: redaction is idempotent, never lengthens a message past the
// limits, leaves no rule's match in its output, keeps the sanitizer's
// output rules, and the anchors never change a result.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{"", "ghp_", "token=abc123def456ghi789", "\x00\x01\x02", "AKIAQYLPMN5HHHFPZAM2,", "x\xffy"} {
		f.Add([]byte(s), false)
	}
	plain := plainBook()
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		if len(data) > 1024 {
			data = data[:1024] // longer costs time, not coverage: pieces are long
		}
		in := string(data)
		if !raw {
			in = fuzzText(data)
		}
		for _, c := range []struct {
			clean func(string) (string, diag.Redacted)
			limit int
		}{{Message, sanitize.MessageLimit}, {Source, sanitize.SourceLimit}} {
			out, _ := c.clean(in)
			if n := units(out); n > c.limit {
				t.Fatalf("%d units, limit %d: %q", n, c.limit, out)
			}
			if again, counts := c.clean(out); again != out || counts != nil {
				t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q %v", in, out, again, counts)
			}
			if s := sanitize.Clean(out, c.limit); s != out {
				t.Fatalf("output not sanitized: %q -> %q", out, s)
			}
			if _, counts := plain.redact(out); counts != nil {
				t.Fatalf("a rule still matches the output %q: %v", out, counts)
			}
		}
		// The anchors only skip work, on the sanitized text.
		clean := sanitize.Clean(in, 0)
		got, _ := book().redact(clean)
		want, _ := plain.redact(clean)
		if got != want {
			t.Fatalf("anchors changed %q:\n got %q\nwant %q", clean, got, want)
		}
		// Clear says yes only where Text changes nothing (decoding and
		// folding included).
		if Clear([]byte(clean)) && got != clean {
			t.Fatalf("Clear(%q) is true, but Text gives %q", clean, got)
		}
	})
}

// FuzzDecode: the decoders and the folded view take any text without
// panicking; every span lies within the text, what decodes is text, and
// the folded view's offsets are in order and within the text.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "Z2hwX2FiYw==", "%67%68%zz%", "\\u0067\\ud83d\\ude00\\x5", "6768705f6768705f6768705f6768705f", "ｇｈｐ＿a\u0301b", "gһp_аbc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var rs textRuns
		candidatesRuns(book(), text, &rs)
		if got, want := mayDecode(text, &rs), mayDecodeBySpans(text, &rs); got != want {
			t.Fatalf("mayDecode(%q) = %v, the spans say %v", text, got, want)
		}
		mayFold(text)
		encodedSpans(text, &rs, func(start, end int, e encoding) bool {
			if start < 0 || end > len(text) || start >= end {
				t.Fatalf("span [%d,%d) of %d bytes", start, end, len(text))
			}
			if d, ok := decodeSpan(text[start:end], e); ok && !isText([]byte(d)) {
				t.Fatalf("decoded %q is not text", d)
			}
			return true
		})
		if v, ok := fold(text); ok {
			if len(v.start) != len(v.text) || len(v.end) != len(v.text) {
				t.Fatalf("offsets for %d of %d bytes", len(v.start), len(v.text))
			}
			for i := range v.start {
				if v.start[i] < 0 || v.end[i] > int32(len(text)) || v.start[i] >= v.end[i] || i > 0 && v.start[i] < v.end[i-1] {
					t.Fatalf("byte %d of the view from [%d,%d) of %q", i, v.start[i], v.end[i], text)
				}
			}
		}
	})
}
