package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

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
