#!/bin/sh
# The newcomer's path: a fresh clone of REPO, a fresh HOME, no
# XDG_RUNTIME_DIR, and the README's commands in the README's order: the
# install, the two set-up commands (the tests lighter: one package), the
# shell quick start as it is written, the shell extension snippet, and a
# line of each row of the commands table. The Go snippet and the
# TypeScript snippets have tests of their own (TestREADMEGoSnippets,
# clients/js/test/examples.test.js).
#
# Usage: sh cmd/diagrelay/testdata/newcomer.sh [REPO]   (default: .)
# It prints each step and exits non-zero at the first that fails.
set -eu

repo=$(cd "${1:-.}" && pwd)
# The module and build caches are kept: what they hold is not the
# newcomer's state, only time (the first build without them takes ~100 s).
GOMODCACHE=$(go env GOMODCACHE)
GOCACHE=$(go env GOCACHE)
export GOMODCACHE GOCACHE

work=$(mktemp -d "${TMPDIR:-/tmp}/drnew.XXXXXX")
serve_pid=""
watch_pid=""
cleanup() {
	[ -z "$watch_pid" ] || kill "$watch_pid" 2>/dev/null || true
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

export HOME="$work/home"
mkdir -p "$HOME"
unset XDG_RUNTIME_DIR XDG_STATE_HOME XDG_CONFIG_HOME DIAGRELAY_SOCKET DIAGRELAY_TOKEN DIAGRELAY_BIN
export GOBIN="$work/bin"
export PATH="$GOBIN:$PATH"

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# readme_block HEADING N: the Nth (from 1) ```sh block after the line HEADING.
readme_block() {
	awk -v heading="$1" -v n="$2" '
		$0 == heading { on = 1; next }
		on && /^```sh$/ { k++; if (k == n) { inside = 1; next } }
		inside && /^```$/ { exit }
		inside { print }
	' README.md
}

step "git clone (fresh)"
git clone --quiet "$repo" "$work/clone"
cd "$work/clone"

step "go install ./cmd/diagrelay"
go install ./cmd/diagrelay
[ "$(command -v diagrelay)" = "$GOBIN/diagrelay" ] || fail "diagrelay is not on PATH from GOBIN"

step "go run ./cmd/diagrelay demo"
go run ./cmd/diagrelay demo >"$work/demo.out"
grep -q '^diagrelay demo: what a parent session sees' "$work/demo.out" || fail "demo: $(head -3 "$work/demo.out")"
head -2 "$work/demo.out"

step "go test (one package, not ./...)"
go test ./internal/cli

step "the quick start, as the README writes it"
readme_block "## Try it from a shell" 1 >"$work/quickstart.sh"
[ -s "$work/quickstart.sh" ] || fail "no quick start block in README.md"
cat "$work/quickstart.sh"
socket="$HOME/.local/state/diagrelay/diagrelay.sock"
# Run line by line in this shell (eval's exports must last): after serve,
# wait for its socket; watch has no terminal here, so it prints lines,
# to a file, until serve stops.
sed 's/[[:space:]]*#.*$//' "$work/quickstart.sh" >"$work/quickstart.lines"
while IFS= read -r line; do
	[ -n "$line" ] || continue
	printf '$ %s\n' "$line"
	case "$line" in
	"diagrelay serve &")
		diagrelay serve 2>"$work/serve.log" &
		serve_pid=$!
		i=0
		until [ -S "$socket" ]; do
			i=$((i + 1))
			[ "$i" -lt 200 ] || fail "no socket at $socket: $(cat "$work/serve.log")"
			sleep 0.05
		done
		;;
	"diagrelay watch"*)
		eval "$line" >"$work/watch.out" 2>&1 &
		watch_pid=$!
		# watch subscribes before it prints the list: once the list is
		# out, every later event reaches it.
		i=0
		until grep -q '^thread /root/scout ' "$work/watch.out" 2>/dev/null; do
			i=$((i + 1))
			[ "$i" -lt 400 ] || fail "watch printed no list: $(cat "$work/watch.out")"
			sleep 0.05
		done
		;;
	*)
		eval "$line"
		;;
	esac
done <"$work/quickstart.lines"
[ "$DIAGRELAY_SOCKET" = "$socket" ] || fail "thread open gave DIAGRELAY_SOCKET=$DIAGRELAY_SOCKET, want $socket"

step "the shell extension snippet, hosted and not"
readme_block "**Shell**, in a child process started with \`DIAGRELAY_SOCKET\` and \`DIAGRELAY_TOKEN\`:" 1 >"$work/child.sh"
[ -s "$work/child.sh" ] || fail "no shell snippet in README.md"
sh "$work/child.sh" 2>"$work/child.err"
[ ! -s "$work/child.err" ] || fail "hosted, the snippet fell back: $(cat "$work/child.err")"
env -u DIAGRELAY_SOCKET -u DIAGRELAY_TOKEN sh "$work/child.sh" 2>"$work/child.err"
grep -q 'lint: warning: eslint not found on PATH' "$work/child.err" || fail "not hosted, no fallback"
diagrelay thread status /root/scout | tee "$work/status.out"
grep -q 'diagnostics  1' "$work/status.out" || fail "the snippet's report was not a duplicate of the quick start's"
grep -q 'dropped      1 duplicate' "$work/status.out" || fail "the duplicate was not counted"

step "the commands table, a line each"
diagrelay help >/dev/null
for c in serve thread report probe watch demo mailbox sanitize version; do
	diagrelay help "$c" >/dev/null || fail "help $c"
done
diagrelay thread list --json | grep -q '"path":"/root/scout"' || fail "thread list --json"
diagrelay probe >/dev/null || fail "probe while hosted"
diagrelay thread open /root/scout/lint --parent /root/scout --json | grep -q '"generation":1' || fail "thread open --json"
diagrelay thread close /root/scout
if diagrelay probe 2>/dev/null; then fail "probe after thread close"; fi
[ "$(printf 'a\033[31mb\n' | diagrelay sanitize)" = "ab" ] || fail "sanitize"
diagrelay version
[ "$(diagrelay -v)" = "$(diagrelay --version)" ] || fail "-v is not --version"
diagrelay demo --json | head -c 1 | grep -q '{' || fail "demo --json"
if diagrelay report --level WARN x 2>"$work/usage.err"; then fail "report --level WARN"; fi
cat "$work/usage.err"
[ "$(wc -l <"$work/usage.err")" -eq 2 ] || fail "a usage error is more than one line and the pointer"

step "stop serve: watch ends, the mailbox checks clean"
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve did not stop cleanly: $(cat "$work/serve.log")"
serve_pid=""
wait "$watch_pid" || fail "watch did not end with serve"
watch_pid=""
# watch started after the quick start's report: the list shows it, and
# the snippet's duplicate came as an event.
grep -q '^thread /root/scout open gen 1 diagnostics 1' "$work/watch.out" || fail "watch: $(cat "$work/watch.out")"
grep -q ' dropped /root/scout duplicate$' "$work/watch.out" || fail "watch: $(cat "$work/watch.out")"
diagrelay mailbox check
if diagrelay thread list 2>"$work/down.err"; then fail "thread list with no serve"; fi
grep -q "start one with 'diagrelay serve'" "$work/down.err" || fail "no serve: $(cat "$work/down.err")"
cat "$work/down.err"

printf '\nnewcomer path: every step passed\n'
