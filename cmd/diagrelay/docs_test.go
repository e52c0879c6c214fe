package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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

var (
	mdCode    = regexp.MustCompile("`([^`]+)`")
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// anchors are the heading anchors GitHub makes of a Markdown file: lower
// case, spaces as '-', punctuation but '-' and '_' left out, a repeated
// one numbered from -1.
func anchors(md string) map[string]bool {
	a := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(md, ""), -1) {
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
		links := mdLink.FindAllStringSubmatch(mdFence.ReplaceAllString(md, ""), -1)
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
	for _, line := range strings.Split(string(b), "\n") {
		first, rest, ok := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		if !ok || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, name := range mdCode.FindAllStringSubmatch(first, -1) {
			rows[name[1]], named[name[1]] = true, true
		}
		for _, name := range mdCode.FindAllStringSubmatch(rest, -1) {
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
