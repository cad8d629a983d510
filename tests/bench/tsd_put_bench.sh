#!/bin/sh
# tsd_put_bench.sh: runs tsd_put_bench against a fresh cellfs mount.
#
#   tests/bench/tsd_put_bench.sh [-n POINTS] [-s SERIES] [-b BYTES] [-c COMPRESSION] [-w WRITERS]
#
# Makes a data directory and a mount point under $TMPDIR (/tmp), mounts
# $CELLFS_BUILD/cellfs (default build/default) in the foreground, in the
# background of this script (CELLFS_DAEMON names another binary, to
# compare two versions; CELLFS_OPTS gives it -o options, e.g.
# tsd_recent=0 for the queries of the table), runs the program, and unmounts and removes
# both on exit, whatever happens (TSD_BENCH_KEEP=1 keeps the data
# directory, e.g. for tests/bench/tsblock_bench).  Defaults: 10M points
# over 1000 series (the issue's figures); `-n 200000 -s 1000` is the
# quick version.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CELLFS_BUILD:-$top/build/default}
. "$top/tests/bench/lib-mount.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/tsd-put-bench.XXXXXX") || exit 1
mnt=$dir/mnt
data=$dir/data
pid=
bpid=

cleanup() {
	test -z "$bpid" || kill "$bpid" 2>/dev/null
	bench_umount
	if test -n "${TSD_BENCH_KEEP:-}"; then
		echo "kept $dir (data/data/tsdb/*/t/*.sst: the store files)" >&2
	else
		rm -rf "$dir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$mnt" "$data" || exit 1
"${CELLFS_DAEMON:-$build/cellfs}" -f ${CELLFS_OPTS:+-o "$CELLFS_OPTS"} \
	"$data" "$mnt" 2>"$dir/cellfs.err" &
pid=$!
if ! bench_wait_mount; then
	echo "tsd_put_bench.sh: mount failed" >&2
	cat "$dir/cellfs.err" >&2
	exit 1
fi
echo "cellfs pid $pid (perf record -g -p $pid attaches to the daemon)"
# in the background, so that a signal to this script runs the traps now
"$build/tests/bench/tsd_put_bench" -p "$pid" "$@" "$mnt" "$data" &
bpid=$!
wait "$bpid"
rc=$?
bpid=
test $rc -eq 0 || tail -20 "$dir/cellfs.err" >&2
exit $rc
