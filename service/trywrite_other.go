//go:build !unix

package service

import "net"

// socketTryWrite is nil where the descriptor cannot be written without
// waiting: every write goes through the writer goroutine.
func socketTryWrite(net.Conn) func([]byte) (int, error) { return nil }
