package mailbox

import (
	"github.com/diagrelay/diagrelay/diag"
)

// The tests' record encoders: Post seals a record in two steps (encodeBody
// in the poster's goroutine, sealRecord in the commit), so these one-step
// forms exist for the tests alone.

// encodeRecord returns m's version 2 record under id.
func encodeRecord(id uint64, m *diag.ParentMessage) []byte {
	body := encodeBody(nil, m)
	return sealRecord(body, bodySum(body), id)
}

// encodeRecordV1 appends m's version 1 record (no checksum) to dst: what
// stores written before checksums hold.
func encodeRecordV1(dst []byte, m *diag.ParentMessage) []byte {
	return appendFields(dst, recordV1, m)
}
