//go:build !linux

package testutil

import "os"

func fdatasync(f *os.File) error { return f.Sync() }
