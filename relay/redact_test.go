package relay_test

import (
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
)

// fakeToken is a GitHub token shape made at run time, never a literal.
func fakeToken(seed byte) string {
	b := []byte("ghp_")
	for i := 0; i < 36; i++ {
		b = append(b, "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z0AcD"[(i*7+int(seed))%38])
	}
	return string(b)
}

// docs/redaction.md: a secret reaches no sink and no status; the status counts it;
// duplicates are judged on the redacted text.
func TestSecretsNeverReachTheParent(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	tok, tok2 := fakeToken(1), fakeToken(2)
	if v, err := rt.Report(report("error", "auth failed with token "+tok+" for repo x", "ext "+tok)); v != diag.Delivered || err != nil {
		t.Fatalf("Report: %v %v", v, err)
	}
	// Differs only in the secret: a duplicate.
	if v, _ := rt.Report(report("error", "auth failed with token "+tok2+" for repo x", "ext "+tok2)); v != diag.DropDuplicate {
		t.Errorf("second report: %v, want duplicate", v)
	}
	want := "auth failed with token [REDACTED:github-pat] for repo x"
	es := r.inbox(t, "/root")
	if len(es) != 1 || es[0].Message != want || es[0].Source != "ext [REDACTED:github-pat]" || strings.Contains(es[0].Text, "ghp_") {
		t.Errorf("mailbox: %+v", es)
	}
	for _, n := range r.ui.all() {
		if strings.Contains(n.Text, "ghp_") || !strings.Contains(n.Text, "REDACTED") {
			t.Errorf("notification %q", n.Text)
		}
	}
	st := r.status(t, "/root/x")
	if len(st.Diagnostics) != 1 || st.Diagnostics[0].Message != want {
		t.Errorf("status diagnostics %+v", st.Diagnostics)
	}
	if st.Redacted["github-pat"] != 2 || st.Redacted.Total() != 2 {
		t.Errorf("status redacted %v, want github-pat: 2 (message and source of the delivered report)", st.Redacted)
	}
	// The counts carry over a reopen and show in the summary.
	rt2, err := rt.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	rt2.Report(report("info", "retry with "+tok+" ok", ""))
	if s, _ := r.m.Thread("/root/x"); s.Redacted["github-pat"] != 3 {
		t.Errorf("summary redacted %v, want github-pat: 3", s.Redacted)
	}
}

// Config.NoRedaction: sanitized only.
func TestNoRedaction(t *testing.T) {
	r := newRig(t, relay.ModeRPC, func(c *relay.Config) { c.NoRedaction = true })
	rt := r.open(t, "/root/x", "", "")
	tok := fakeToken(3)
	rt.Report(report("error", "token "+tok, ""))
	if es := r.inbox(t, "/root"); len(es) != 1 || !strings.Contains(es[0].Message, tok) {
		t.Errorf("mailbox %+v: want the token kept", es)
	}
	if st := r.status(t, "/root/x"); st.Redacted != nil {
		t.Errorf("redacted %v with redaction off", st.Redacted)
	}
}
