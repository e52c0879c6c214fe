package sanitize

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
	// A selector counts only where it changes the presentation.
	emojiPres := ranges(emoji, "property", "Emoji_Presentation")
	textVS, emojiVS := map[rune]bool{}, map[rune]bool{}
	for i, file := range [][2]string{{"emoji-variation-sequences.json", "emoji-variation-sequences"}, {"StandardizedVariants.json", "StandardizedVariants"}} {
		for _, e := range load(file[0], file[1]) {
			seq := e["variationSequence"].([]any)
			base := hex(seq[0])
			switch hex(seq[1]) {
			case 0xFE0E:
				if i == 1 || emojiPres[base] {
					textVS[base] = true
				}
			case 0xFE0F:
				if i == 1 || !emojiPres[base] {
					emojiVS[base] = true
				}
			}
		}
	}
	// The display floor: ages up to DisplayFloor kept, later ones after it.
	kept, after := map[rune]bool{}, map[rune]bool{}
	for _, e := range load("DerivedAge.json", "DerivedAge") {
		s := kept
		if versionAfter(e["unicodeVersion"].(string), DisplayFloor) {
			s = after
		}
		rg := e["range"].([]any)
		for r := hex(rg[0]); r <= hex(rg[len(rg)-1]); r++ {
			s[r] = true
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
		{"displayable", displayable, kept},
		{"afterFloor", afterFloor, after},
		{"wide", wide, ranges(load("EastAsianWidth.json", "EastAsianWidth"), "width", "W", "F")},
	} {
		if len(c.want) == 0 {
			t.Fatalf("%s: nothing in the data", c.name)
		}
		// Every code point of the data is in the table, and the table
		// holds no more (its ranges count exactly as many).
		for r := range c.want {
			if !unicode.Is(c.tab, r) {
				t.Fatalf("%s: %U is in the data, not in the table", c.name, r)
			}
		}
		if n := rangeCount(c.tab); n != len(c.want) {
			t.Fatalf("%s: %d code points in the table, %d in the data", c.name, n, len(c.want))
		}
	}
	// Spot checks against what everyone knows.
	if !unicode.Is(extPict, 0x1F600) || unicode.Is(extPict, 'a') || !unicode.Is(joinsLeft, 0x0628) ||
		unicode.Is(joinsLeft, 0x0631) || !unicode.Is(joinsRight, 0x0631) || !unicode.Is(emojiVariation, 0x2764) ||
		unicode.Is(textVariation, '#') || !unicode.Is(emojiVariation, '#') || !unicode.Is(textVariation, 0x231A) ||
		unicode.Is(emojiVariation, 0x231A) || !unicode.Is(emojiModifier, 0x1F3FD) ||
		!unicode.Is(displayable, 0x20C0) || !unicode.Is(afterFloor, 0x31350) || !unicode.Is(afterFloor, 0x1FAE8) ||
		unicode.Is(displayable, 0x1FC00) || unicode.Is(afterFloor, 0x1FC00) || !unicode.Is(wide, 0x20000) || unicode.Is(wide, 'a') {
		t.Error("a well-known property is wrong")
	}
}

// versionAfter reports whether Unicode version a ("major.minor") is newer
// than b.
func versionAfter(a, b string) bool {
	num := func(s string) int {
		major, minor, _ := strings.Cut(s, ".")
		x, err1 := strconv.Atoi(major)
		y, err2 := strconv.Atoi(minor)
		if err1 != nil || err2 != nil {
			panic("bad version " + s)
		}
		return x*100 + y
	}
	return num(a) > num(b)
}

// DerivedAge and the unicode package agree on what is assigned: the code
// points of the two age tables are exactly those with a General_Category
// other than Cn, so the floor never keeps what norm and unicode do not
// know, nor removes what they do. (DerivedAge gives the noncharacters an
// age; they are Cn, and removed by their own rule.)
func TestAgesMatchUnicodePackage(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Noncharacter_Code_Point, r) {
			continue
		}
		assigned := unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z,
			unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
		if got := unicode.Is(displayable, r) || unicode.Is(afterFloor, r); got != assigned {
			t.Fatalf("%U: in DerivedAge %v, assigned in unicode %v", r, got, assigned)
		}
	}
}

// The tables were generated for DisplayFloor, and go generate reproduces
// ucd_tables.go byte for byte from the committed data.
func TestFloorTables(t *testing.T) {
	if tablesFloor != DisplayFloor {
		t.Fatalf("ucd_tables.go is for floor %s, DisplayFloor is %s: run go generate", tablesFloor, DisplayFloor)
	}
	got := generate(t, "")
	want, err := os.ReadFile("ucd_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("go generate does not reproduce ucd_tables.go: run it and commit the result")
	}
}

// Raising the floor is the constant and go generate: the generator takes
// the floor it is given (as it takes DisplayFloor from floor.go), and with
// 15.0 the tables keep what 14.0 turns into U+FFFD and the file changes
// nowhere but in the floor and the two age tables.
func TestRaisingTheFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	raised := string(generate(t, ucdVersion[:strings.LastIndex(ucdVersion, ".")]))
	if !strings.Contains(raised, "const tablesFloor = \"15.0\"") {
		t.Fatal("the raised tables do not name floor 15.0")
	}
	// afterFloor is empty, and displayable covers CJK Extension H.
	i := strings.Index(raised, "var afterFloor = &unicode.RangeTable{")
	if i < 0 || !strings.HasPrefix(raised[i:], "var afterFloor = &unicode.RangeTable{}") {
		t.Fatal("afterFloor is not empty at floor 15.0")
	}
	d := raised[strings.Index(raised, "var displayable"):i]
	if !strings.Contains(d, "{0x31350, 0x323AF, 1}") {
		t.Fatal("displayable does not hold CJK Extension H at floor 15.0")
	}
	cur, err := os.ReadFile("ucd_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	strip := func(s string) string {
		a := strings.Index(s, "// tablesFloor")
		b := strings.Index(s, "var displayable")
		c := strings.Index(s, "// wide:")
		return s[:a] + s[strings.Index(s, "// extPict"):b] + s[c:]
	}
	if strip(raised) != strip(string(cur)) {
		t.Fatal("raising the floor changed tables other than the ages")
	}
}

// generate runs internal/ucdgen as go generate does, with floor if not "".
func generate(t *testing.T, floor string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ucd_tables.go")
	args := []string{"run", "./internal/ucdgen", "-dir", filepath.Join("testdata", "ucd", ucdVersion), "-out", out}
	if floor != "" {
		args = append(args, "-floor", floor)
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ucdgen: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rangeCount counts the code points of a range table.
func rangeCount(t *unicode.RangeTable) int {
	n := 0
	for _, r := range t.R16 {
		n += int((r.Hi-r.Lo)/r.Stride) + 1
	}
	for _, r := range t.R32 {
		n += int((r.Hi-r.Lo)/r.Stride) + 1
	}
	return n
}
