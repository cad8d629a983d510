#!/bin/sh
# memory.sh: /proc/meminfo in the tcollector convention, one point per
# field, in bytes: proc.meminfo.memtotal, proc.meminfo.memfree,
# proc.meminfo.cached, proc.meminfo.active_anon, ...  (field names in
# lower case, other characters turned into '_').
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
awk -v ts="$ts" -v host="$host" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
BEGIN { host = clean(host) }
NF >= 2 {
	name = $1
	sub(/:$/, "", name)
	name = tolower(name)
	gsub(/[()]/, "_", name)
	sub(/_$/, "", name)
	name = clean(name)
	v = $2
	if ($3 == "kB")
		v = v * 1024
	printf "proc.meminfo.%s %s %.0f host=%s\n", name, ts, v, host
}
' /proc/meminfo
