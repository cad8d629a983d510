#!/bin/sh
# tsd_net_bench.sh: runs tsd_net_bench.py against a fresh cellfs mount
# with its HTTP and telnet ports on free ports of 127.0.0.1.
#
#   tests/bench/tsd_net_bench.sh [-n POINTS] [-s SERIES]
#
# Mounts $CELLFS_BUILD/cellfs (default build/default) in the foreground,
# in the background of this script, under a directory of /tmp, and
# unmounts and removes it on exit, whatever happens.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CELLFS_BUILD:-$top/build/default}
. "$top/tests/bench/lib-mount.sh"
client="python3 $top/tests/tsd_client.py"
dir=$(mktemp -d /tmp/tsd-net-bench.XXXXXX) || exit 1
mnt=$dir/mnt
pid=

cleanup() {
	bench_umount
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$mnt" || exit 1
hp=$($client port) && tp=$($client port) || exit 1
"$build/cellfs" -f -o "tsd_http=$hp,tsd_telnet=$tp" "$dir/data" "$mnt" \
	2>"$dir/cellfs.err" &
pid=$!
$client wait "$hp" && $client wait "$tp" || {
	cat "$dir/cellfs.err" >&2
	exit 1
}
python3 "$top/tests/bench/tsd_net_bench.py" "$mnt" "$hp" "$tp" "$@"
