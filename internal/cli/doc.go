package cli

import (
	"fmt"
	"slices"
	"strings"
)

// Doc is the help of a command tree kept as text, so that every command's
// usage line, summary, description and exit codes read as one document and
// each command's Go file holds only its flags and what it runs.
//
// The text is a preamble (ignored), then a section a command:
//
//	[thread open]
//	usage: PATH [--json]
//	short: open a child runtime
//	exit: 0  done
//	exit: 2  usage error
//
//	The description, to the next section.
//
// The section's name is the command's path below the root. The fields come
// one a line, up to the first blank line; exit repeats, one line of the
// exit codes each, kept as written after "exit: ".
type Doc struct {
	texts map[string]*docText
	order []string
}

type docText struct {
	usage, short, long string
	exit               []string
}

// ParseDoc parses src; a field it does not know, a section given twice or a
// field before the first section is an error.
func ParseDoc(src string) (*Doc, error) {
	d := &Doc{texts: map[string]*docText{}}
	var cur *docText
	var long []string
	inFields := false
	flush := func() {
		if cur != nil {
			cur.long = strings.TrimRight(strings.Join(long, "\n"), "\n")
		}
	}
	for i, line := range strings.Split(src, "\n") {
		if name, ok := strings.CutPrefix(line, "["); ok && strings.HasSuffix(name, "]") {
			flush()
			name = strings.TrimSuffix(name, "]")
			if d.texts[name] != nil {
				return nil, fmt.Errorf("line %d: [%s] again", i+1, name)
			}
			cur, long, inFields = &docText{}, nil, true
			d.texts[name] = cur
			d.order = append(d.order, name)
			continue
		}
		switch {
		case cur == nil: // the preamble
		case inFields && line == "":
			inFields = false
		case inFields:
			key, value, ok := strings.Cut(line, ": ")
			switch {
			case !ok:
				return nil, fmt.Errorf("line %d: want \"field: value\", have %q", i+1, line)
			case key == "usage":
				cur.usage = value
			case key == "short":
				cur.short = value
			case key == "exit":
				cur.exit = append(cur.exit, value)
			default:
				return nil, fmt.Errorf("line %d: no field %q", i+1, key)
			}
		default:
			long = append(long, line)
		}
	}
	flush()
	return d, nil
}

// MustParseDoc is ParseDoc for a text built into the program: an error is
// a bug, and panics.
func MustParseDoc(src string) *Doc {
	d, err := ParseDoc(src)
	if err != nil {
		panic("cli: " + err.Error())
	}
	return d
}

// Command returns a new command named by path's last word, with path's
// usage, summary, description and exit codes; a path with no section
// panics, as a command without help is a bug.
func (d *Doc) Command(path string) *Command {
	t := d.texts[path]
	if t == nil {
		panic(fmt.Sprintf("cli: no help for %q", path))
	}
	words := strings.Fields(path)
	return &Command{
		Name:  words[len(words)-1],
		Usage: t.usage,
		Short: t.short,
		Long:  t.long,
		Exit:  slices.Clone(t.exit),
	}
}

// Paths lists the sections' paths in the order of the text.
func (d *Doc) Paths() []string { return d.order }
