package demo

// How the scenario words what became of each step.

import (
	"fmt"
	"strings"

	"github.com/diagrelay/diagrelay/capability"
	"github.com/diagrelay/diagrelay/diag"
)

func hostedText(c capability.Capability, ok bool) string {
	if !ok {
		return "not hosted"
	}
	return fmt.Sprintf("hosted: version %s, protocol %d", c.Version, c.Protocol)
}

// verdictText says what became of one report: delivered (Event.Delivered
// has it as the relay delivered it), or dropped and why.
func verdictText(t Tally, payload any) string {
	switch {
	case t.Delivered == 1:
		return "delivered"
	case t.Invalid == 1:
		_, err := diag.Parse(payload)
		if err != nil {
			return "dropped, invalid: " + err.Error()
		}
		return "dropped, invalid"
	}
	return tallyText(t)
}

// tallyText is "5 delivered, dropped: 3 rate, 2 duplicate", or "ignored"
// when nothing reached the relay.
func tallyText(t Tally) string {
	var drops []string
	for _, c := range []struct {
		n    uint64
		name string
	}{{t.Duplicate, "duplicate"}, {t.Rate, "rate"}, {t.Cap, "cap"}, {t.Invalid, "invalid"}} {
		if c.n > 0 {
			drops = append(drops, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	switch {
	case t.Delivered == 0 && len(drops) == 0:
		return "ignored: nothing received it"
	case len(drops) == 0:
		return fmt.Sprintf("%d delivered", t.Delivered)
	case t.Delivered == 0 && t.Dropped.Total() == 1:
		return "dropped: " + drops[0]
	}
	return fmt.Sprintf("%d delivered, dropped: %s", t.Delivered, strings.Join(drops, ", "))
}
