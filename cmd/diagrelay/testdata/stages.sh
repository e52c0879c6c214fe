#!/bin/sh
# stages.sh BIN PROFILE REPORTS: serve's CPU by stage (µs/report, share) from
# a CPU profile (DIAGRELAY_PROFILE, docs/performance.md "The cost of a
# report"). A stage is every sample with one of its functions on the stack
# (pprof -focus), so stages may overlap a little. The names before and
# after the move of the framing to internal/jsonframe are both matched.
bin=$1 prof=$2 n=$3
secs() { awk '{print ($2=="ms")?$1/1000:$1}'; }
tot=$(go tool pprof -top -nodecount=1 "$bin" "$prof" 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)\(m\?s\).*/\1 \2/p' | secs)
stage() {
  s=$(go tool pprof -top -nodecount=100000 -focus="$2" "$bin" "$prof" 2>/dev/null | sed -n 's/.*accounting for \([0-9.]*\)\(m\?s\),.*/\1 \2/p' | secs)
  awk -v name="$1" -v s="${s:-0}" -v t="$tot" -v n="$n" 'BEGIN{printf "%-52s %5.2fs %5.1f%% %5.1f µs/report\n", name, s, 100*s/t, 1e6*s/n}'
}
stage "GC (background marking, assists, sweeping)" 'gcBgMarkWorker|deductAssistCredit|gcAssist|bgsweep|bgscavenge'
stage "socket read and framing" 'frameReader\).next|jsonframe\.\(\*Reader\)\.Next'
stage "strict parsing of the frame" 'service\.decodeRequest|jsonframe\.Decode$'
stage "report params decoding" 'service\.decodeParams|jsonframe\.DecodeParams'
stage "parse, sanitize and redact (diag.Parse*)" 'diag\.Parse'
stage "  of which redaction" 'redact\.'
stage "gate" 'diag\.\(\*Gate\)'
stage "commit (log frames, write, fdatasync, read-back)" 'mailbox\.\(\*Store\)\.runBatch'
stage "  of which the system calls" 'mailbox\.\(\*logFile\)\.append'
stage "checkpoint into bbolt (background)" 'mailbox\.\(\*Store\)\.checkpointNow|mailbox\.writeCheckpoint'
stage "Post as a whole (commit and read-back included)" 'mailbox\.\(\*Store\)\.Post'
stage "notification" 'offerNotification|relay\..*[Nn]otif'
stage "reply: encode and write" 'encodeReply|\(\*conn\)\.writer|\(\*conn\)\.writeNow'
stage "accept and the new connection" 'service\.\(\*Server\)\.Serve$|newConn|acceptPeer|addPending'
stage "hello" 'service\.\(\*conn\)\.hello'
stage "host: runtime.open (ServeHost)" 'ServeHost'
stage "peerGone polls before reads" 'service\.peerGone|peercred\.PeerGone'
stage "scheduler" 'runtime\.mcall|runtime\.schedule$|runtime\.findRunnable'
awk -v t="$tot" -v n="$n" 'BEGIN{printf "total %.2fs over %d reports: %.1f µs/report\n", t, n, 1e6*t/n}'
