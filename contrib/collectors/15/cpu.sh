#!/bin/sh
# cpu.sh: CPU time, interrupts and context switches from /proc/stat, in
# the tcollector convention (one "metric timestamp value tags" line per
# point on stdout; the runner appends them to MNT/tsd/put).
#
#   proc.stat.cpu         type=user|nice|system|idle|iowait|irq|softirq|
#                         steal|guest|guest_nice   (all CPUs, jiffies)
#   proc.stat.cpu.percpu  the same with cpu=N
#   proc.stat.intr, proc.stat.ctxt, proc.stat.processes,
#   proc.stat.procs_blocked
#
# The CPU values are counters: query them with rate, e.g.
#   start=1h-ago&m=sum:rate:proc.stat.cpu{type=*}
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
awk -v ts="$ts" -v host="$host" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
BEGIN {
	split("user nice system idle iowait irq softirq steal guest guest_nice",
	      type, " ")
	host = clean(host)
}
$1 == "cpu" {
	for (i = 2; i <= NF && i <= 11; i++)
		printf "proc.stat.cpu %s %s type=%s host=%s\n", ts, $i,
		       type[i - 1], host
	next
}
$1 ~ /^cpu[0-9]+$/ {
	n = substr($1, 4)
	for (i = 2; i <= NF && i <= 11; i++)
		printf "proc.stat.cpu.percpu %s %s type=%s cpu=%s host=%s\n",
		       ts, $i, type[i - 1], n, host
	next
}
$1 == "intr" || $1 == "ctxt" || $1 == "processes" || $1 == "procs_blocked" {
	printf "proc.stat.%s %s %s host=%s\n", $1, ts, $2, host
}
' /proc/stat
