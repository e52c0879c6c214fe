package redact

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Upstream's own test cases: each rule of gitleaks' generator
// (cmd/generate/config/rules in the pinned module) builds true positives
// and false positives and passes them to utils.Validate. The test copies
// the generator's packages from the module cache into a temporary module
// (nothing of it enters this repository), puts a Validate there that
// records its arguments instead of checking them, runs the generator and
// reads the cases. The module and its dependencies come through the Go
// proxy (.ci/run downloads the module first); without them the test
// skips, saying so.
type upstreamCase struct {
	Rule                          string
	TruePositives, FalsePositives []string
	Paths                         bool // ValidateWithPaths: the cases need a file path
}

// upstreamFalseAlarms are the false positives of upstream's cases that
// diagrelay changes, by rule and index in the rule's list, each with why
// (the decisions in the package doc).
var upstreamFalseAlarms = map[string]string{
	// Another rule's secret: upstream checks a rule's false positives with
	// that rule alone, and another of its rules (or one of diagrelay's own)
	// finds a secret there.
	"1password-service-account-token#1": byRule("generic-api-key"),
	"anthropic-admin-api-key#2":         byRule("anthropic-api-key"),
	"anthropic-api-key#2":               byRule("anthropic-admin-api-key"),
	"cisco-meraki-api-key#1":            byRule("generic-api-key"),
	"cisco-meraki-api-key#3":            byRule("generic-api-key"),
	"clickhouse-cloud-api-secret-key#1": byRule("generic-api-key"),
	"cloudflare-api-key#0":              byRule("cloudflare-global-api-key"),
	"cloudflare-api-key#1":              byRule("cloudflare-global-api-key"),
	"cloudflare-api-key#2":              byRule("cloudflare-global-api-key"),
	"cloudflare-api-key#3":              byRule("cloudflare-origin-ca-key"),
	"cloudflare-api-key#4":              byRule("cloudflare-origin-ca-key"),
	"cloudflare-global-api-key#0":       byRule("cloudflare-api-key"),
	"cloudflare-global-api-key#1":       byRule("cloudflare-api-key"),
	"cloudflare-global-api-key#2":       byRule("cloudflare-api-key"),
	"cloudflare-global-api-key#3":       byRule("cloudflare-origin-ca-key"),
	"cloudflare-global-api-key#4":       byRule("cloudflare-origin-ca-key"),
	"cloudflare-origin-ca-key#0":        byRule("cloudflare-global-api-key"),
	"cloudflare-origin-ca-key#1":        byRule("cloudflare-global-api-key"),
	"cloudflare-origin-ca-key#2":        byRule("cloudflare-global-api-key"),
	"cloudflare-origin-ca-key#3":        byRule("cloudflare-api-key"),
	"cloudflare-origin-ca-key#4":        byRule("cloudflare-api-key"),
	"cloudflare-origin-ca-key#5":        byRule("cloudflare-api-key"),
	"curl-auth-header#8":                byRule("authorization-header"),
	"databricks-api-token#0":            byRule("generic-api-key"),
	"slack-user-token#1":                byRule("generic-api-key"),
	"slack-user-token#3":                byRule("generic-api-key"),
	// Drawn afresh each run (a random value after "nonMatchingToken := "),
	// so which of them generic-api-key finds changes: any of the rule's.
	"settlemint-application-access-token#*": byRule("generic-api-key"),
	"settlemint-personal-access-token#*":    byRule("generic-api-key"),
	"settlemint-service-access-token#*":     byRule("generic-api-key"),
	// Boundaries: a prefix after a letter matches ("…JAIza…", "task_test_…").
	"gcp-api-key#0":         boundaries,
	"stripe-access-token#0": boundaries,
	// The sanitizer joins a diagnostic's lines, so the next line's start is
	// read as the value of a key that ends a line (not fixed).
	"generic-api-key#56": joinedLines,
	"generic-api-key#69": joinedLines,
	"generic-api-key#70": joinedLines,
}

const (
	boundaries  = "boundaries (docs/redaction.md)"
	joinedLines = "the sanitizer joins the lines"
)

func byRule(id string) string { return "caught by " + id }

