package diag

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/sanitize"
)

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func TestParseRefuses(t *testing.T) {
	type notAReport struct{ Level, Message, Source string }
	var nilReport *Report
	var nilErr error
	ok := map[string]any{"level": "info", "message": "m", "source": "s"}
	with := func(key string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		m[key] = v
		return m
	}
	without := func(key string) map[string]any {
		m := with(key, nil)
		delete(m, key)
		return m
	}
	for _, tc := range []struct {
		name    string
		payload any
		want    string
	}{
		{"nil", nil, "diag: payload is nil, want diag.Report, *diag.Report or map[string]any"},
		{"nil error", nilErr, "diag: payload is nil, want"},
		{"int", 42, "diag: payload is int, want diag.Report, *diag.Report or map[string]any"},
		{"string", "info", "diag: payload is string, want"},
		{"JSON text", []byte(`{"level":"info","message":"m"}`), "diag: payload is []uint8, want"},
		{"typed nil *Report", nilReport, "diag: payload is a nil *diag.Report"},
		{"**Report", &nilReport, "diag: payload is **diag.Report, want"},
		{"lookalike struct", notAReport{"info", "m", ""}, "diag: payload is diag.notAReport, want"},
		{"map[any]any", map[any]any{"level": "info", "message": "m"}, "diag: payload is map[interface {}]interface {}, want"},
		{"map[string]int", map[string]int{"level": 1}, "diag: payload is map[string]int, want"},
		{"[]any", []any{"info", "m"}, "diag: payload is []interface {}, want"},
		{"func", func() {}, "diag: payload is func(), want"},
		{"chan", make(chan int), "diag: payload is chan int, want"},
		{"nil map[string]any", map[string]any(nil), `diag: field "level" is missing`},
		{"empty map", map[string]any{}, `diag: field "level" is missing`},
		{"no message", without("message"), `diag: field "message" is missing`},
		{"level float64", with("level", 1.0), `diag: field "level" is float64, want string`},
		{"level null", with("level", nil), `diag: field "level" is null, want string`},
		{"level []byte", with("level", []byte("info")), `diag: field "level" is []uint8, want string`},
		{"level *string", with("level", new(string)), `diag: field "level" is *string, want string`},
		{"message null", with("message", nil), `diag: field "message" is null, want string`},
		{"message []any", with("message", []any{"m"}), `diag: field "message" is []interface {}, want string`},
		{"message map", with("message", map[string]any{}), `diag: field "message" is map[string]interface {}, want string`},
		{"message bool", with("message", true), `diag: field "message" is bool, want string`},
		{"source int", with("source", 3), `diag: field "source" is int, want string`},
		{"source json.Number", with("source", json.Number("3")), `diag: field "source" is json.Number, want string`},
		{"level warn", with("level", "warn"), `diag: level "warn" is not info, warning or error`},
		{"level Info", with("level", "Info"), `diag: level "Info" is not info, warning or error`},
		{"level ERROR", with("level", "ERROR"), `diag: level "ERROR" is not info, warning or error`},
		{"level with space", with("level", " info"), `diag: level " info" is not info, warning or error`},
		{"level with newline", with("level", "info\n"), `diag: level "info\n" is not info, warning or error`},
		{"level empty", with("level", ""), `diag: level "" is not info, warning or error`},
		{"level escape", with("level", "\x1b]0;pwn\x07"), `diag: level "\x1b]0;pwn\a" is not info`},
		{"level bidi", with("level", "\u202einfo"), `diag: level "\u202einfo" is not`},
		{"level huge", with("level", strings.Repeat("w", 10<<20)), `diag: level "wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww"... (10485760 bytes) is not`},
		{"message empty", with("message", ""), "diag: message is blank after sanitizing"},
		{"message blank", with("message", " \t\n\u00a0\u2028\u3000"), "diag: message is blank after sanitizing"},
		{"message invisible", with("message", "\u200b\u2060\ufeff\u202e\x00\x7f"), "diag: message is blank after sanitizing"},
		{"message only escapes", with("message", "\x1b[31m\x1b]0;t\x07\u009b1m"), "diag: message is blank after sanitizing"},
		{"message 10 MB of escapes", with("message", strings.Repeat("\x1b[31m", 2<<20)), "diag: message is blank after sanitizing"},
		{"string map level", map[string]string{"level": "fatal", "message": "m"}, `diag: level "fatal" is not`},
		{"string map no level", map[string]string{"message": "m"}, `diag: field "level" is missing`},
		{"string map no message", map[string]string{"level": "info"}, `diag: field "message" is missing`},
		{"nil string map", map[string]string(nil), `diag: field "level" is missing`},
		{"Report bad level", Report{Level: "debug", Message: "m"}, `diag: level "debug" is not`},
		{"Report zero", Report{}, `diag: level "" is not`},
		{"*Report blank", &Report{Level: Info, Message: "\u200b"}, "diag: message is blank after sanitizing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.payload)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", r)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to start with %q", err, tc.want)
			}
			if r != (Report{}) {
				t.Errorf("Parse returned %+v with its error", r)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	huge := strings.Repeat("a", 10<<20)
	for _, tc := range []struct {
		name    string
		payload any
		want    Report
	}{
		{"map", map[string]any{"level": "info", "message": "m", "source": "s"}, Report{Info, "m", "s"}},
		{"map without source", map[string]any{"level": "warning", "message": "m"}, Report{Warning, "m", ""}},
		{"map null source", map[string]any{"level": "error", "message": "m", "source": nil}, Report{Error, "m", ""}},
		{"map Level value", map[string]any{"level": Warning, "message": "m"}, Report{Warning, "m", ""}},
		{"blank source is absent", map[string]any{"level": "info", "message": "m", "source": " \u200b\t"}, Report{Info, "m", ""}},
		{"string map", map[string]string{"level": "error", "message": " m ", "source": "s"}, Report{Error, "m", "s"}},
		{"Report", Report{Info, "a\x1b[31mred\x1b[0m", "\x1b]0;t\x07src"}, Report{Info, "ared", "src"}},
		{"*Report", &Report{Warning, "a\tb\n\nc", ""}, Report{Warning, "a b c", ""}},
		{
			// Nothing in the payload can claim where it came from.
			"claims a thread",
			map[string]any{
				"level": "error", "message": "x", "source": "lint",
				"thread": "/root", "path": "/root/other", "from": "/root", "parent": "/k",
				"Level": "info", "MESSAGE": "y",
			},
			Report{Error, "x", "lint"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if r != tc.want {
				t.Errorf("Parse = %+v, want %+v", r, tc.want)
			}
		})
	}

	// A Report carries the three fields and nothing else.
	if n := reflect.TypeFor[Report]().NumField(); n != 3 {
		t.Errorf("Report has %d fields, want 3", n)
	}

	t.Run("does not modify *Report", func(t *testing.T) {
		p := &Report{Info, "\x1b[1mbold", "s"}
		before := *p
		if _, err := Parse(p); err != nil {
			t.Fatal(err)
		}
		if *p != before {
			t.Errorf("Parse changed its argument to %+v", *p)
		}
	})

	t.Run("JSON bridge", func(t *testing.T) {
		var payload any
		in := `{"level":"warning","message":"\u001b[31mdisk\u0000 full\u202e","source":"fs","thread":"/root"}`
		if err := json.Unmarshal([]byte(in), &payload); err != nil {
			t.Fatal(err)
		}
		r, err := Parse(payload)
		if err != nil {
			t.Fatal(err)
		}
		if want := (Report{Warning, "disk full", "fs"}); r != want {
			t.Errorf("Parse = %+v, want %+v", r, want)
		}
	})

	t.Run("10 MB", func(t *testing.T) {
		for _, text := range []string{huge, strings.Repeat("😀", 10<<18), strings.Repeat("a\x1b[31m ", 10<<18)} {
			r, err := Parse(map[string]any{"level": "info", "message": text, "source": text})
			if err != nil {
				t.Fatal(err)
			}
			if n := utf16Len(r.Message); n > sanitize.MessageLimit {
				t.Errorf("message is %d UTF-16 units, want at most %d", n, sanitize.MessageLimit)
			}
			if n := utf16Len(r.Source); n > sanitize.SourceLimit {
				t.Errorf("source is %d UTF-16 units, want at most %d", n, sanitize.SourceLimit)
			}
			if !strings.HasSuffix(r.Message, "…") || !strings.HasSuffix(r.Source, "…") {
				t.Errorf("a cut text should end with …: %q, %q", tail(r.Message), tail(r.Source))
			}
			if !utf8.ValidString(r.Message) || strings.ContainsRune(r.Message, 0x1b) {
				t.Errorf("message not clean: %q", tail(r.Message))
			}
		}
	})
}

func tail(s string) string {
	if len(s) > 20 {
		return "…" + s[len(s)-20:]
	}
	return s
}

// TestParseSanitizes checks, beyond the exact cases above, that what Parse
// returns is what the sanitizer makes of the input, for hostile texts.
func TestParseSanitizes(t *testing.T) {
	for _, s := range []string{
		"a\u009b31mb", "a\u009d0;title\u0007b", "a\xe2\x1b[31mred", "a\xf0\x1b]0;pwn\x07b",
		"a\x1b]0;✳ title\x1b\\b", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "x\x1b]0;evil",
		"x\x1b[31", "x\x1bP1$r\x1b\\y", "x\x1b_apc\x07y", "x\x1b(By", "bidi \u202eevil\u202c",
		"tag\U000E0041\U000E0042", "👩‍👩‍👧 🇫🇷 1️⃣ 👍🏽", "שלום عربي",
	} {
		r, err := Parse(Report{Error, s, s})
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if r.Message != sanitize.Message(s) || r.Source != sanitize.Source(s) {
			t.Errorf("Parse(%q) = %+v, not what the sanitizer makes of it", s, r)
		}
		for _, c := range r.Message {
			if c == 0x1b || (c >= 0x80 && c < 0xa0) || c == 0x202e {
				t.Errorf("Parse(%q) kept %U", s, c)
			}
		}
	}
}

// ParseWith cleans the message and the source with ParseOptions.Clean, to
// their limits, and adds up what it redacted from both; a source blank
// after cleaning is absent and its counts go with it. Parse sanitizes and
// redacts nothing (the relay's redaction is tested in package relay).
func TestParseWithClean(t *testing.T) {
	var limits []int
	mark := func(s string, limit int) (string, Redacted) {
		limits = append(limits, limit)
		if strings.HasPrefix(s, "secret") {
			return "", Redacted{"rule": 1}
		}
		return strings.ReplaceAll(sanitize.Clean(s, limit), "tok", "[X]"), Redacted{"rule": strings.Count(s, "tok")}
	}
	p := map[string]any{"level": "error", "message": "a tok\x1b[31m and tok", "source": "ext tok"}
	r, counts, err := ParseWith(p, ParseOptions{Clean: mark})
	if err != nil {
		t.Fatal(err)
	}
	if r.Message != "a [X] and [X]" || r.Source != "ext [X]" || counts["rule"] != 3 {
		t.Errorf("ParseWith = %+v %v", r, counts)
	}
	if !slices.Equal(limits, []int{sanitize.MessageLimit, sanitize.SourceLimit}) {
		t.Errorf("limits %v", limits)
	}
	p["source"] = "secret"
	if r, counts, err = ParseWith(p, ParseOptions{Clean: mark}); err != nil || r.Source != "" || counts["rule"] != 2 {
		t.Errorf("blank source: %+v %v %v", r, counts, err)
	}
	p["message"] = "secret"
	if _, _, err = ParseWith(p, ParseOptions{Clean: mark}); !errors.Is(err, ErrInvalid) {
		t.Errorf("blank message: %v", err)
	}
	p = map[string]any{"level": "info", "message": "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "J9kL1m\x1b[31m"}
	if r, counts, err := ParseWith(p, ParseOptions{}); err != nil || counts != nil || r.Message != sanitize.Message(p["message"].(string)) {
		t.Errorf("default: %+v %v %v", r, counts, err)
	}
}
