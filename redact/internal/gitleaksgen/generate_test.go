package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTableIsGenerated regenerates the committed table and license from the
// module cache and compares them byte for byte. CI downloads the module
// first (.ci/run); elsewhere run: go mod download github.com/zricethezav/gitleaks/v8@v8.30.1
func TestTableIsGenerated(t *testing.T) {
	dir, err := moduleDir(false)
	if err != nil {
		t.Skipf("cannot regenerate the table: %v", err)
	}
	table, license, err := generateFrom(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		want []byte
	}{{tableFile, table}, {licenseFile, license}} {
		got, err := os.ReadFile(filepath.Join("..", "..", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("redact/%s is not what the generator writes: run go generate ./redact", f.name)
		}
	}
}

const minimal = `
[allowlist]
regexes = ['''(?i)^true|false|null$''']
[[rules]]
id = "a"
regex = '''a+'''
keywords = ["A"]
`

func TestGenerateFailsOnWhatGoCannotCompile(t *testing.T) {
	// A lookahead: valid for gitleaks' optional RE2 build, not for Go.
	src := minimal + "[[rules]]\nid = \"b\"\nregex = '''b(?=c)'''\n"
	_, err := generate([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "rule b: Go's regexp cannot compile") {
		t.Fatalf("err = %v, want rule b cannot compile", err)
	}
}

func TestGenerateFailsOnAnUnknownKey(t *testing.T) {
	src := minimal + "[[rules.required]]\nid = \"a\"\n"
	if _, err := generate([]byte(src)); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Fatalf("err = %v, want unknown keys", err)
	}
}

func TestGenerateFailsOnAMissingSecretGroup(t *testing.T) {
	src := minimal + "[[rules]]\nid = \"b\"\nregex = '''(b)'''\nsecretGroup = 2\n"
	if _, err := generate([]byte(src)); err == nil || !strings.Contains(err.Error(), "secretGroup 2") {
		t.Fatalf("err = %v, want secretGroup error", err)
	}
}

func TestGenerateAnchorsTheGlobalWords(t *testing.T) {
	out, err := generate([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("`(?i)^(?:true|false|null)$`")) || bytes.Contains(out, []byte("^true|false|null$")) {
		t.Errorf("global allowlist not anchored:\n%s", out)
	}
	src := strings.Replace(minimal, `(?i)^true|false|null$`, `^x$`, 1)
	if _, err := generate([]byte(src)); err == nil {
		t.Error("a global allowlist without upstream's words was accepted")
	}
}

func TestGenerateLeavesOutPathRules(t *testing.T) {
	src := minimal + `
[[rules]]
id = "p"
path = '''\.p12$'''
[[rules]]
id = "q"
regex = '''q+'''
path = '''\.tf$'''
keywords = ["q"]
[[rules]]
id = "r"
regex = '''r+'''
keywords = ["r"]
[[rules.allowlists]]
paths = ['''x''']
[[rules.allowlists]]
condition = "AND"
paths = ['''x''']
regexes = ['''rr''']
[[rules.allowlists]]
paths = ['''x''']
stopwords = ["RRR"]
`
	out, err := generate([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`{"p", "path only`, `{"q", "applies only to files`, `Stopwords: []string{"rrr"}`} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %s:\n%s", want, s)
		}
	}
	if !regexp.MustCompile(`ID:\s+"r"`).MatchString(s) {
		t.Errorf("rule r is missing:\n%s", s)
	}
	if regexp.MustCompile(`ID:\s+"q"`).MatchString(s) || strings.Contains(s, "`rr`") {
		t.Errorf("a path rule or a path-only/AND-path allowlist survived:\n%s", s)
	}
}
