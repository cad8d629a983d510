#!/bin/sh
# network.sh: interface counters from /proc/net/dev, as tcollector's
# netstat collector names them, with iface=NAME direction=in|out.  All
# are counters: query with rate, e.g.
#   start=1h-ago&m=sum:rate:proc.net.bytes{iface=*,direction=*}
#
#   proc.net.bytes  proc.net.packets  proc.net.errs  proc.net.dropped
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
awk -v ts="$ts" -v host="$host" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
function emit(m, v, dir) {
	printf "proc.net.%s %s %s iface=%s direction=%s host=%s\n", m, ts, v,
	       iface, dir, host
}
BEGIN { host = clean(host) }
NR > 2 {
	line = $0
	sub(/^[ \t]+/, "", line)
	colon = index(line, ":")
	if (colon == 0)
		next
	iface = clean(substr(line, 1, colon - 1))
	n = split(substr(line, colon + 1), f, " ")
	if (n < 16)
		next
	emit("bytes", f[1], "in");   emit("bytes", f[9], "out")
	emit("packets", f[2], "in"); emit("packets", f[10], "out")
	emit("errs", f[3], "in");    emit("errs", f[11], "out")
	emit("dropped", f[4], "in"); emit("dropped", f[12], "out")
}
' /proc/net/dev
