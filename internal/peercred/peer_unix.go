//go:build linux || darwin

package peercred

import "net"

// Binding says that this system can bind a token to a process.
const Binding = true

// read is the credentials the kernel recorded for nc's peer at connect
// (credOf, per system); none known if the call fails.
func read(nc net.Conn) Cred {
	var cred Cred
	ControlFD(nc, func(fd int) { cred = credOf(fd) })
	return cred
}
