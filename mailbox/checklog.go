package mailbox

import (
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// LogReport is what Check found in the log beside the file (LogPath):
// the commits since the last checkpoint, which the next Open writes into
// the file.
type LogReport struct {
	Paths [2]string
	// Missing is true when neither of the log's files is there: a mailbox
	// never opened by a Store that logs, or one whose log was removed.
	Missing bool
	// Posts and Acks count the frames past the file's checkpoint mark.
	Posts, Acks int
	// TornTail is true when the log ends in a commit that a crash cut
	// short: none of its writers was answered, so nothing is lost, and
	// Open drops it.
	TornTail bool
	// Damaged says how flushed frames are damaged ("" if they are not):
	// frames of later commits follow one that fails its checks. Open
	// refuses such a log; Check counts it in Problems too.
	Damaged string
}

// logKeyOf is an entry's id and recipient, as a map key.
type logKeyOf struct {
	id        uint64
	recipient string
}

// scanLogFor reads the log of the file in tx for Check: what it holds past
// the checkpoint mark, and which entries its acks remove.
func (r *Report) scanLogFor(tx *bolt.Tx) (posts []frame, acked map[logKeyOf]bool) {
	lr := &LogReport{Paths: LogPaths(r.Path)}
	r.Log = lr
	lr.Missing = true
	for _, p := range lr.Paths {
		if _, err := os.Stat(p); err == nil {
			lr.Missing = false
		}
	}
	if lr.Missing {
		return nil, nil
	}
	mark, err := readMark(tx)
	if err != nil {
		r.problem(err)
	}
	sc, err := scanEpochs(lr.Paths, mark)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("the log could not be read: %v", err))
		return nil, nil
	}
	lr.TornTail = sc.torn
	if sc.damaged != nil {
		lr.Damaged = sc.damaged.Error()
		r.Problems = append(r.Problems, fmt.Sprintf("the log is damaged: %v", sc.damaged))
	}
	acked = map[logKeyOf]bool{}
	for _, f := range sc.frames {
		switch f.kind {
		case frameAck:
			lr.Acks++
			for _, id := range f.ids {
				acked[logKeyOf{id, f.recipient}] = true
			}
		default:
			lr.Posts++
			posts = append(posts, f)
		}
	}
	return posts, acked
}
