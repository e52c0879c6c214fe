package mailboxcheck

import (
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/mailbox"
)

// A damaged file's recipient can be any bytes: the report quotes what is
// not a thread path, and says what serve does with the damage.
func TestWrite(t *testing.T) {
	var b strings.Builder
	Write(&b, &mailbox.Report{Path: "/d/mailbox.db", Recipients: []mailbox.RecipientReport{
		{Recipient: "/root", Unacknowledged: 2, Damaged: 1, DamagedIDs: []uint64{7}},
		{Recipient: "\x1b]0;x\a", Unaddressable: 1},
	}})
	s := b.String()
	if strings.ContainsAny(s, "\x1b\a") {
		t.Fatalf("raw escape in %q", s)
	}
	for _, has := range []string{"bbolt consistency check: passed", "damaged ids for /root: 7\n", `"\x1b]0;x\a"`,
		"result: DAMAGED: 2 damaged records, 2 messages intact", "note: 1 entries have no message id"} {
		if !strings.Contains(s, has) {
			t.Errorf("no %q in:\n%s", has, s)
		}
	}
}
