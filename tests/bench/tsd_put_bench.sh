#!/bin/bash
# tsd_put_bench.sh: mounts a fresh data directory and runs tsd_put_bench
# on it (points appended through MNT/tsd/put, queries through MNT/tsd/q/,
# bytes per point after compaction).  Arguments go to tsd_put_bench:
#
#   tests/bench/tsd_put_bench.sh                  # 10M points, 1000 series
#   tests/bench/tsd_put_bench.sh -n 500000 -s 100 # quick
#
# CELLFS_BUILD picks the build (default build/default); CELLFS_OPTS the
# daemon's -o options (default sync=none, as the engine benchmarks run).
set -eu
BUILD=${CELLFS_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build/default}
OPTS=${CELLFS_OPTS:-sync=none}
W=$(mktemp -d /tmp/cellfs-tsdbench.XXXXXX)
mkdir "$W/mnt"
PID=
cleanup() {
	fusermount3 -u "$W/mnt" 2>/dev/null || fusermount3 -uz "$W/mnt" 2>/dev/null || :
	if [ -n "$PID" ]; then
		for _ in $(seq 600); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PID" 2>/dev/null || :
	fi
	rm -rf "$W"
}
trap cleanup EXIT
"$BUILD/cellfs" -f -o "$OPTS" "$W/data" "$W/mnt" 2>"$W/err" &
PID=$!
for _ in $(seq 100); do
	mountpoint -q "$W/mnt" && break
	sleep 0.1
done
mountpoint -q "$W/mnt" || { cat "$W/err" >&2; exit 1; }
echo "cellfs -o $OPTS, data in $W/data ($(df -T "$W" | awk 'NR==2 {print $2}'))"
"$BUILD/tests/bench/tsd_put_bench" "$@" "$W/mnt"
grep -E '^cellfs_tsd_(points|rows_compacted)' "$W/mnt/.stats" || :
echo "daemon peak RSS: $(awk '/VmHWM/ {print $2, $3}' /proc/$PID/status)"
