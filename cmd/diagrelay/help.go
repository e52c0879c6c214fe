package main

import (
	_ "embed"

	"github.com/diagrelay/diagrelay/internal/cli"
)

// helpText is every command's usage line, summary, description and exit
// codes, as one document (its format: cli.Doc).
//
//go:embed help.txt
var helpText string

var help = cli.MustParseDoc(helpText)
