package diag

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
