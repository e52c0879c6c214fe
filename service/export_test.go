package service

// ConnCount is how many connections s is serving, the stdio host's
// included: a test's window on descriptors held.
func ConnCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// MaxUnsentNow is the most bytes waiting to be written to any one
// connection: for tests that wait until a peer that does not read has a
// full queue, instead of sleeping.
func (s *Server) MaxUnsentNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for c := range s.conns {
		c.qmu.Lock()
		most = max(most, c.unsent)
		c.qmu.Unlock()
	}
	return most
}

// DrainingConns is how many connections have read their input to the end
// (or were told to stop) and only write out what is queued: for tests that
// wait until a half-closed peer's frames are all read, instead of sleeping.
func DrainingConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.stop.isSet() {
			n++
		}
	}
	return n
}
