package mailbox

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data, and of its metadata only what reading the
// data back needs (its size, when it grew): the log is preallocated, so
// a commit flushes its own blocks and nothing else.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
