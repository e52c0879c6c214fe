package datadir

import (
	"os"
	"path/filepath"

	"github.com/diagrelay/diagrelay/service"
)

// WriteHostToken writes a fresh host token to dir/host.token, mode 0600,
// replacing the file atomically so a reader never sees half a token.
func WriteHostToken(dir string) (string, error) {
	tok := service.NewToken()
	tmp, err := os.CreateTemp(dir, ".host.token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return tok, os.Rename(tmp.Name(), filepath.Join(dir, HostTokenFile))
}

// ReadHostToken returns the contents of dir/host.token as they are (a
// line: watch.Dial ignores the white space around the token).
func ReadHostToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, HostTokenFile))
	return string(b), err
}
