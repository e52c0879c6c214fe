package datadir

import (
	"os"
	"path/filepath"
)

// WriteHostToken writes tok, a fresh host token (service.NewToken), to
// dir/host.token, mode 0600, replacing the file atomically so a reader
// never sees half a token. It returns tok.
func WriteHostToken(dir, tok string) (string, error) {
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