func TestUpstreamCases(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds gitleaks' generator and runs 6,700 cases (-short; -race: the run without it covers them)")
	}
	cases := extractUpstreamCases(t)
	left := map[string]bool{}
	for _, l := range gitleaksLeftOut {
		left[l.ID] = true
	}
	tps, caught, changed := 0, 0, map[string]string{}
	rules := map[string]bool{}
	for _, c := range cases {
		if c.Paths || left[c.Rule] {
			continue
		}
		rules[c.Rule] = true
		for _, tp := range c.TruePositives {
			tps++
			if out, counts := Clean(tp, 0); counts != nil {
				caught++
			} else {
				t.Errorf("%s: true positive not caught: %q -> %q", c.Rule, tp, out)
			}
		}
		for i, fp := range c.FalsePositives {
			if out, counts := Clean(fp, 0); counts != nil {
				changed[fmt.Sprintf("%s#%d", c.Rule, i)] = fmt.Sprintf("%q -> %q", fp, out)
			}
		}
	}
	t.Logf("%d rules: %d of %d true positives caught; %d false positives changed", len(rules), caught, tps, len(changed))
	if len(rules) < 200 || tps < 6000 {
		t.Errorf("only %d rules and %d true positives extracted: the extraction is broken", len(rules), tps)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range changed {
			if !yield(k) {
				return
			}
		}
	})
	seen := map[string]bool{}
	for _, k := range names {
		any := k[:strings.IndexByte(k, '#')] + "#*"
		switch {
		case upstreamFalseAlarms[k] != "":
			seen[k] = true
		case upstreamFalseAlarms[any] != "":
			seen[any] = true
		default:
			t.Errorf("false positive %s changed: %s", k, changed[k])
		}
	}
	for k := range upstreamFalseAlarms {
		if !seen[k] && !strings.HasSuffix(k, "#*") {
			t.Errorf("false positive %s is recorded as changed but is not: drop it from upstreamFalseAlarms", k)
		}
	}
}

// extractUpstreamCases runs the pinned generator with a recording
// Validate and returns its cases.
func extractUpstreamCases(t *testing.T) []upstreamCase {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/zricethezav/gitleaks/v8@"+gitleaksVersion).Output()
	var mod struct{ Dir, Error string }
	if err != nil || json.Unmarshal(out, &mod) != nil || mod.Dir == "" {
		t.Skipf("gitleaks %s is not in the module cache and cannot be downloaded (%v %s): run go mod download github.com/zricethezav/gitleaks/v8@%s",
			gitleaksVersion, err, mod.Error, gitleaksVersion)
	}
	tmp := t.TempDir()
	for _, p := range []string{"go.mod", "go.sum", "config", "regexp", "logging", "version", "cmd/generate"} {
		if err := copyTree(filepath.Join(mod.Dir, p), filepath.Join(tmp, p)); err != nil {
			t.Fatal(err)
		}
	}
	utils := filepath.Join(tmp, "cmd/generate/config/utils")
	if err := os.WriteFile(filepath.Join(utils, "validate.go"), []byte(recordingValidate), 0o644); err != nil {
		t.Fatal(err)
	}
	mainGo := filepath.Join(tmp, "cmd/generate/config/main.go")
	src, err := os.ReadFile(mainGo)
	if err != nil {
		t.Fatal(err)
	}
	// After the generator lists its rules (each validated as it is built),
	// print the recorded cases and stop.
	s := string(src)
	i := strings.Index(s, "configRules := []*config.Rule{")
	j := strings.Index(s[max(i, 0):], "\n\t}\n")
	if i < 0 || j < 0 {
		t.Fatalf("the generator's main.go has no rule list where expected")
	}
	j += i + len("\n\t}\n")
	s = s[:j] + "\tutils.Dump()\n\tif true {\n\t\treturn\n\t}\n" + s[j:]
	s = strings.Replace(s, "import (", "import (\n\t\"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils\"", 1)
	if err := os.WriteFile(mainGo, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/generate/config", "unused")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Skipf("cannot run gitleaks' generator (its dependencies come through the Go proxy): %v\n%s", err, stderr.String())
	}
	var cases []upstreamCase
	if err := json.Unmarshal(out, &cases); err != nil {
		t.Fatalf("the generator's cases: %v", err)
	}
	return cases
}

// recordingValidate replaces the generator's utils/validate.go.
const recordingValidate = `package utils

import (
	"encoding/json"
	"os"

	"github.com/zricethezav/gitleaks/v8/config"
)

type recorded struct {
	Rule                          string
	TruePositives, FalsePositives []string
	Paths                         bool
}

var cases []recorded

func Validate(rule config.Rule, tps, fps []string) *config.Rule {
	cases = append(cases, recorded{rule.RuleID, tps, fps, false})
	return &rule
}

func ValidateWithPaths(rule config.Rule, tps, fps map[string]string) *config.Rule {
	c := recorded{Rule: rule.RuleID, Paths: true}
	for _, v := range tps {
		c.TruePositives = append(c.TruePositives, v)
	}
	for _, v := range fps {
		c.FalsePositives = append(c.FalsePositives, v)
	}
	cases = append(cases, c)
	return &rule
}

func Dump() { _ = json.NewEncoder(os.Stdout).Encode(cases) }
`

// copyTree copies the regular files under from (not its tests) to to,
// writable.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if strings.HasSuffix(p, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
