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
	c := help.Command("sanitize")
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
