//go:build !unix

package service

import (
	"io"
	"net"
)

// socketTryWrite is nil where the descriptor cannot be written without
// waiting: every write goes through the writer goroutine.
func socketTryWrite(net.Conn) func([]byte) (int, error) { return nil }

// hostTryWrite is nil off Unix, as socketTryWrite.
func hostTryWrite(io.Writer) func([]byte) (int, error) { return nil }
