#!/bin/sh
# tsd_real_bench.sh: bytes a point of real machine metrics under each
# block codec of tsdb (docs/timeseries_performance.md, "A second data set").
#
#   tests/bench/tsd_real_bench.sh [-s SECONDS] [-f FILE] [-k FILE]
#
# The data: every collector of contrib/collectors/15/ (CPU, disks, load,
# memory, network from /proc, tcollector's names) run once a second for
# SECONDS (default 1800) on this machine, their timestamps moved back one
# day so that every hour is over (and compacts); -k FILE keeps those put
# lines, -f FILE uses lines kept before instead of sampling.  Then, for
# each family line of tsdb in turn (SNAPPY, ZSTD, ZSTD with
# ENCODING=TSDB, and that in 256 KiB blocks: the table tsd/ makes), a
# fresh mount of $CELLFS_BUILD/cellfs (default
# build/default) takes the lines through MNT/tsd/put, every metric is
# dumped (which compacts each hourly row), tsdb is flushed and
# major-compacted, and the size of its store files over the points is
# printed.  Everything is made under /tmp and removed on exit.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CELLFS_BUILD:-$top/build/default}
. "$top/tests/bench/lib-mount.sh"
secs=1800
file=
keep=
while getopts s:f:k: o; do
	case $o in
	s) secs=$OPTARG ;;
	f) file=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) echo "usage: $0 [-s SECONDS] [-f FILE] [-k FILE]" >&2; exit 2 ;;
	esac
done
dir=$(mktemp -d /tmp/tsd-real-bench.XXXXXX) || exit 1
mnt=$dir/mnt
pid=

cleanup() {
	bench_umount
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if test -z "$file"; then
	file=$dir/lines
	echo "sampling contrib/collectors/15/* once a second for $secs s" >&2
	i=0
	while test $i -lt "$secs"; do
		next=$(($(date +%s) + 1))
		for c in "$top"/contrib/collectors/15/*.sh; do
			COLLECTOR_HOST=bench sh "$c" 2>/dev/null
		done | awk '{ $2 -= 86400; print }' >>"$file"
		i=$((i + 1))
		while test "$(date +%s)" -lt $next; do
			sleep 0.05
		done
	done
	test -z "$keep" || cp "$file" "$keep"
fi
# a point: one (metric, time, tags); a collector run that falls in the
# same second as the one before writes over its points
points=$(cut -d " " -f 1,2,4- "$file" | sort -u | wc -l)
series=$(cut -d " " -f 1,4- "$file" | sort -u | wc -l)
metrics=$(cut -d " " -f 1 "$file" | sort -u)
echo "data: $(wc -l <"$file") lines, $points points, $series series, $(echo "$metrics" | wc -l) metrics, $(awk 'NR == 1 { a = $2 } { b = $2 } END { print b - a + 1 }' "$file") s"

run() {
	data=$dir/data.$1
	mkdir -p "$mnt" "$data" || return 1
	"$build/cellfs" -f "$data" "$mnt" 2>>"$dir/cellfs.err" &
	pid=$!
	bench_wait_mount || return 1
	mkdir "$mnt/tsdb" &&
	printf "t COMPRESSION=%s\n" "$2" >"$mnt/tsdb/.schema" &&
	cat "$file" >>"$mnt/tsd/put" &&
	for m in $metrics; do
		cat "$mnt/tsd/metrics/$m" >/dev/null || return 1
	done &&
	echo flush >"$mnt/tsdb/.ctl" &&
	echo major_compact >"$mnt/tsdb/.ctl" &&
	bytes=$(cat "$data"/data/tsdb/*/t/*.sst | wc -c) &&
	printf "%-34s %12d bytes %8.3f bytes/point\n" "t COMPRESSION=$2" \
		"$bytes" "$(echo "$bytes $points" | awk '{ print $1 / $2 }')"
	bench_umount
}

run snappy SNAPPY &&
run zstd ZSTD &&
run tsdb "ZSTD ENCODING=TSDB" &&
run tsdb256 "ZSTD ENCODING=TSDB BLOCKSIZE=262144"
