//go:build !unix

package peercred

import "net"

// Gone cannot tell a departed peer here; its frames are read until
// the end of the input, or until a reply to it fails.
func Gone(net.Conn) bool { return false }

// WaitReadable has no descriptor to wait on here: a read waits holding
// its buffer.
func WaitReadable(net.Conn) func() (gone bool, err error) { return nil }
