package diag

// Dropped counts reports that were not delivered, by reason. It is the
// module's one type of these four counters: a Gate's Counts, a thread's
// relay.Status, the protocol's "dropped" member (docs/protocol.md; its
// JSON names are the protocol's, which are also a dropped event's
// reasons) and the demo's transcript all hold it.
type Dropped struct {
	Duplicate uint64 `json:"duplicate"`
	Rate      uint64 `json:"rate"`
	Cap       uint64 `json:"cap"`
	Invalid   uint64 `json:"invalid"`
}

// Total is the number of drops for any reason.
func (d Dropped) Total() uint64 { return d.Duplicate + d.Rate + d.Cap + d.Invalid }

// Plus is d and e added up, reason by reason.
func (d Dropped) Plus(e Dropped) Dropped {
	return Dropped{d.Duplicate + e.Duplicate, d.Rate + e.Rate, d.Cap + e.Cap, d.Invalid + e.Invalid}
}

// Minus is d less e, reason by reason: what was dropped between an
// earlier count e and a later one d (each member of e at most d's).
func (d Dropped) Minus(e Dropped) Dropped {
	return Dropped{d.Duplicate - e.Duplicate, d.Rate - e.Rate, d.Cap - e.Cap, d.Invalid - e.Invalid}
}
