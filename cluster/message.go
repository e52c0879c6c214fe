package cluster

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/diagrelay/diagrelay/diag"
	"github.com/diagrelay/diagrelay/threadpath"
)

// reportMsg is the body of a message on ReportSubject.<edge>: one report an
// edge's gate admitted. The edge comes from the subject, never the body.
type reportMsg struct {
	V       int       `json:"v"`
	Token   string    `json:"token"` // the hex SHA-256 of the child's token: which claim it came under
	Path    string    `json:"path"`
	Level   string    `json:"level"`
	Source  string    `json:"source,omitempty"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// countsMsg is the body of a message on CountsSubject.<edge>: an edge's
// running totals for a thread since its process started (Boot).
type countsMsg struct {
	V        int           `json:"v"`
	Token    string        `json:"token"`
	Path     string        `json:"path"`
	Boot     string        `json:"boot"`
	Dropped  diag.Dropped  `json:"dropped"`
	Redacted diag.Redacted `json:"redacted,omitempty"`
}

const msgVersion = 1

func encodeMsg(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return b
}

// edgeOf returns the edge named by a message's subject, prefix.<edge>.
func edgeOf(subject, prefix string) (string, bool) {
	name, ok := strings.CutPrefix(subject, prefix+".")
	return name, ok && ValidName(name)
}

func (m *reportMsg) head() (int, string, string) { return m.V, m.Token, m.Path }
func (m *countsMsg) head() (int, string, string) { return m.V, m.Token, m.Path }

// decodeMsg decodes a message body of what kind into m and checks what
// every kind carries: the version, the token's hash, a thread path.
func decodeMsg[M interface{ head() (int, string, string) }](b []byte, what string, m M) ([32]byte, error) {
	var h [32]byte
	if len(b) > maxMessageBytes {
		return h, fmt.Errorf("cluster: %s of %d bytes", what, len(b))
	}
	if err := json.Unmarshal(b, m); err != nil {
		return h, fmt.Errorf("cluster: %s: %w", what, err)
	}
	v, token, path := m.head()
	if v != msgVersion {
		return h, fmt.Errorf("cluster: %s version %d, this diagrelay reads %d", what, v, msgVersion)
	}
	if err := decodeHash(token, &h); err != nil {
		return h, err
	}
	if err := threadpath.Validate(path); err != nil {
		return h, fmt.Errorf("cluster: %s: %w", what, err)
	}
	return h, nil
}

// decodeReport decodes a report message; its text is parsed again on
// delivery (relay.DeliverRemote).
func decodeReport(b []byte) (reportMsg, [32]byte, error) {
	var m reportMsg
	h, err := decodeMsg(b, "report", &m)
	return m, h, err
}

// decodeCounts decodes a counts message.
func decodeCounts(b []byte) (countsMsg, [32]byte, error) {
	var m countsMsg
	h, err := decodeMsg(b, "counts", &m)
	if err != nil {
		return m, h, err
	}
	if !ValidName(m.Boot) {
		return m, h, fmt.Errorf("cluster: counts: boot %q", m.Boot)
	}
	if len(m.Redacted) == 0 {
		m.Redacted = nil // {} and absent are the same: none redacted
	}
	for id, n := range m.Redacted {
		if n < 0 || !ValidName(strings.ReplaceAll(id, ".", "_")) {
			return m, h, fmt.Errorf("cluster: counts: redacted rule %q: %d", id, n)
		}
	}
	return m, h, nil
}

func decodeHash(s string, h *[32]byte) error {
	if len(s) != 64 {
		return fmt.Errorf("cluster: token hash of %d characters, not 64", len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return fmt.Errorf("cluster: token hash: %w", err)
	}
	return nil
}
