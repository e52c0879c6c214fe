//go:build !unix

package service

import "net"

type batchAccepter struct{}

func newBatchAccepter(net.Listener, func()) *batchAccepter { return nil }

func (*batchAccepter) drain() []net.Conn { return nil }
