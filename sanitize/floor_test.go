package sanitize

import "testing"

// The display floor: code points assigned after DisplayFloor become one
// U+FFFD per maximal run; unassigned ones, the reserved emoji among them,
// are removed.
func TestDisplayFloor(t *testing.T) {
	runCases(t, []cleanCase{
		{name: "the issue's message", in: "build ok\U0001FC00\U0001FC01\U00031350", want: "build ok\uFFFD"},
		{name: "a run is one U+FFFD", in: "a\U00031350\U00031351\U0001FAE8b", want: "a\uFFFDb"},
		{name: "removed characters do not end a run", in: "a\U00031350\u200B\x1b[0m\U00031351b", want: "a\uFFFDb"},
		{name: "a space ends a run", in: "\U00031350 \U00031351", want: "\uFFFD \uFFFD"},
		{name: "a kept character ends a run", in: "\U00031350x\U00031351", want: "\uFFFDx\uFFFD"},
		{name: "a post-floor mark", in: "a\U0001E030b", want: "a\uFFFDb"},
		{name: "a post-floor emoji in a ZWJ sequence", in: "👨\u200D\U0001FAE8", want: "👨\uFFFD"},
		{name: "a joiner between two runs", in: "\U00031350\u200D\U00031351", want: "\uFFFD"},
		{name: "after invalid UTF-8", in: "\xff\U00031350", want: "\uFFFD\uFFFD"},
		{name: "14.0 is kept", in: "\u20C0 \U0001FAE0 \U0001F6DD", want: "\u20C0 \U0001FAE0 \U0001F6DD"},
		{name: "post-floor format controls are removed", in: "a\U00013439b", want: "ab"},
		{name: "alone", in: "\U00031350", want: "\uFFFD"},
	})
	// The Writer agrees, split inside a run.
	in := "a\U00031350\U00031351b"
	for at := 1; at < len(in); at++ {
		if got, err := streamed(in, 0, []int{at}); err != nil || got != "a\uFFFDb" {
			t.Fatalf("split at %d: %+q, %v", at, got, err)
		}
	}
}

// Idempotence whatever the mark order: the found idempotence failures, and their family (a
// low-class mark after a virama that a kept ZWJ stands before, behind a
// pending space or joiner).
func TestIdempotentWhateverTheMarkOrder(t *testing.T) {
	for _, in := range []string{
		"क\u200d् \u0301\u093c",
		"क\u200d् \u093c\u0301",
		"क\u200d्\u200c\u0301\u093c",
		"क\u200d्\u200c\u093c\u0301",
		"ক\u200d্\u200c\u0301\u09bc য",
		"क\u200d्\u093c\u0301",
	} {
		for _, limit := range []int{0, 3, 4, 5, 6, MessageLimit} {
			cleanChecked(t, in, limit)
		}
	}
}
