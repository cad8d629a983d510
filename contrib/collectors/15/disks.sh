#!/bin/sh
# disks.sh: block device counters from /proc/diskstats, as tcollector's
# iostat collector names them, with dev=NAME (loop and ram devices are
# skipped).  All are counters (query with rate) but ios_in_progress.
#
#   iostat.disk.read_requests  read_merged  read_sectors  msec_read
#   iostat.disk.write_requests write_merged write_sectors msec_write
#   iostat.disk.ios_in_progress  msec_total  msec_weighted_total
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
awk -v ts="$ts" -v host="$host" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
BEGIN {
	split("read_requests read_merged read_sectors msec_read " \
	      "write_requests write_merged write_sectors msec_write " \
	      "ios_in_progress msec_total msec_weighted_total", name, " ")
	host = clean(host)
}
NF >= 14 && $3 !~ /^(loop|ram)[0-9]*$/ {
	dev = clean($3)
	for (i = 4; i <= 14; i++)
		printf "iostat.disk.%s %s %s dev=%s host=%s\n", name[i - 3], ts,
		       $i, dev, host
}
' /proc/diskstats
