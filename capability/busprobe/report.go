package busprobe

import (
	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
)

// Report is the helper for extension authors. It probes DiagnosticProbeTopic
// on b, the bus of the session the extension runs in, for a host of at least
// DiagnosticSince. If one answers, Report emits diag.Report{level, message,
// source} on diag.Topic and returns true; the host validates, sanitizes and
// rate-limits it, and drops it silently if it must. Otherwise (a top-level
// session, an old host, a nil bus) Report emits nothing and returns false:
// the caller keeps its normal top-level reporting.
func Report(b *bus.Bus, level diag.Level, message, source string) (hosted bool) {
	if _, ok := Probe(b, capability.DiagnosticProbeTopic, capability.DiagnosticSince); !ok {
		return false
	}
	b.Emit(diag.Topic, diag.Report{Level: level, Message: message, Source: source})
	return true
}
