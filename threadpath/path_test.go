package threadpath

import (
	"errors"
	"strings"
	"testing"
)

// Validate takes the paths of the rule and refuses every other with an
// error that wraps ErrInvalid and names what was broken.
func TestValidate(t *testing.T) {
	for _, p := range []string{"/root", "/root/x", "/k", "/a-b_c/0/" + strings.Repeat("z", 64), strings.Repeat("/a", 32)} {
		if err := Validate(p); err != nil {
			t.Errorf("Validate(%q) = %v", p, err)
		}
	}
	for p, why := range map[string]string{
		"": "empty", "root": "must start with /", "/": "segment 1: empty", "/root/": "segment 2: empty",
		"/a//b": "segment 2: empty", "/-a": "must start with a letter", "/a.b": "only [A-Za-z0-9_-]",
		"/" + strings.Repeat("z", 65): "65 characters", strings.Repeat("/a", 33): "33 segments",
	} {
		err := Validate(p)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), why) {
			t.Errorf("Validate(%q) = %v, want ErrInvalid saying %q", p, err, why)
		}
	}
	if err := Validate(strings.Repeat("x", 200)); len(err.Error()) > 140 {
		t.Errorf("a long path's error is %d bytes", len(err.Error()))
	}
}

func TestLexicalParentAndRecipient(t *testing.T) {
	for p, want := range map[string]string{"/root/x/y": "/root/x", "/root/x": Root, Root: "", "/k": "", "x": ""} {
		if got := LexicalParent(p); got != want {
			t.Errorf("LexicalParent(%q) = %q, want %q", p, got, want)
		}
	}
	if Recipient("/root", "/o") != "/root" || Recipient("", "/o") != "/o" {
		t.Error("Recipient: a parent wins, else the owner")
	}
}
