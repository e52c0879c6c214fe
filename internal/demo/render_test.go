package demo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrap(t *testing.T) {
	for _, s := range []string{
		"", "word", "a b c", strings.Repeat("x", 50), "short " + strings.Repeat("é", 45) + " end",
		"two  spaces", "trailing ",
	} {
		for _, width := range []int{1, 7, 20} {
			lines := wrap(s, width)
			for _, l := range lines {
				if utf8.RuneCountInString(l) > width {
					t.Errorf("wrap(%q, %d): line %q too long", s, width, l)
				}
			}
			if j := strings.ReplaceAll(strings.Join(lines, ""), " ", ""); j != strings.ReplaceAll(s, " ", "") {
				t.Errorf("wrap(%q, %d) lost text: %q", s, width, lines)
			}
		}
	}
}

// A hard split never cuts a Go escape in two: each line ends and starts on
// an escape's boundary.
func TestWrapKeepsEscapesWhole(t *testing.T) {
	word := `"pa\u200bss\x1b\U000e0069\U000e0067\a\\\101ok"`
	for width := 10; width <= 30; width++ {
		lines := wrap(strings.Repeat(word, 3), width)
		for _, l := range lines {
			if utf8.RuneCountInString(l) > width {
				t.Errorf("width %d: line %q too long", width, l)
			}
			for i := 0; i < len(l); {
				size, _ := atom(l[i:])
				i += size
				if i > len(l) {
					t.Errorf("width %d: line %q ends inside an escape", width, l)
				}
			}
			if strings.HasSuffix(l, `\`) && !strings.HasSuffix(l, `\\`) {
				t.Errorf("width %d: line %q ends with a lone backslash", width, l)
			}
		}
		if strings.Join(lines, "") != strings.Repeat(word, 3) {
			t.Errorf("width %d lost text: %q", width, lines)
		}
	}
}

func TestDisplayCut(t *testing.T) {
	short := strings.Repeat("é", displayMax)
	if displayCut(short) != short {
		t.Error("a text within the limit was cut")
	}
	long := strings.Repeat("é", displayMax+1)
	got := displayCut(long)
	if !strings.HasPrefix(got, strings.Repeat("é", displayKeep)+" [... 81 more characters cut for display") {
		t.Errorf("displayCut: %q", got)
	}
}

// Wherever a long message is shown (event, notification, mailbox, status)
// the screen says the same count of cut characters: the message's.
func TestOneCountOfCutCharacters(t *testing.T) {
	tr, err := Run("rpc")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	Render(&out, tr)
	counts := map[string]int{}
	text := strings.Join(strings.Fields(out.String()), " ")
	for rest := text; ; {
		i := strings.Index(rest, "[... ")
		if i < 0 {
			break
		}
		rest = rest[i+5:]
		n, _, _ := strings.Cut(rest, " ")
		counts[n]++
	}
	if len(counts) != 1 || counts["840"] != 4 {
		t.Errorf("cut counts on the screen %v, want the huge message's 840, four times", counts)
	}
}
