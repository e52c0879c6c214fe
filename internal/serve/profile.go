package serve

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// EnvProfile names a path prefix: when set, serve writes a CPU profile to
// PREFIX.cpu for its whole run and an allocation profile to PREFIX.allocs
// when it stops cleanly (docs/performance.md, "The cost of a report"). It is
// for measuring the service under load, not for production; a profile
// holds function names, never report text. While it runs, SIGUSR1 writes
// the live heap to PREFIX.heap and the runtime's memory statistics to
// PREFIX.mem (as BenchmarkServeScaleRSS does before it reads the RSS).
const EnvProfile = "DIAGRELAY_PROFILE"

// StartProfile starts the profiles EnvProfile asks for and returns what
// stops them and writes the allocation profile (a no-op when unset).
func StartProfile() (stop func() error, err error) {
	prefix := os.Getenv(EnvProfile)
	if prefix == "" {
		return func() error { return nil }, nil
	}
	cpu, err := os.OpenFile(prefix+".cpu", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvProfile, err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, fmt.Errorf("%s: %w", EnvProfile, err)
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			writeMemory(prefix)
		}
	}()
	return func() error {
		signal.Stop(usr1)
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

// writeMemory writes the live heap profile and the memory statistics.
func writeMemory(prefix string) {
	runtime.GC()
	if f, err := os.OpenFile(prefix+".heap", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	text := fmt.Sprintf("HeapInuse %d\nHeapIdle %d\nHeapReleased %d\nStackInuse %d\nMSpanInuse %d\nGCSys %d\nOtherSys %d\nSys %d\nNumGoroutine %d\n",
		m.HeapInuse, m.HeapIdle, m.HeapReleased, m.StackInuse, m.MSpanInuse, m.GCSys, m.OtherSys, m.Sys, runtime.NumGoroutine())
	os.WriteFile(prefix+".mem", []byte(text), 0o600)
}
