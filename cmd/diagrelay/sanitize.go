package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/diagrelay/diagrelay/internal/filter"
	"github.com/diagrelay/diagrelay/sanitize"
)

// sanitizeHelp: the filter streams, a record is never held whole, so a
// 100 MB line takes a few hundred KiB.
var sanitizeHelp = help{
	Usage: "sanitize [--source] [--limit N] [-z] [--redact]",
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

func runSanitize(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("sanitize", stderr, &sanitizeHelp)
	source := fs.Bool("source", false, "apply the source-name limit ("+strconv.Itoa(sanitize.SourceLimit)+") instead of the message limit")
	limit := fs.Int("limit", sanitize.MessageLimit, "cut each record to `N` UTF-16 code units (0: no limit); overrides --source")
	nul := fs.Bool("z", false, "records end with NUL instead of newline, in and out")
	redacting := fs.Bool("redact", false, "also replace secrets with [REDACTED:<rule-id>], then cut (holds each record, up to "+strconv.Itoa(filter.MaxRedactedRecord)+" units)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay sanitize: unexpected argument %s\n", strconv.QuoteToASCII(fs.Arg(0)))
		fs.Usage()
		return 2
	}
	n := *limit
	limitSet := flagSet(fs, "limit")
	switch {
	case n < 0:
		fmt.Fprintf(stderr, "diagrelay sanitize: --limit %d: must be 0 (no limit) or more\n", n)
		fs.Usage()
		return 2
	case !limitSet && *source:
		n = sanitize.SourceLimit
	}
	delim := byte('\n')
	if *nul {
		delim = 0
	}
	run := filter.Records
	if *redacting {
		run = filter.RedactedRecords
	}
	if err := run(stdin, stdout, n, delim); err != nil {
		fmt.Fprintln(stderr, "diagrelay sanitize:", err)
		return 1
	}
	return 0
}
