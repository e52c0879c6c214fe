package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// Listen listens on the Unix socket path with mode 0600. A stale socket
// file left by a killed server is removed; a live one is an error.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another server is listening", path)
		}
		// Only a refused connection proves the file stale; a live server
		// with a full backlog, or a permission error, must not lose it.
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%s exists and may be in use: %w", path, err)
		}
		os.Remove(path)
	}
	// The umask makes the socket 0600 from its creation, with no window in
	// which another user could connect.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}
