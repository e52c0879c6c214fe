package busprobe_test

import (
	"fmt"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/capability/busprobe"
	"github.com/diagrelay/diagrelay/diag"
)

// An extension reports through the channel when a live manager hosts its
// session, and falls back to its own reporting otherwise.
func ExampleReport() {
	report := func(b *bus.Bus, msg string) {
		if !busprobe.Report(b, diag.Warning, msg, "lint") {
			fmt.Println("no host, reporting at top level:", msg)
		}
	}

	// A child session: its manager answers the probe and listens for
	// reports on the child's own bus.
	child := bus.New()
	busprobe.Answer(child, capability.DiagnosticProbeTopic)
	child.On(diag.Topic, func(p any) {
		if r, ok := p.(diag.Report); ok {
			fmt.Printf("host received %s from %s: %s\n", r.Level, r.Source, r.Message)
		}
	})
	report(child, "config file missing")

	// A normal top-level session: nothing answers the probe.
	topLevel := bus.New()
	report(topLevel, "config file missing")
	// Output:
	// host received warning from lint: config file missing
	// no host, reporting at top level: config file missing
}

// Tools in the parent session ask whether the manager is enabled, and which
// version it is.
func ExampleProbe() {
	parent := bus.New()
	off := busprobe.Answer(parent, capability.CapabilitiesProbeTopic)

	c, ok := busprobe.Probe(parent, capability.CapabilitiesProbeTopic, "1.0.0")
	fmt.Println(ok, c.Version, c.Protocol)
	_, ok = busprobe.Probe(parent, capability.CapabilitiesProbeTopic, "2.0.0")
	fmt.Println("at least 2.0.0:", ok)

	off() // the manager is disabled
	_, ok = busprobe.Probe(parent, capability.CapabilitiesProbeTopic, "")
	fmt.Println("after off:", ok)
	// Output:
	// true 1.1.0 1
	// at least 2.0.0: false
	// after off: false
}
