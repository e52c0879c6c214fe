package service

// scheduler serves connections round-robin. A connection holds one of its
// slots while it handles one frame, then gives it back and queues again
// for the next; a channel's blocked senders are woken in the order they
// came, so a child with one frame waits behind at most one frame of each
// other busy connection, however many a flooding child has pipelined.
// Flooders wait parked, off the run queue, so the goroutines that carry a
// well-behaved child's report (its connection, the mailbox's commit, its
// writer) are not stuck behind them.
//
// The wait for a durable mailbox write is not spent holding a slot (see
// conn.report), so group commit still batches every child's posts.
type scheduler struct{ slots chan struct{} }

func newScheduler(n int) *scheduler { return &scheduler{slots: make(chan struct{}, max(n, 1))} }

func (s *scheduler) acquire() { s.slots <- struct{}{} }
func (s *scheduler) release() { <-s.slots }
