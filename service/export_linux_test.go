package service

import "github.com/diagrelay/diagrelay/internal/peercred"

// NoPidfd makes the server behave as on a kernel without SO_PEERPIDFD
// (before Linux 6.5), for the tests of that fallback; it returns the
// function that undoes it.
func NoPidfd() (undo func()) { return peercred.NoPidfd() }
