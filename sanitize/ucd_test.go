package sanitize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode"
)

// The generated tables hold exactly what the committed Unicode data files
// say (go generate rewrites them from those files).
func TestUCDTablesMatchData(t *testing.T) {
	dir := filepath.Join("testdata", "ucd", ucdVersion)
	load := func(file, key string) []map[string]any {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string][]map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m[key]
	}
	hex := func(v any) rune {
		n, err := strconv.ParseUint(v.(string), 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return rune(n)
	}
	ranges := func(list []map[string]any, field string, vals ...string) map[rune]bool {
		s := map[rune]bool{}
		for _, e := range list {
			ok := false
			for _, v := range vals {
				ok = ok || e[field] == v
			}
			if !ok {
				continue
			}
			rg := e["range"].([]any)
			lo, hi := hex(rg[0]), hex(rg[len(rg)-1])
			for r := lo; r <= hi; r++ {
				s[r] = true
			}
		}
		return s
	}
	emoji := load("emoji-data.json", "emoji-data")
	jt := load("DerivedJoiningType.json", "DerivedJoiningType")
	gcb := load("GraphemeBreakProperty.json", "GraphemeBreakProperty")
	textVS, emojiVS := map[rune]bool{}, map[rune]bool{}
	for _, file := range [][2]string{{"emoji-variation-sequences.json", "emoji-variation-sequences"}, {"StandardizedVariants.json", "StandardizedVariants"}} {
		for _, e := range load(file[0], file[1]) {
			seq := e["variationSequence"].([]any)
			switch hex(seq[1]) {
			case 0xFE0E:
				textVS[hex(seq[0])] = true
			case 0xFE0F:
				emojiVS[hex(seq[0])] = true
			}
		}
	}
	for _, c := range []struct {
		name string
		tab  *unicode.RangeTable
		want map[rune]bool
	}{
		{"extPict", extPict, ranges(emoji, "property", "Extended_Pictographic")},
		{"emojiModifier", emojiModifier, ranges(emoji, "property", "Emoji_Modifier")},
		{"joinsLeft", joinsLeft, ranges(jt, "type", "L", "D")},
		{"joinsRight", joinsRight, ranges(jt, "type", "R", "D")},
		{"joinTransparent", joinTransparent, ranges(jt, "type", "T")},
		{"textVariation", textVariation, textVS},
		{"emojiVariation", emojiVariation, emojiVS},
		{"gcbExtend", gcbExtend, ranges(gcb, "property", "Extend", "SpacingMark")},
		{"gcbPrepend", gcbPrepend, ranges(gcb, "property", "Prepend")},
		{"gcbL", gcbL, ranges(gcb, "property", "L")},
		{"gcbVT", gcbVT, ranges(gcb, "property", "V", "T")},
	} {
		if len(c.want) == 0 {
			t.Fatalf("%s: nothing in the data", c.name)
		}
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.Is(c.tab, r) != c.want[r] {
				t.Fatalf("%s: %U is %v in the table, %v in the data", c.name, r, unicode.Is(c.tab, r), c.want[r])
			}
		}
	}
	// Spot checks against what everyone knows.
	if !unicode.Is(extPict, 0x1F600) || unicode.Is(extPict, 'a') || !unicode.Is(joinsLeft, 0x0628) ||
		unicode.Is(joinsLeft, 0x0631) || !unicode.Is(joinsRight, 0x0631) || !unicode.Is(emojiVariation, 0x2764) ||
		!unicode.Is(textVariation, '#') || !unicode.Is(emojiModifier, 0x1F3FD) {
		t.Error("a well-known property is wrong")
	}
}
