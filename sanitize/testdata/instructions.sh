#!/bin/sh
# Instructions per call of sanitize.Clean, and of norm's NFC pass alone
# (into a reused buffer, as Clean reuses its own) beside it, on the 1 MiB
# inputs of the speed targets, counted by callgrind: wall time on a shared
# machine is noisy, instruction counts are not. Each benchmark runs for 2
# and for 6 iterations, the whole program counted, with the garbage
# collector off; the difference over 4 calls leaves out everything done
# once (building the input, table blocks, the composition table). (Counts
# restricted to a function with --toggle-collect moved by up to 30 %
# between runs: Go's scheduler switches goroutines under callgrind, and
# with the collector on its work lands in whichever call triggers it.)
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
	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
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
