package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"context"
	"time"

	"github.com/diagrelay/diagrelay/internal/wire"
)

// repoRoot is the module's root, from this package's directory.
const repoRoot = "../.."

// readmeBlocks returns the README's fenced blocks of language lang.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)\n```"+lang+"\n(.*?)\n```\n").FindAllStringSubmatch(string(b), -1) {
		blocks = append(blocks, m[1]+"\n")
	}
	return blocks
}

// buildSnippet builds a README Go snippet, a whole program, inside the
// module (in a directory go's ./... patterns skip) and returns the binary.
func buildSnippet(t *testing.T, i int, src string) string {
	t.Helper()
	dir, err := os.MkdirTemp(repoRoot, "_readme-snippet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "snippet")
	cmd := exec.Command(goTool, "build", "-o", bin, "./"+filepath.Base(dir))
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("README Go snippet %d does not build: %v\n%s\n%s", i, err, out, src)
	}
	return bin
}

// Every Go snippet in the README is a program that builds; the child
// program runs: it falls back when not hosted, reports when hosted, and
// fails (exit 1) when the service refuses it.
func TestREADMEGoSnippets(t *testing.T) {
	snippets := readmeBlocks(t, "go")
	if len(snippets) == 0 {
		t.Fatal("no Go snippet in README.md")
	}
	var child string
	for i, src := range snippets {
		bin := buildSnippet(t, i, src)
		if strings.Contains(src, "client.Dial(") {
			child = bin
		}
	}
	if child == "" {
		t.Fatal("no README Go snippet dials as a child")
	}
	run := func(env []string) result {
		cmd := exec.Command(child)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
	}
	wantExit(t, "not hosted", run([]string{envSocket + "=", envToken + "="}), 0, "lint: warning: eslint not found on PATH")

	s := startServer(t, "", "")
	tok, _ := s.open("/root/gochild")
	wantExit(t, "hosted", run(s.childEnv(tok)), 0, "")
	if _, text, _ := uiNotifyParams(t, s.host.nextNote(t)); text != "/root/gochild [lint]: eslint not found on PATH" {
		t.Errorf("notified %q", text)
	}
	s.open("/root/gochild") // a reopen revokes tok
	wantExit(t, "a revoked token", run(s.childEnv(tok)), 1, "revoked")
}

// docs/protocol.md has, for every method, a heading and a typed block
// (params and result), and says how the protocol is versioned.
func TestProtocolDocTypesEveryMethod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, m := range []string{wire.MethodHello, wire.MethodRuntimeOpen, wire.MethodRuntimeClose, wire.MethodThreadStatus,
		wire.MethodThreadList, wire.MethodMailboxRead, wire.MethodMailboxAck, wire.MethodCapabilitiesProbe,
		wire.MethodEventsSubscribe, wire.MethodDiagnosticProbe, wire.MethodDiagnosticReport} {
		at := strings.Index(doc, "### `"+m)
		if m == wire.MethodHello { // in "Peers and authentication"
			at = strings.Index(doc, "`"+m+" {token}` →")
		}
		if at < 0 {
			t.Errorf("docs/protocol.md does not describe %s", m)
			continue
		}
		rest := doc[at+1:]
		start := strings.Index(rest, "\n```text\n")
		end := strings.Index(rest[max(start, 0)+1:], "\n```\n")
		if next := strings.Index(rest, "\n### "); start < 0 || end < 0 || next >= 0 && next < start {
			t.Errorf("docs/protocol.md: no typed block under %s", m)
			continue
		}
		if block := rest[start : start+1+end]; !strings.Contains(block, "\nparams  ") || !strings.Contains(block, "\nresult  ") {
			t.Errorf("docs/protocol.md: %s's block types no params or result:\n%s", m, block)
		}
	}
	if !strings.Contains(doc, "\n## Versioning\n") {
		t.Error("docs/protocol.md has no Versioning section")
	}
}

// The newcomer's path (testdata/newcomer.sh): a fresh clone of this
// repository's committed HEAD, a fresh HOME, no XDG_RUNTIME_DIR, and the
// README's commands in order. It takes about a minute (a go install and a
// go run in the clone), so -short and -race skip it; CI's plain go test
// ./... runs it.
func TestNewcomerPath(t *testing.T) {
	if testing.Short() || raceEnabled() {
		t.Skip("the newcomer's path builds a fresh clone: not under -short or -race")
	}
	for _, tool := range []string{"git", "sh", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	if err := exec.Command("git", "-C", repoRoot, "rev-parse", "--git-dir").Run(); err != nil {
		t.Skipf("%s is not a git checkout: %v", repoRoot, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join("testdata", "newcomer.sh"), repoRoot)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("newcomer.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
