package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/diagrelay/diagrelay/sanitize"
)

// sanitizeHelp: the filter streams, a record is never held whole, so a
// 100 MB line takes a few hundred KiB.
var sanitizeHelp = help{
	Usage: "sanitize [--source] [--limit N] [-z]",
	Short: "clean stdin line by line as reports are cleaned",
	Long: `
Cleans each line of stdin (each NUL-ended record with -z) as diagnostics are
cleaned: escape sequences, controls and invisible characters removed,
whitespace flattened, NFC, the length limit. Writes one line (record) per
input line to stdout; the last gets its terminator even if the input lacked it.`,
	Exit: []string{"0  the input ended", "1  a read or write error", "2  usage error"},
}

func runSanitize(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("sanitize", stderr, &sanitizeHelp)
	source := fs.Bool("source", false, "apply the source-name limit ("+strconv.Itoa(sanitize.SourceLimit)+") instead of the message limit")
	limit := fs.Int("limit", sanitize.MessageLimit, "cut each record to `N` UTF-16 code units (0: no limit); overrides --source")
	nul := fs.Bool("z", false, "records end with NUL instead of newline, in and out")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "diagrelay sanitize: unexpected argument %s\n", strconv.QuoteToASCII(fs.Arg(0)))
		fs.Usage()
		return 2
	}
	n := *limit
	limitSet := false
	fs.Visit(func(f *flag.Flag) { limitSet = limitSet || f.Name == "limit" })
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
	if err := filter(stdin, stdout, n, delim); err != nil {
		fmt.Fprintln(stderr, "diagrelay sanitize:", err)
		return 1
	}
	return 0
}

// filter copies records from in to out through a sanitize.Writer. Memory is
// the two 64 KiB buffers and what the Writer holds (bounded by the limit,
// or by one NFC segment without a limit).
func filter(in io.Reader, out io.Writer, limit int, delim byte) error {
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriterSize(out, 64<<10)
	sw := sanitize.NewWriter(bw, limit)
	pending := false // a record has begun and not ended
	for {
		chunk, err := br.ReadSlice(delim)
		ended := err == nil // chunk ends with delim
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 || ended {
			pending = true
			if _, werr := sw.Write(chunk); werr != nil {
				return werr
			}
		}
		if ended || err == io.EOF && pending {
			pending = false
			if werr := sw.Close(); werr != nil {
				return werr
			}
			if werr := bw.WriteByte(delim); werr != nil {
				return werr
			}
			// Keep an interactive pipe moving: flush when the next read
			// may block.
			if br.Buffered() == 0 {
				if werr := bw.Flush(); werr != nil {
					return werr
				}
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return bw.Flush()
		default:
			bw.Flush()
			return fmt.Errorf("reading: %w", err)
		}
	}
}
