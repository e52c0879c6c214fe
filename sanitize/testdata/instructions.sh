#!/bin/sh
# Instructions per call of sanitize.Clean, and of norm's NFC pass alone
# beside it, on the 1 MiB inputs of the speed targets, counted by
# callgrind: wall time on a shared machine is noisy, instruction counts
# are not. Each benchmark runs for 2 and for 6 iterations, counting only
# inside Clean (or benchNFC, the NFC pass into a reused buffer), with the
# garbage collector off: its work lands in whichever call triggers it, and
# callgrind loses what runs on other goroutines. The difference over 4
# calls leaves out the one-time costs (table blocks, the composition
# table).
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
count() { # function benchmark iterations
	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null --toggle-collect="$1" "$bin" \
		-test.run '^$' -test.bench "^$2\$" -test.benchtime "$3x" 2>&1 |
		sed -n 's/.*Collected : //p'
}
pkg=github.com/diagrelay/diagrelay/sanitize
for b in ${BENCHMARKS:-BenchmarkHostileClean BenchmarkHostileNFC BenchmarkHostileMixClean \
	BenchmarkHostileMixNFC BenchmarkZalgoClean BenchmarkZalgoNFC BenchmarkCleanWordsASCII \
	BenchmarkCleanWordsCyrGreek BenchmarkCleanASCII BenchmarkCleanMixed}; do
	case $b in
	*NFC) f=$pkg.benchNFC ;;
	*) f=$pkg.Clean ;;
	esac
	x=$(count "$f" "$b" 2)
	y=$(count "$f" "$b" 6)
	echo "$b $(( (y - x) / 4 ))"
done
