package diag

import "github.com/diagrelay/diagrelay/sanitize"

// Topic is the child-bus topic on which extensions emit reports. The name is
// kept identical to the original's for parity.
const Topic = "pi-subagent-manager:diagnostic"

// Level is a report's severity: exactly one of Info, Warning or Error.
type Level string

const (
	Info    Level = "info"
	Warning Level = "warning"
	Error   Level = "error"
)

// Report is one diagnostic from a child extension. Only these fields are
// forwarded; attribution comes from the bus that carried the report, never
// from the report itself.
type Report struct {
	Level   Level
	Message string
	Source  string
}

// The most bytes a sanitized text can take: a UTF-16 code unit is at most 3
// bytes of UTF-8 (a 4-byte character is 2 units). Gate.Admit refuses longer
// texts, which bounds what a Gate keeps even for a report that skipped Parse.
const (
	maxMessageBytes = 3 * sanitize.MessageLimit
	maxSourceBytes  = 3 * sanitize.SourceLimit
)

// Valid reports whether l is exactly Info, Warning or Error.
func (l Level) Valid() bool { return l.Severity() != 0 }

// Severity orders levels: 1 for Info, 2 for Warning, 3 for Error, and 0 for
// anything else, so that an invalid level is never the most severe.
func (l Level) Severity() int {
	switch l {
	case Info:
		return 1
	case Warning:
		return 2
	case Error:
		return 3
	}
	return 0
}

// levelCode is a Level in one byte, as a Gate stores it; 0 is invalid.
type levelCode uint8

func (l Level) code() levelCode { return levelCode(l.Severity()) }
