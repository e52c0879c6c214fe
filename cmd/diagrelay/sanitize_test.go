package main

import (
	"bytes"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/diagrelay/diagrelay/sanitize"
)

func runSanitizeCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"sanitize"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// fakeTok is a GitHub token's shape, made up.
var fakeTok = "ghp_" + strings.Repeat("Q2xM9zR4pW", 3) + "7vK3nT"

func TestSanitizeCommand(t *testing.T) {
	long := strings.Repeat("x", 1200)
	for _, tc := range []struct {
		name string
		args []string
		in   string
		want string
	}{
		{"lines", nil, "a \x1b[31mred\x1b[0m line\nsecond\t\tline\r\n", "a red line\nsecond line\n"},
		{"no final newline", nil, "one\ntwo", "one\ntwo\n"},
		{"empty lines stay", nil, "\n \n\x1b[0m\n", "\n\n\n"},
		{"empty input", nil, "", ""},
		{"message limit by default", nil, long + "\n", long[:999] + "…\n"},
		{"source limit", []string{"--source"}, long + "\n", long[:79] + "…\n"},
		{"explicit limit", []string{"--limit", "5"}, "abcdefgh\nabc\n", "abcd…\nabc\n"},
		{"limit overrides source", []string{"--source", "--limit", "3"}, "abcdef\n", "ab…\n"},
		{"no limit", []string{"--limit", "0"}, long + "\n", long + "\n"},
		{"NUL records", []string{"-z"}, "a\nb\x00c\x1b[1m\x00", "a b\x00c\x00"},
		{"NUL record without terminator", []string{"-z"}, "a\x00b", "a\x00b\x00"},
		{"newline does not end a NUL record", []string{"-z", "--limit", "4"}, "ab\ncdef\x00", "ab…\x00"},
		{"escape split by newline", nil, "a\x1b]0;title\nb\n", "a\nb\n"},
		{"invalid UTF-8", nil, "a\xe2\x1b[31mred\n", "a\uFFFDred\n"},
		{"a token passes without --redact", nil, "token " + fakeTok + "\n", "token " + fakeTok + "\n"},
		{"--redact", []string{"--redact"}, "token \x1b[1m" + fakeTok + ", retry\nclean\n", "token [REDACTED:github-pat], retry\nclean\n"},
		{"--redact, then the cut", []string{"--redact", "--limit", "12"}, "token " + fakeTok + "\n", "token [REDA…\n"},
		{"--redact -z", []string{"--redact", "-z"}, "a\n" + fakeTok + "\x00", "a [REDACTED:github-pat]\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runSanitizeCmd(t, tc.in, tc.args...)
			if code != 0 || out != tc.want || errs != "" {
				t.Errorf("sanitize %v <%q: exit %d, stdout %q, stderr %q; want 0, %q, \"\"", tc.args, tc.in, code, out, errs, tc.want)
			}
		})
	}
}

func TestSanitizeCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--limit", "-1"},
		{"--limit", "many"},
		{"--bogus"},
		{"extra-argument"},
		{"-z", "--", "x"},
	} {
		code, out, errs := runSanitizeCmd(t, "text\n", args...)
		if code != 2 || out != "" || !strings.Contains(errs, "Run 'diagrelay help sanitize' for usage.") {
			t.Errorf("sanitize %q: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", args, code, out, errs)
		}
	}
	if code, _, errs := runSanitizeCmd(t, "", "-h"); code != 0 || !strings.Contains(errs, "usage:") {
		t.Errorf("sanitize -h: exit %d, stderr %q", code, errs)
	}
}

// patternReader yields left bytes of pattern repeated, then one newline:
// a single line of any length without holding it in memory.
type patternReader struct {
	pattern string
	left    int64
	off     int
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.left < 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		chunk := r.pattern[r.off:]
		if int64(len(chunk)) > r.left {
			chunk = chunk[:r.left]
		}
		k := copy(p[n:], chunk)
		n += k
		r.left -= int64(k)
		r.off = (r.off + k) % len(r.pattern)
	}
	if r.left == 0 && n < len(p) {
		p[n] = '\n'
		n++
		r.left = -1
	}
	return n, nil
}

// expectWriter checks a stream against want repeated, without storing it.
type expectWriter struct {
	want     string
	n        int64
	mismatch int64 // offset of the first difference, or -1
}

