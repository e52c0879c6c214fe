package diag

// Redacted counts the secrets redacted from reports, by rule id (the ids of
// docs/redaction.md); nil or empty is none. It is the module's one type of
// this count: what the scanner returns, a thread's status, the protocol's
// "redacted" member and a cluster's counts all hold it.
type Redacted map[string]int

// Total is the number of secrets redacted. A negative count, which only a
// confused peer can send, counts nothing.
func (r Redacted) Total() int {
	n := 0
	for _, v := range r {
		n += max(v, 0)
	}
	return n
}

// Add adds d's counts to r, allocating r if it is nil, and returns it.
func (r Redacted) Add(d Redacted) Redacted {
	if len(d) == 0 {
		return r
	}
	if r == nil {
		r = make(Redacted, len(d))
	}
	for k, v := range d {
		r[k] += v
	}
	return r
}
