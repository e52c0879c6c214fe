package shellquote

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b-c_d.db": "/a/b-c_d.db", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$(rm)": "'$(rm)'", "\x1b[2J": "'\x1b[2J'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}
