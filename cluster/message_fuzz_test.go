package cluster

import (
	"reflect"
	"testing"

	"github.com/diagrelay/diagrelay/threadpath"
)

// FuzzDecode holds the home's and the edges' decoders of what comes from
// the cluster (anyone who may publish or write the bucket can send it):
// no input panics, and whatever is accepted is valid and encodes back to
// itself.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"token":"` + hex64 + `","path":"/root/a","level":"warning","message":"m","at":"2026-12-01T00:00:00Z"}`))
	f.Add([]byte(`{"v":1,"token":"` + hex64 + `","path":"/root/a","boot":"b1","dropped":{"duplicate":1,"rate":0,"cap":0,"invalid":2},"redacted":{"github-pat":1}}`))
	f.Add([]byte(`{"v":1,"path":"/k","parent":"","owner":"/root","generation":2,"open":true,"bind":false,"edge":"e1","opened_at":"2026-12-01T00:00:00Z"}`))
	f.Add([]byte(`{"v":1,"path":"/k","path":"/x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, _, err := decodeReport(b); err == nil {
			if threadpath.Validate(m.Path) != nil {
				t.Fatalf("accepted a report for %q", m.Path)
			}
			again, _, err := decodeReport(encodeMsg(m))
			if err == nil && again.At.Equal(m.At) {
				again.At = m.At // the same instant; its zone may be another value
			}
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("report %+v does not round-trip: %+v, %v", m, again, err)
			}
		}
		if c, _, err := decodeCounts(b); err == nil {
			for id, n := range c.Redacted {
				if n < 0 {
					t.Fatalf("accepted a negative count for %q", id)
				}
			}
			again, _, err := decodeCounts(encodeMsg(c))
			if err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("counts %+v do not round-trip: %+v, %v", c, again, err)
			}
		}
		if e, err := decodeEntry(b); err == nil {
			if threadpath.Validate(e.Path) != nil || e.Parent != threadpath.LexicalParent(e.Path) {
				t.Fatalf("accepted an entry for %q under %q", e.Path, e.Parent)
			}
			again, err := decodeEntry(e.encode())
			if err == nil && again.OpenedAt.Equal(e.OpenedAt) {
				again.OpenedAt = e.OpenedAt
			}
			if err != nil || !reflect.DeepEqual(again, e) {
				t.Fatalf("entry %+v does not round-trip: %+v, %v", e, again, err)
			}
		}
	})
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
