package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// docFiles are README.md and docs/*.md, as paths from the module's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
}

// The patterns of Markdown these tests read. Functions, not variables:
// this package's initializers count in TestStartupAllocations.
func mdCode() *regexp.Regexp    { return regexp.MustCompile("`([^`]+)`") }
func mdLink() *regexp.Regexp    { return regexp.MustCompile(`\]\(([^)\s]+)\)`) }
func mdFence() *regexp.Regexp   { return regexp.MustCompile("(?ms)^```.*?^```") }
func mdHeading() *regexp.Regexp { return regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`) }

// anchors are the heading anchors GitHub makes of a Markdown file: lower
// case, spaces as '-', punctuation but '-' and '_' left out, a repeated
// one numbered from -1.
func anchors(md string) map[string]bool {
	a := map[string]bool{}
	for _, m := range mdHeading().FindAllStringSubmatch(mdFence().ReplaceAllString(md, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
				b.WriteRune(r)
			}
		}
		slug := b.String()
		for i, s := 1, slug; ; i++ {
			if !a[s] {
				a[s] = true
				break
			}
			s = slug + "-" + strconv.Itoa(i)
		}
	}
	return a
}

// Every relative link in README.md and docs/*.md names a file that exists,
// and a #fragment names a heading of the file it points at.
func TestDocLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		links := mdLink().FindAllStringSubmatch(mdFence().ReplaceAllString(md, ""), -1)
		for _, m := range links {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %v", rel(file), target, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			db, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", rel(file), target, err)
				continue
			}
			if !anchors(string(db))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", rel(file), target, rel(dest), frag)
			}
		}
	}
}

// Every package go list finds, and clients/js, is named in docs/layout.md's
// table, and every row is one of them.
func TestLayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	// rows are the names of the table's first column; named are all the
	// table's code spans (a generator may be named in its package's row).
	rows, named := map[string]bool{}, map[string]bool{}
	code := mdCode()
	for _, line := range strings.Split(string(b), "\n") {
		first, rest, ok := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		if !ok || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, name := range code.FindAllStringSubmatch(first, -1) {
			rows[name[1]], named[name[1]] = true, true
		}
		for _, name := range code.FindAllStringSubmatch(rest, -1) {
			named[name[1]] = true
		}
	}
	// The packages as go list has them, and the npm package.
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]bool{"clients/js": true}
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			continue
		}
		pkgs[strings.TrimPrefix(p, module+"/")] = true
	}
	for p := range pkgs {
		if !named[p] {
			t.Errorf("docs/layout.md does not name %s", p)
		}
	}
	for r := range rows {
		if !pkgs[r] {
			t.Errorf("docs/layout.md has a row for %s, which is not a package", r)
		}
	}
}

const module = "github.com/diagrelay/diagrelay"

func rel(path string) string {
	r, err := filepath.Rel(repoRoot, path)
	if err != nil {
		return path
	}
	return r
}

// protocolTypes are the Go types each typed block of docs/protocol.md
// names on its Go line, and the shapes of its Notation section.
func protocolTypes() map[string]any {
	return map[string]any{
		"HelloParams": wire.HelloParams{}, "HostHello": wire.HostHello{}, "ChildHello": wire.ChildHello{},
		"OpenParams": wire.OpenParams{}, "OpenResult": wire.OpenResult{}, "PathParams": wire.PathParams{},
		"Empty": wire.Empty{}, "Status": wire.Status{}, "ReadParams": wire.ReadParams{}, "Page": wire.Page{},
		"AckParams": wire.AckParams{}, "AckResult": wire.AckResult{}, "Probe": wire.Probe{}, "Threads": wire.Threads{},
		"ReportParams": wire.ReportParams{}, "SpawnToken": wire.SpawnToken{}, "SpawnOpenParams": wire.SpawnOpenParams{},
		"Diagnostic": wire.Diagnostic{}, "Dropped": wire.Dropped{}, "Message": wire.Message{}, "ThreadInfo": wire.ThreadInfo{},
	}
}

// jsonMembers are the JSON member names of struct v's fields.
func jsonMembers(v any) []string {
	var names []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// docMembers are the member names a block's type text lists.
func docMembers(text string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`[{,]\s*([a-zA-Z_]+)\??:`).FindAllStringSubmatch(text, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// docField is the text of a typed block's field ("params", "result", or a
// shape's name), continuation lines included.
func docField(block, field string) (string, bool) {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, field+" "):
			in = true
			b.WriteString(strings.TrimPrefix(line, field))
		case in && strings.HasPrefix(line, " "):
			b.WriteString(line)
		default:
			in = false
		}
	}
	return b.String(), b.Len() > 0
}

// Every typed block of docs/protocol.md lists exactly the members of the
// internal/wire types its Go line names, and every shape of its Notation
// section those of the wire type of that name: the document says results
// carry no member it does not list.
func TestProtocolDocMembersAreWires(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```text\n(.*?)\n```").FindAllStringSubmatch(string(b), -1)
	checked := 0
	protocolTypes := protocolTypes()
	check := func(where, text string, types []string) {
		var want []string
		for _, name := range types {
			v, ok := protocolTypes[name]
			if !ok {
				t.Errorf("%s: no wire type %s in this test's table", where, name)
				return
			}
			for _, m := range jsonMembers(v) {
				if !slices.Contains(want, m) {
					want = append(want, m)
				}
			}
		}
		slices.Sort(want)
		if got := docMembers(text); !slices.Equal(got, want) {
			t.Errorf("docs/protocol.md: %s lists %v; wire.%s has %v", where, got, strings.Join(types, " | wire."), want)
		}
		checked++
	}
	wireName := regexp.MustCompile(`wire\.([A-Za-z]+)`)
	for _, bl := range blocks {
		block := bl[1]
		goLine, ok := docField(block, "Go")
		if !ok || !strings.Contains(goLine, "→") {
			// The Notation's shapes block: one line (and its continuations) per shape.
			for name := range protocolTypes {
				if text, ok := docField(block, name); ok {
					check("shape "+name, text, []string{name})
				}
			}
			continue
		}
		in, out, _ := strings.Cut(strings.SplitN(goLine, ";", 2)[0], "→")
		params, _ := docField(block, "params")
		result, _ := docField(block, "result")
		var inTypes, outTypes []string
		for _, m := range wireName.FindAllStringSubmatch(in, -1) {
			inTypes = append(inTypes, m[1])
		}
		for _, m := range wireName.FindAllStringSubmatch(out, -1) {
			outTypes = append(outTypes, m[1])
		}
		check("params of the block of "+strings.TrimSpace(goLine), params, inTypes)
		check("result of the block of "+strings.TrimSpace(goLine), result, outTypes)
	}
	if checked < 20 {
		t.Errorf("only %d types checked: the blocks were not found", checked)
	}
}
