package relay_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/relay"
	"github.com/diagrelay/diagrelay/sanitize"
)

// A child cannot forge the frame of the notification text through its
// source: each shape below would otherwise make the text read as another
// thread's notification, or end the source's brackets early. The mailbox
// and the status keep the sanitized source as it is.
func TestNotificationSourceCannotForgeTheFrame(t *testing.T) {
	for _, tt := range []struct {
		name, source, shown string
	}{
		{"brackets and a second thread", "lint]: ok /root [system", "lint_:_ok_/root__system"},
		{"closing bracket only", "lint]", "lint_"},
		{"spaces", "a b", "a_b"},
		{"fullwidth brackets", "lint］: ok ［x", "lint_:_ok__x"},
		{"parentheses and quotes", `x("y")`, "x__y__"},
		{"zero-width joiner between letters (the sanitizer removes it)", "li\u200dnt", "lint"},
		{"right-to-left override (the sanitizer removes it)", "\u202etnil", "tnil"},
		{"symbols and emoji", "lint ✓ 🔥", "lint____"},
		{"tab and non-breaking space", "a\tb\u00a0c", "a_b_c"},
		{"allowed punctuation", "my-ext_v1.2/lint@host:+#", "my-ext_v1.2/lint@host:+#"},
		{"letters, marks and digits of any script", "проверка-é-٣-日本", "проверка-é-٣-日本"},
		// docs/decisions.md, "Source frame": it starts with a letter or digit, and no
		// Prepend character glues the closing bracket into its cluster.
		{"leading marks would combine with the bracket", "\u0338\u20e5lint", "lint"},
		{"leading punctuation", "--x.y", "x.y"},
		{"leading symbols", "✓ lint", "lint"},
		{"a leading digit stays", "3d", "3d"},
		{"a Prepend letter at the end", "lint\u0d4e", "lint_"},
		{"a Prepend letter at the start", "\u0d4elint", "lint"},
		{"an Arabic number sign (format, removed by the sanitizer)", "\u0600lint", "lint"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, relay.ModeRPC)
			rt := r.open(t, "/root/x", "", "")
			if _, err := rt.Report(report("warning", "m", tt.source)); err != nil {
				t.Fatal(err)
			}
			shown := r.ui.all()
			if len(shown) != 1 {
				t.Fatalf("%d notifications", len(shown))
			}
			if want := "/root/x [" + tt.shown + "]: m"; shown[0].Text != want {
				t.Errorf("notification %q, want %q", shown[0].Text, want)
			}
			if strings.Count(shown[0].Text, "]") != 1 || strings.Count(shown[0].Text, "[") != 1 {
				t.Errorf("notification %q has a second frame", shown[0].Text)
			}
			in := r.inbox(t, "/root")
			st := r.status(t, "/root/x")
			if len(in) != 1 || in[0].Source != sanitize.Source(tt.source) {
				t.Errorf("mailbox source %q, want the sanitized %q", in[0].Source, sanitize.Source(tt.source))
			}
			if len(st.Diagnostics) != 1 || st.Diagnostics[0].Source != in[0].Source {
				t.Errorf("status source %+v, mailbox %q", st.Diagnostics, in[0].Source)
			}
			if !strings.Contains(in[0].Text, `"source":`) {
				t.Errorf("parent message %q has no source", in[0].Text)
			}
		})
	}
}

// A source of which the frame keeps nothing is shown as no source: the
// notification has no brackets at all, and the parent message and status
// still carry it.
func TestNotificationSourceWithNothingToFrame(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	if _, err := rt.Report(report("warning", "m", "✓✓ --")); err != nil {
		t.Fatal(err)
	}
	if shown := r.ui.all(); len(shown) != 1 || shown[0].Text != "/root/x: m" {
		t.Fatalf("notifications %+v, want one /root/x: m", shown)
	}
	if in := r.inbox(t, "/root"); len(in) != 1 || in[0].Source != "✓✓ --" {
		t.Errorf("mailbox %+v", in)
	}
}

// A report on a closed or replaced runtime gets its own error and the zero
// Verdict, and is not counted as invalid (or at all).
func TestClosedRuntimeReportIsNotInvalid(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	rt.Close()
	v, err := rt.Report(report("info", "after close", ""))
	if v != 0 || !errors.Is(err, relay.ErrRuntimeClosed) || !errors.Is(err, relay.ErrClosed) {
		t.Errorf("Report on a closed runtime = %v, %v; want the zero Verdict and ErrRuntimeClosed", v, err)
	}
	next, err := rt.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Reopen(); !errors.Is(err, relay.ErrRuntimeClosed) {
		t.Errorf("Reopen of a replaced runtime: %v", err)
	}
	next.Report(nil) // one invalid, from the live generation
	if st := r.status(t, "/root/x"); st.Dropped != (diag.Dropped{Invalid: 1}) {
		t.Errorf("dropped %+v, want only the live generation's invalid", st.Dropped)
	}
}

// Drops are counted once, by the gates, and summed over generations:
// those of a closed generation stay in the status.
func TestDropsSumOverGenerations(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	rt := r.open(t, "/root/x", "", "")
	rt.Report(report("info", "same", ""))
	rt.Report(report("info", "same", ""))
	rt.Report(42)
	next, err := rt.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	next.Report(report("info", "same", ""))
	next.Report(report("info", "same", ""))
	want := diag.Dropped{Duplicate: 2, Invalid: 1}
	if st := r.status(t, "/root/x"); st.Dropped != want {
		t.Errorf("live: dropped %+v, want %+v", st.Dropped, want)
	}
	next.Close()
	next.Close()
	if st := r.status(t, "/root/x"); st.Dropped != want {
		t.Errorf("closed: dropped %+v, want %+v", st.Dropped, want)
	}
}

func TestStatusRecipient(t *testing.T) {
	r := newRig(t, relay.ModeRPC)
	r.open(t, "/root/x", "", "")
	r.open(t, "/k", "", "/root/x")
	r.open(t, "/k/l", "", "")
	for path, want := range map[string]string{"/root/x": "/root", "/k": "/root/x", "/k/l": "/k"} {
		if got := r.status(t, path).Recipient(); got != want {
			t.Errorf("%s: Recipient() = %q, want %q", path, got, want)
		}
	}
}
