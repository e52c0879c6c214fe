module github.com/diagrelay/diagrelay/testdata/bench

go 1.26.7

require (
	github.com/charmbracelet/x/ansi v0.11.9
	github.com/diagrelay/diagrelay v0.0.0
	golang.org/x/text v0.44.0
)

require (
	github.com/clipperhouse/displaywidth v0.11.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/lucasb-eyer/go-colorful v1.4.1 // indirect
	github.com/mattn/go-runewidth v0.0.30 // indirect
)

replace github.com/diagrelay/diagrelay => ../..
