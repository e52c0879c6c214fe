package diag

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/diagrelay/diagrelay/sanitize"
)

// ErrInvalid is matched (errors.Is) by every error Parse returns: the relay
// counts such payloads as "invalid". The error's text says what was wrong.
var ErrInvalid = errors.New("diag: invalid report")

// invalidError is one reason a payload is invalid; it unwraps to ErrInvalid.
type invalidError struct{ reason string }

func (e *invalidError) Error() string { return "diag: " + e.reason }
func (e *invalidError) Unwrap() error { return ErrInvalid }

func invalid(format string, args ...any) error {
	return &invalidError{fmt.Sprintf(format, args...)}
}

// Parse decodes a bus payload into a clean Report, or returns an error that
// matches ErrInvalid and says what was wrong. It accepts any value without
// panicking.
//
// Accepted payloads:
//   - a Report or a non-nil *Report (the pointee is not modified);
//   - a map[string]any, what a JSON bridge produces, with keys "level",
//     "message" and optionally "source". level and message must be strings
//     (a level may also be a Level); source must be a string, or nil (JSON
//     null) or missing, both meaning absent. Other keys are ignored, whatever
//     they claim: attribution comes from the bus that carried the payload;
//   - a map[string]string, with the same keys.
//
// Everything else is refused, including JSON text, other map types, nil and
// a nil *Report.
//
// The level must be exactly "info", "warning" or "error": no case folding
// and no trimming, so " info" is refused. The message is cleaned (by
// default sanitize.Message) and must not be blank afterwards; the source is
// cleaned (by default sanitize.Source) and is "" (absent) if blank
// afterwards. Types and the level are checked before any text is cleaned,
// so a refused payload costs little however long its text.
//
// Parse is ParseWith(payload, ParseOptions{}) without the counts: it
// sanitizes and redacts nothing. The relay's reports are also redacted: it
// passes the secret scanner as ParseOptions.Clean.
func Parse(payload any) (Report, error) {
	r, _, err := ParseWith(payload, ParseOptions{})
	return r, err
}

// ParseOptions change how ParseWith cleans a report. The zero value
// sanitizes the texts and redacts nothing.
type ParseOptions struct {
	// Clean cleans one text to at most limit UTF-16 code units, obeying
	// every rule of package sanitize, and says what it redacted; nil is
	// sanitize.Clean, which redacts nothing. The relay passes the secret
	// scanner (docs/redaction.md): which cleaning a report gets is the
	// relay's decision, and diag does not link the scanner, so the
	// protocol's shapes that hold diag's types do not either.
	Clean func(s string, limit int) (string, Redacted)
}

// ParseWith is Parse with options; it also returns how many secrets were
// redacted from the message and the source together, by rule (nil: none).
// The relay calls it once a report, before its gate, so that the gate, and
// so deduplication, sees the redacted text (docs/redaction.md).
func ParseWith(payload any, o ParseOptions) (Report, Redacted, error) {
	switch p := payload.(type) {
	case Report:
		return o.clean(p.Level, p.Message, p.Source)
	case *Report:
		if p == nil {
			return Report{}, nil, invalid("payload is a nil *diag.Report")
		}
		return o.clean(p.Level, p.Message, p.Source)
	case map[string]any:
		return o.parseMap(p)
	case map[string]string:
		level, ok := p["level"]
		if !ok {
			return Report{}, nil, invalid("field \"level\" is missing")
		}
		message, ok := p["message"]
		if !ok {
			return Report{}, nil, invalid("field \"message\" is missing")
		}
		return o.clean(Level(level), message, p["source"])
	case nil:
		return Report{}, nil, invalid("payload is nil, want diag.Report, *diag.Report or map[string]any")
	default:
		return Report{}, nil, invalid("payload is %T, want diag.Report, *diag.Report or map[string]any", payload)
	}
}

func (o ParseOptions) parseMap(m map[string]any) (Report, Redacted, error) {
	var level Level
	switch v := m["level"].(type) {
	case string:
		level = Level(v)
	case Level:
		level = v
	default:
		return Report{}, nil, fieldError(m, "level")
	}
	message, ok := m["message"].(string)
	if !ok {
		return Report{}, nil, fieldError(m, "message")
	}
	var source string
	switch v := m["source"].(type) {
	case string:
		source = v
	case nil: // missing or JSON null: absent
	default:
		return Report{}, nil, fieldError(m, "source")
	}
	return o.clean(level, message, source)
}

// fieldError explains why m[key] is not a string.
func fieldError(m map[string]any, key string) error {
	v, ok := m[key]
	switch {
	case !ok:
		return invalid("field %q is missing", key)
	case v == nil:
		return invalid("field %q is null, want string", key)
	default:
		return invalid("field %q is %T, want string", key, v)
	}
}

// clean checks the level, then cleans the texts.
func (o ParseOptions) clean(level Level, message, source string) (Report, Redacted, error) {
	if !level.Valid() {
		return Report{}, nil, invalid("level %s is not info, warning or error", quote(string(level)))
	}
	clean := o.Clean
	if clean == nil {
		clean = sanitizeOnly
	}
	msg, counts := clean(message, sanitize.MessageLimit)
	r := Report{Level: level, Message: msg}
	if blank(r.Message) {
		return Report{}, nil, invalid("message is blank after sanitizing")
	}
	src, sc := clean(source, sanitize.SourceLimit)
	if r.Source = src; blank(r.Source) {
		r.Source, sc = "", nil
	}
	return r, counts.Add(sc), nil
}

// sanitizeOnly is ParseOptions' default Clean.
func sanitizeOnly(s string, limit int) (string, Redacted) { return sanitize.Clean(s, limit), nil }

// quote quotes a child's text for an error message: ASCII only, so nothing
// in it can act on a terminal, and at most about 32 bytes of it.
func quote(s string) string {
	const max = 32
	if len(s) <= max {
		return strconv.QuoteToASCII(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.QuoteToASCII(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
