package service

// ConnCount is how many connections s is serving, the stdio host's
// included: a test's window on descriptors held.
func ConnCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
