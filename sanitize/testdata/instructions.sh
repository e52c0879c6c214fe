#!/bin/sh
# Instructions per call of sanitize.Clean, and of norm's NFC pass alone
# beside it, on the 1 MiB inputs of the speed targets, counted by
# callgrind: wall time on a shared machine is noisy, instruction counts
# are not. Each benchmark runs for 2 and for 6 iterations and the whole
# program is counted (the garbage collector included: callgrind's
# per-function counts lose what runs on other goroutines); the difference
# over 4 calls leaves out the one-time costs (building the input, table
# blocks, the composition table).
# Needs valgrind. Run from sanitize/: sh testdata/instructions.sh [binary]
# (without a binary it builds the package's test binary), and
# go test -run TestSpeedInputs -v . for the inputs' sizes in bytes.
set -eu
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$(mktemp)
	trap 'rm -f "$bin"' EXIT
	go test -c -o "$bin" .
fi
count() { # benchmark iterations
	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$bin" \
		-test.run '^$' -test.bench "^$1\$" -test.benchtime "$2x" 2>&1 |
		sed -n 's/.*Collected : //p'
}
for b in ${BENCHMARKS:-BenchmarkHostileClean BenchmarkHostileNFC BenchmarkHostileMixClean \
	BenchmarkHostileMixNFC BenchmarkZalgoClean BenchmarkZalgoNFC BenchmarkCleanWordsASCII \
	BenchmarkCleanWordsCyrGreek BenchmarkCleanASCII BenchmarkCleanMixed}; do
	x=$(count "$b" 2)
	y=$(count "$b" 6)
	echo "$b $(( (y - x) / 4 ))"
done
