#!/bin/sh
# Instructions per call of sanitize.Clean (and of norm's NFC pass beside
# it) on the 1 MiB inputs of the speed targets, counted by callgrind: wall
# time on a shared machine is noisy, instruction counts are not. Each
# benchmark runs for N1 and N2 iterations; the difference over N2-N1 calls
# leaves out the one-time costs (table blocks, the composition table).
# Needs valgrind. Run from sanitize/: sh testdata/instructions.sh [binary]
# (without a binary it builds the package's test binary).
set -eu
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$(mktemp)
	trap 'rm -f "$bin"' EXIT
	go test -c -o "$bin" .
fi
count() { # function benchmark iterations
	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null --toggle-collect="$1" "$bin" \
		-test.run '^$' -test.bench "^$2\$" -test.benchtime "$3x" 2>&1 |
		sed -n 's/.*Collected : //p'
}
clean=github.com/diagrelay/diagrelay/sanitize.Clean
nfc='golang.org/x/text/unicode/norm.Form.String'
for pair in "$clean BenchmarkHostileClean" "$nfc BenchmarkHostileNFC" \
	"$clean BenchmarkHostileMixClean" "$nfc BenchmarkHostileMixNFC" \
	"$clean BenchmarkZalgoClean" "$nfc BenchmarkZalgoNFC" \
	"$clean BenchmarkCleanWordsASCII" "$clean BenchmarkCleanWordsCyrGreek" \
	"$clean BenchmarkCleanASCII" "$clean BenchmarkCleanMixed"; do
	set -- $pair
	a=$(count "$1" "$2" 2)
	b=$(count "$1" "$2" 6)
	echo "$2 $(( (b - a) / 4 ))"
done
