#!/bin/sh
# load.sh: /proc/loadavg in the tcollector convention:
#   proc.loadavg.1min, proc.loadavg.5min, proc.loadavg.15min (floats),
#   proc.loadavg.runnable, proc.loadavg.total_threads
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
awk -v ts="$ts" -v host="$host" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
{
	host = clean(host)
	split($4, th, "/")
	printf "proc.loadavg.1min %s %s host=%s\n", ts, $1, host
	printf "proc.loadavg.5min %s %s host=%s\n", ts, $2, host
	printf "proc.loadavg.15min %s %s host=%s\n", ts, $3, host
	printf "proc.loadavg.runnable %s %s host=%s\n", ts, th[1], host
	printf "proc.loadavg.total_threads %s %s host=%s\n", ts, th[2], host
}
' /proc/loadavg
