package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"
)

// What diagrelay's own rules check beyond a regex (own_rules.go): on the
// Go standard library's source these were most of their false alarms
// (docs/redaction.md, "Precision on code").

// placeholderPassword reports whether a URL's password is an example's
// placeholder ("http://user:password@host", "pa%2Fssword", "My%20Pass"):
// decoded, its letters lowercased are one of the words examples use, or
// "password" with one letter added, dropped or changed.
func placeholderPassword(secret, _ string) bool {
	if d, err := url.PathUnescape(secret); err == nil {
		secret = d
	}
	var b strings.Builder
	for _, c := range strings.ToLower(secret) {
		if 'a' <= c && c <= 'z' {
			b.WriteRune(c)
		}
	}
	w := b.String()
	switch strings.TrimPrefix(w, "my") {
	case "password", "passwd", "pass", "pwd", "pw", "secret", "foo", "bar", "baz":
		return true
	}
	return oneEditFrom(w, "password")
}

// oneEditFrom reports whether a is b with one letter added, dropped or
// changed.
func oneEditFrom(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 {
		return false
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return i < len(a) && a[i+1:] == b[i+1:]
	}
	return a[i+1:] == b[i:]
}

// notBasicCredentials reports whether an Authorization header's Basic
// credentials are not credentials: they do not decode from base64 to
// text holding "user:password", or they are RFC 7617's example (Aladdin,
// open sesame). Other schemes are left to the regex.
func notBasicCredentials(secret, match string) bool {
	if !strings.Contains(strings.ToLower(match), "basic") {
		return false
	}
	d, err := base64.StdEncoding.DecodeString(secret)
	if err != nil {
		d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(secret, "="))
	}
	if err != nil || !utf8.Valid(d) || !strings.Contains(string(d), ":") {
		return true
	}
	for _, c := range string(d) {
		if c < ' ' || c == 0x7f {
			return true
		}
	}
	return strings.EqualFold(strings.ReplaceAll(string(d), " ", ""), "aladdin:opensesame")
}
