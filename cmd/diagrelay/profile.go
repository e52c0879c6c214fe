package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// envProfile names a path prefix: when set, serve writes a CPU profile to
// PREFIX.cpu for its whole run and an allocation profile to PREFIX.allocs
// when it stops cleanly (docs/performance.md, "The cost of a report"). It is
// for measuring the service under load, not for production; a profile
// holds function names, never report text.
const envProfile = "DIAGRELAY_PROFILE"

// startProfile starts the profiles envProfile asks for and returns what
// stops them and writes the allocation profile (a no-op when unset).
func startProfile() (stop func() error, err error) {
	prefix := os.Getenv(envProfile)
	if prefix == "" {
		return func() error { return nil }, nil
	}
	cpu, err := os.OpenFile(prefix+".cpu", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envProfile, err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, fmt.Errorf("%s: %w", envProfile, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := cpu.Close(); err != nil {
			return err
		}
		f, err := os.OpenFile(prefix+".allocs", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}
