package main

import (
	"strconv"

	"github.com/diagrelay/diagrelay/internal/cli"
	"github.com/diagrelay/diagrelay/internal/filter"
	"github.com/diagrelay/diagrelay/sanitize"
)

// sanitizeCommand: the filter streams, a record is never held whole, so a
// 100 MB line takes a few hundred KiB.
func sanitizeCommand() *cli.Command {
	c := &cli.Command{
		Name:  "sanitize",
		Usage: "[--source] [--limit N] [-z] [--redact]",
		Short: "clean stdin line by line as reports are cleaned",
		Long: `
Cleans each line of stdin (each NUL-ended record with -z) as diagnostics are
cleaned: escape sequences, controls and invisible characters removed,
whitespace flattened, NFC, the length limit. Writes one line (record) per
input line to stdout; the last gets its terminator even if the input lacked it.
With --redact, secrets are redacted too, as the service redacts reports
(docs/redaction.md): each record is then held, up to 1048576 units.`,
		Exit: []string{"0  the input ended", "1  a read or write error", "2  usage error"},
	}
	source := c.Flag.Bool("source", false, "apply the source-name limit ("+strconv.Itoa(sanitize.SourceLimit)+") instead of the message limit")
	limit := c.Flag.Int("limit", sanitize.MessageLimit, "cut each record to `N` UTF-16 code units (0: no limit); overrides --source")
	nul := c.Flag.Bool("z", false, "records end with NUL instead of newline, in and out")
	redacting := c.Flag.Bool("redact", false, "also replace secrets with [REDACTED:<rule-id>], then cut (holds each record, up to "+strconv.Itoa(filter.MaxRedactedRecord)+" units)")
	c.Run = func(s *cli.IO, _ []string) error {
		n := *limit
		switch {
		case n < 0:
			return cli.Usagef("--limit %d: must be 0 (no limit) or more", n)
		case !c.FlagGiven("limit") && *source:
			n = sanitize.SourceLimit
		}
		delim := byte('\n')
		if *nul {
			delim = 0
		}
		if *redacting {
			return filter.RedactedRecords(s.In, s.Out, n, delim)
		}
		return filter.Records(s.In, s.Out, n, delim)
	}
	return c
}
