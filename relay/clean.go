package relay

import (
	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/redact"
)

// parseOptions is how this Manager cleans a report: sanitized, secrets
// redacted, then cut (docs/redaction.md), unless Config.NoRedaction, where
// only sanitized. Redaction is the relay's step, not diag's, so that the
// packages that hold a Report do not link the secret scanner.
func (m *Manager) parseOptions() diag.ParseOptions {
	if m.noRedaction {
		return diag.ParseOptions{}
	}
	return diag.ParseOptions{Clean: redact.Clean}
}
