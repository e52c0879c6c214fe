//go:build !unix

package service

import "net"

// peerGone cannot tell a departed peer here; its frames are read until
// the end of the input, or until a reply to it fails.
func peerGone(net.Conn) bool { return false }
