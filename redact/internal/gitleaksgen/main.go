// Command gitleaksgen writes package redact's rule table from gitleaks'
// config/gitleaks.toml at the pinned version (see docs/redaction.md). It
// reads the file from the Go module cache, downloading the module with
// `go mod download` if needed; the module is never imported.
//
// Run by `go generate ./redact` in the redact directory. It fails on any
// regex Go's regexp cannot compile, on any key or feature of the file it does
// not know (so an upstream change is read before it is trusted), and on a
// secret group the regex lacks.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Module and Version pin the upstream rule set.
const (
	Module  = "github.com/zricethezav/gitleaks/v8"
	Version = "v8.30.1"
)

// Output files, relative to the redact directory.
const (
	tableFile   = "gitleaks_rules.go"
	licenseFile = "LICENSE.gitleaks"
)

func main() {
	dir, err := moduleDir(true)
	if err != nil {
		fail(err)
	}
	table, license, err := generateFrom(dir)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(tableFile, table, 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(licenseFile, license, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gitleaksgen:", err)
	os.Exit(1)
}

// generateFrom reads the module's rule file and license from dir and returns
// the table's Go source and the license text.
func generateFrom(dir string) (table, license []byte, err error) {
	src, err := os.ReadFile(filepath.Join(dir, "config", "gitleaks.toml"))
	if err != nil {
		return nil, nil, err
	}
	license, err = os.ReadFile(filepath.Join(dir, "LICENSE"))
	if err != nil {
		return nil, nil, err
	}
	table, err = generate(src)
	return table, license, err
}

// moduleDir returns where the pinned module is unpacked in the module cache.
// With download false it only looks, and returns an error naming the
// command to run when the module is not there.
func moduleDir(download bool) (string, error) {
	if !download {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		dir := filepath.Join(string(trimNewline(out)), "github.com", "zricethezav", "gitleaks", "v8@"+Version)
		if _, err := os.Stat(filepath.Join(dir, "config", "gitleaks.toml")); err != nil {
			return "", fmt.Errorf("%s@%s is not in the module cache (run: go mod download %s@%s): %w", Module, Version, Module, Version, err)
		}
		return dir, nil
	}
	out, err := exec.Command("go", "mod", "download", "-json", Module+"@"+Version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", Module, Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download -json: %w", err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", Module, Version, info.Error)
	}
	return info.Dir, nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
