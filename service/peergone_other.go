//go:build !unix

package service

import "net"

// peerGone cannot tell a departed peer here; its frames are read until
// the end of the input, or until a reply to it fails.
func peerGone(net.Conn) bool { return false }

// waitReadable has no descriptor to wait on here: a read waits holding
// its buffer.
func waitReadable(net.Conn) func() (gone bool, err error) { return nil }
