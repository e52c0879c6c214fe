package sanitize

import (
	"os"
	"testing"
)

// Writes hostile input for the CLI measurement when DIAGRELAY_HOSTILE names a file.
func TestWriteHostileForCLI(t *testing.T) {
	path := os.Getenv("DIAGRELAY_HOSTILE")
	if path == "" {
		t.Skip("set DIAGRELAY_HOSTILE=file to write 16 MiB of hostile input")
	}
	if err := os.WriteFile(path, []byte(hostileInput(16<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
}
