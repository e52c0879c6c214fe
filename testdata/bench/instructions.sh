#!/bin/sh
# Instructions per input byte of sanitize.Clean and ansi.Strip on the mixed
# 1 MiB input, counted by callgrind: wall time on a shared machine is
# noisy, instruction counts are not. Each function is counted for 2 and 6
# benchmark iterations; the difference, over 4 calls of 1,048,576 bytes,
# leaves out the one-time costs (table blocks, the first allocation).
# Needs valgrind. Run from this directory: sh instructions.sh
set -eu
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" .
count() { # function benchmark iterations
	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null --toggle-collect="$1" "$bin" \
		-test.run '^$' -test.bench "^$2\$" -test.benchtime "$3x" 2>&1 |
		sed -n 's/.*Collected : //p'
}
for pair in 'github.com/diagrelay/diagrelay/sanitize.Clean BenchmarkClean' \
	'github.com/charmbracelet/x/ansi.Strip BenchmarkAnsiStrip'; do
	set -- $pair
	a=$(count "$1" "$2" 2)
	b=$(count "$1" "$2" 6)
	echo "$2: $(echo "scale=2; ($b - $a) / 4 / 1048576" | bc) instructions/byte"
done
