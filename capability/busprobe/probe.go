package busprobe

import (
	"sync"

	"github.com/diagrelay/diagrelay/bus"
	"github.com/diagrelay/diagrelay/capability"
)

// Probe emits a ProbeRequest on topic and reports whether a host answered
// with a reply compatible with minVersion ("" for no minimum), returning the
// first compatible reply. Replies are collected only while Probe runs: a
// host must answer synchronously. A nil bus, no answer, only incompatible
// answers or an invalid minVersion mean not hosted, with a zero Capability.
func Probe(b *bus.Bus, topic, minVersion string) (capability.Capability, bool) {
	if b == nil || (minVersion != "" && capability.CheckVersion(minVersion) != nil) {
		return capability.Capability{}, false
	}
	p := &probe{min: minVersion}
	b.Emit(topic, capability.ProbeRequest{Respond: p.respond})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return p.found, p.hosted
}

// probe collects the replies to one Probe call.
type probe struct {
	min string

	mu     sync.Mutex
	closed bool // Probe has returned: ignore replies
	hosted bool
	found  capability.Capability
}

func (p *probe) respond(reply any) {
	// Judge the reply before locking: nothing of the caller's runs under mu.
	c, ok := capability.Compatible(reply, p.min)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && !p.hosted {
		p.hosted, p.found = true, c
	}
}

// reply is Current boxed once, so that answering does not allocate. Receivers
// get a Capability value: a copy, whatever they do with it.
var reply any = capability.Current()

// Answer makes b answer probes on topic with Capability{Version, Protocol},
// synchronously, until the returned off is called (or b is closed). Payloads other than a
// ProbeRequest or a non-nil *ProbeRequest with a non-nil Respond are
// ignored. A nil bus installs nothing.
func Answer(b *bus.Bus, topic string) (off func()) {
	if b == nil {
		return func() {}
	}
	return b.On(topic, answer)
}

func answer(payload any) {
	switch r := payload.(type) {
	case capability.ProbeRequest:
		if r.Respond != nil {
			r.Respond(reply)
		}
	case *capability.ProbeRequest:
		if r != nil && r.Respond != nil {
			r.Respond(reply)
		}
	}
}
