package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// MaxSocketPath is the longest Unix socket path there is: the kernel's
// sun_path holds 108 bytes, the terminating NUL included.
const MaxSocketPath = 107

// CheckSocketPath refuses a socket path longer than MaxSocketPath, saying
// so with the limit (the kernel would say only "invalid argument").
func CheckSocketPath(path string) error {
	if len(path) > MaxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes, over the %d bytes a Unix socket path can have (sun_path, 108 with its NUL): "+
			"give a shorter --socket PATH, or set XDG_RUNTIME_DIR", path, len(path), MaxSocketPath)
	}
	return nil
}

// Listen listens on the Unix socket path with mode 0600. A stale socket
// file left by a killed server is removed; a live one is an error. Its
// errors name the path once and say what to do.
func Listen(path string) (net.Listener, error) {
	if err := CheckSocketPath(path); err != nil {
		return nil, err
	}
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
	switch {
	case errors.Is(err, syscall.ENOENT):
		return nil, fmt.Errorf("cannot listen on %s: directory %s does not exist: create it, or give another --socket PATH", path, filepath.Dir(path))
	case errors.Is(err, syscall.EACCES):
		return nil, fmt.Errorf("cannot listen on %s: permission denied: give a --socket PATH in a directory you can write", path)
	case err != nil:
		return nil, fmt.Errorf("cannot listen on %s: %w", path, unwrapOp(err))
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// unwrapOp is a *net.OpError's cause, whose text does not repeat the path.
func unwrapOp(err error) error {
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Err != nil {
		return op.Err
	}
	return err
}
