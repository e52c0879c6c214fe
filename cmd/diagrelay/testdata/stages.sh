#!/bin/sh
# stages.sh BIN PROFILE REPORTS: CPU per stage (µs/report, share) from a serve CPU profile
bin=$1 prof=$2 n=$3
total=$(go tool pprof -top -nodecount=1 $bin $prof 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)\(m\?s\).*/\1 \2/p')
tot=$(echo $total | awk '{print ($2=="ms")?$1/1000:$1}')
stage() {
  s=$(go tool pprof -top -nodecount=100000 -focus="$2" ${3:+-ignore="$3"} $bin $prof 2>/dev/null | sed -n 's/.*accounting for \([0-9.]*\)\(m\?s\),.*/\1 \2/p' | awk '{print ($2=="ms")?$1/1000:$1}')
  awk -v name="$1" -v s="${s:-0}" -v t="$tot" -v n="$n" 'BEGIN{printf "%-44s %6.2fs %5.1f%% %6.1f µs/report\n", name, s, 100*s/t, 1e6*s/n}'
}
stage "socket read + framing (frameReader.next)" 'frameReader\).next'
stage "strict parsing (decodeRequest)" 'service.decodeRequest'
stage "report params + sanitize (diag.Parse*)" 'diag\.Parse' 'redact\.'
stage "redaction (redact.*)" 'redact\.'
stage "gate (diag.Gate)" 'diag\.\(\*Gate\)'
stage "commit (mailbox runBatch: bbolt)" 'mailbox\.\(\*Store\)\.runBatch'
stage "read-back (readBack.check)" 'readBack\)\.check'
stage "rest of Post (encode, verify, queue)" 'mailbox\.\(\*Store\)\.Post' 'runBatch|readBack'
stage "notification (relay offer/notify)" 'offerNotification|relay.*[Nn]otif'
stage "events (service events)" 'service.*[Ee]vent'
stage "reply encode + write (encodeReply, writer)" 'encodeReply|\(\*conn\)\.writer'
stage "accept + newConn + pending" 'service.\(\*Server\)\.Serve$|newConn|acceptPeer|addPending'
stage "hello" 'service.\(\*conn\)\.hello'
stage "host: runtime.open (ServeHost)" 'ServeHost'
stage "peerGone polls" 'service.peerGone'
stage "GC (background + assists)" 'gcBgMarkWorker|deductAssistCredit|gcAssist|bgsweep|bgscavenge'
stage "scheduler (mcall/schedule)" 'runtime.mcall|runtime.schedule|runtime.findRunnable'
echo "total ${tot}s over $n reports: $(awk -v t=$tot -v n=$n 'BEGIN{printf "%.1f", 1e6*t/n}') µs/report"