func (w *expectWriter) Write(p []byte) (int, error) {
	written := len(p)
	for len(p) > 0 {
		off := int(w.n % int64(len(w.want)))
		k := min(len(p), len(w.want)-off)
		if w.mismatch < 0 && string(p[:k]) != w.want[off:off+k] {
			i := 0
			for p[i] == w.want[off+i] {
				i++
			}
			w.mismatch = w.n + int64(i)
		}
		w.n += int64(k)
		p = p[k:]
	}
	return written, nil
}

func raceEnabled() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}

// A 100 MB line streams through in bounded memory, with and without a
// limit, and comes out right.
func TestSanitizeCommandStreamsHugeLines(t *testing.T) {
	size := int64(100 << 20)
	if testing.Short() || raceEnabled() {
		size = 8 << 20
	}
	const pattern = "word \x1b[31mred\x1b[0m é 😀\t"
	const cleaned = "word red é 😀 " // what each pattern becomes, its tab a space
	if got := sanitize.Clean(strings.Repeat(pattern, 3), 0); got != strings.TrimSpace(strings.Repeat(cleaned, 3)) {
		t.Fatalf("pattern cleans to %q", got)
	}
	reps := size / int64(len(pattern))
	size = reps * int64(len(pattern))

	t.Run("no limit", func(t *testing.T) {
		w := &expectWriter{want: cleaned, mismatch: -1}
		alloc, code, errs := measure(func() (int, string) {
			var errb bytes.Buffer
			return run([]string{"sanitize", "--limit", "0"}, &patternReader{pattern: pattern, left: size}, w, &errb), errb.String()
		})
		if code != 0 || errs != "" {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		// The stream is the cleaned pattern repeated; its last space
		// (trimmed) is where the newline is.
		wantLen := reps * int64(len(cleaned))
		if w.n != wantLen || w.mismatch != wantLen-1 {
			t.Errorf("wrote %d bytes, first difference at %d; want %d bytes, differing only at the final newline", w.n, w.mismatch, wantLen)
		}
		t.Logf("%d MB in, %d KiB allocated in all", size>>20, alloc>>10)
		if alloc > 4<<20 {
			t.Errorf("allocated %d KiB for a %d MB line: memory is not bounded", alloc>>10, size>>20)
		}
	})

	t.Run("message limit", func(t *testing.T) {
		var out bytes.Buffer
		alloc, code, errs := measure(func() (int, string) {
			var errb bytes.Buffer
			return run([]string{"sanitize"}, &patternReader{pattern: pattern, left: size}, &out, &errb), errb.String()
		})
		if code != 0 || errs != "" {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		if want := sanitize.Message(strings.Repeat(pattern, 1000)) + "\n"; out.String() != want {
			t.Errorf("got %.60q…, want %.60q…", out.String(), want)
		}
		if alloc > 4<<20 {
			t.Errorf("allocated %d KiB for a %d MB line: memory is not bounded", alloc>>10, size>>20)
		}
	})
}

// measure runs f and returns how many bytes the process allocated meanwhile.
func measure(f func() (int, string)) (alloc uint64, code int, stderr string) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, stderr = f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, code, stderr
}

// --limit 9223372036854775807 crashed the command: the limit arithmetic
// overflowed. Any limit the flag accepts works, and a huge one is no limit.
func TestSanitizeCommandMaxIntLimit(t *testing.T) {
	in := "hello world\n\x1b[31mred\x1b[0m e\u0301 " + strings.Repeat("word ", 3000) + "\n"
	_, want, _ := runSanitizeCmd(t, in, "--limit", "0")
	for _, limit := range []string{"9223372036854775807", "9223372036854775806", "3074457345618258603", "4611686018427387904"} {
		code, out, errs := runSanitizeCmd(t, in, "--limit", limit)
		if code != 0 || out != want || errs != "" {
			t.Errorf("sanitize --limit %s: exit %d, stdout %.40q, stderr %q; want 0 and the unlimited output", limit, code, out, errs)
		}
	}
	if code, _, errs := runSanitizeCmd(t, in, "--limit", "9223372036854775808"); code != 2 || !strings.Contains(errs, "value out of range") {
		t.Errorf("sanitize --limit 2^63: exit %d, stderr %q; want a usage error", code, errs)
	}
}
