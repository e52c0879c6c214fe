package service

import (
	"errors"

	"github.com/diagrelay/diagrelay/internal/wire"
	"github.com/diagrelay/diagrelay/relay"
)

// hostNotifier sends relay notifications to every host connection as
// ui.notify. With no host connected the notification is not shown: its
// parent message and status entry are what remain, as in print mode. A
// host that does not read loses notifications (Stats.NotificationsDropped)
// and never blocks the child whose report raised them.
type hostNotifier struct{ s *Server }

func (h hostNotifier) Notify(n relay.Notification) error {
	h.s.mu.Lock()
	hosts := make([]*conn, 0, 1)
	for c := range h.s.conns {
		if c.auth() == stateHost {
			hosts = append(hosts, c)
		}
	}
	h.s.mu.Unlock()
	var errs []error
	for _, c := range hosts {
		errs = append(errs, c.notify(wire.NotifyUI, wireNotify(n)))
	}
	return errors.Join(errs...)
}
