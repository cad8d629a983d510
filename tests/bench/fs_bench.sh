#!/bin/sh
# fs_bench.sh [-q] [BUILD_DIR]: the filesystem benchmark (issue #5).
#
# Mounts a fresh cellfs (data directory under /tmp), memfs (the minimal
# FUSE filesystem of tests/bench/memfs.c: the floor of any FUSE
# filesystem on this kernel) and a tmpfs (root only), runs fs_bench on
# each with the same arguments, prints a table per target and the ratio
# tables cellfs/memfs, cellfs/tmpfs.  The targets take turns, PASSES
# times (a fresh mount each time; the order of cellfs and the target
# after it swaps every pass, so neither always runs first), and two ratio
# tables follow.  The first pairs the runs of one pass, minutes apart:
# per line the median of the PASSES ratios cellfs/target, with the least
# and greatest.  The machine is shared and its speed drifts over minutes,
# so a ratio of runs close in time is steadier than one of runs far
# apart.  The second takes each target's best pass per line
# (interference only ever makes a pass slower), whichever pass it was.
# -q: the quick run (bench-quick, 3 passes, about a minute); without it
# the full run (bench, 5 passes, about 5 minutes).
# FS_BENCH_ARGS replaces the fs_bench arguments; FS_BENCH_TARGETS the
# list of targets (default "cellfs memfs tmpfs").  FS_BENCH_BASE=BINARY
# adds a target "base": another cellfs binary (say main's, to measure a
# change), and its column in the ratio table.  Everything it mounts is
# unmounted on exit, error or signal.
set -eu

quick=
if [ "${1:-}" = -q ]; then
	quick=1
	shift
fi
B=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/default}
CELLFS=$B/cellfs
MEMFS=$B/tests/bench/memfs
FS_BENCH=$B/tests/bench/fs_bench
for p in "$CELLFS" "$MEMFS" "$FS_BENCH"; do
	[ -x "$p" ] || { echo "fs_bench.sh: no $p (make first)" >&2; exit 1; }
done
if [ -n "$quick" ]; then
	ARGS=${FS_BENCH_ARGS:--n 10000 -c 4 -l 100000 -m 10 -M 2 -w 4 -W 1000}
	PASSES=${FS_BENCH_PASSES:-3}
else
	ARGS=${FS_BENCH_ARGS:--n 50000 -c 4 -l 100000 -m 40 -M 8 -w 4 -W 5000}
	PASSES=${FS_BENCH_PASSES:-5}
fi
TARGETS=${FS_BENCH_TARGETS:-cellfs memfs tmpfs}
BASE=${FS_BENCH_BASE:-}
if [ -n "$BASE" ]; then
	[ -x "$BASE" ] || { echo "fs_bench.sh: no $BASE" >&2; exit 1; }
	case " $TARGETS " in *" base "*) ;; *) TARGETS="base $TARGETS" ;; esac
fi

T=$(mktemp -d /tmp/fs_bench.XXXXXX)
MNT=$T/mnt
PID=
MOUNTED=

is_mounted() {
	grep -q " $MNT " /proc/mounts
}

cleanup() {
	if [ -n "$MOUNTED" ]; then
		case $MOUNTED in
		tmpfs) umount "$MNT" 2>/dev/null || umount -l "$MNT" ;;
		*) fusermount3 -u "$MNT" 2>/dev/null ||
		   fusermount3 -uz "$MNT" 2>/dev/null || true ;;
		esac
		MOUNTED=
	fi
	if [ -n "$PID" ]; then
		i=0
		while kill -0 "$PID" 2>/dev/null && [ $i -lt 100 ]; do
			i=$((i + 1))
			sleep 0.1
		done
		kill -9 "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
		PID=
	fi
}

on_exit() {
	rc=$?
	cleanup
	if [ $rc != 0 ]; then
		for f in "$T"/*.err; do
			[ -s "$f" ] || continue
			echo "fs_bench.sh: the end of $f:" >&2
			tail -n 20 "$f" >&2
		done
	fi
	rm -rf "$T"
}
trap on_exit EXIT
trap 'exit 1' INT TERM HUP

wait_mount() {
	i=0
	while ! is_mounted; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "fs_bench.sh: $1 did not mount" >&2;
				    cat "$T/$1.err" >&2; exit 1; }
		if [ -n "$PID" ] && ! kill -0 "$PID" 2>/dev/null; then
			echo "fs_bench.sh: $1 exited" >&2
			cat "$T/$1.err" >&2
			exit 1
		fi
		sleep 0.1
	done
}

mount_target() {
	mkdir -p "$MNT"
	case $1 in
	cellfs|base)
		rm -rf "$T/data"
		[ "$1" = base ] && bin=$BASE || bin=$CELLFS
		"$bin" -f "$T/data" "$MNT" 2>"$T/$1.err" &
		PID=$!
		;;
	memfs)
		"$MEMFS" -f "$MNT" 2>"$T/memfs.err" &
		PID=$!
		;;
	tmpfs)
		mount -t tmpfs -o size=4g,mode=0755 tmpfs "$MNT" \
			2>"$T/tmpfs.err"
		;;
	esac
	MOUNTED=$1
	wait_mount "$1"
}

echo "fs_bench: $(uname -srm), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "fs_bench: load average $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine: compare within one run)"
echo "fs_bench: arguments $ARGS, $PASSES passes"
if [ "$(id -u)" != 0 ]; then
	echo "fs_bench: tmpfs skipped (mount needs root)"
	TARGETS=$(echo "$TARGETS" | tr ' ' '\n' | grep -v '^tmpfs$' | tr '\n' ' ')
fi
pass=1
while [ $pass -le "$PASSES" ]; do
	order=$TARGETS
	if [ $((pass % 2)) = 0 ]; then
		# the first two targets swap: cellfs and the one it is
		# paired with most (memfs) each run first half the time
		set -- $TARGETS
		if [ $# -ge 2 ]; then
			a=$1 b=$2
			shift 2
			order="$b $a $*"
		fi
	fi
	for t in $order; do
		echo
		echo "pass $pass/$PASSES"
		mount_target "$t"
		# shellcheck disable=SC2086
		"$FS_BENCH" $ARGS -t "$t" -o "$T/$t.$pass.res" ${PID:+-p $PID} \
			"$MNT"
		if [ "$t" = cellfs ] || [ "$t" = base ]; then
			grep -E '^cellfs_fuse_' "$MNT/.stats" |
				sed 's/^/  /' || true
		fi
		cleanup
		if [ "$t" = memfs ]; then
			sed 's/^/  /' "$T/memfs.err"
		fi
	done
	pass=$((pass + 1))
done
ran=" $TARGETS "

# The ratio table: cellfs against each other target, key by key.
echo
case " $ran " in *" cellfs "*) ;; *) exit 0 ;; esac
others=$(echo "$ran" | tr ' ' '\n' | grep -v '^cellfs$' | grep . || true)
[ -n "$others" ] || exit 0
awk -v others="$others" -v dir="$T" -v passes="$PASSES" '
BEGIN {
	n = split("mkdir create stat read unlink rmdir writers write_1mib " \
		  "read_1mib write_10mib read_10mib list list2 ls", keys, " ")
	split("mkdir row|create+write+close|stat|open+read+close|unlink|" \
	      "rmdir row|4 writers create|write 1 MiB (MB/s)|" \
	      "read 1 MiB (MB/s)|write 10 MiB (MB/s)|read 10 MiB (MB/s)|" \
	      "ls -l equivalent|ls -l again|/bin/ls -l", names, "|")
	no = split(others, o, "\n")
	load("cellfs")
	for (j = 1; j <= no; j++)
		load(o[j])

	# cellfs against each target in the same pass: median (least-greatest)
	printf "cellfs / target, runs of the same pass paired: median of %d (least-greatest)\n", passes
	printf "%-28s", "ratio (higher is better)"
	for (j = 1; j <= no; j++)
		printf " %-22s", "cellfs/" o[j]
	printf "\n"
	for (i = 1; i <= n; i++)
		paired(keys[i], names[i])
	printf "%-28s", "daemon CPU us/op (lower)"
	for (j = 1; j <= no; j++)
		if (((o[j], "create_cpu_us") in v))
			printf " %-22s", "cellfs/" o[j]
	printf "\n"
	for (i = 1; i <= 6; i++)
		paired(keys[i] "_cpu_us", names[i])
	printf "\nbest of %d passes:\n", passes
	printf "%-28s %12s", "ratio (higher is better)", "cellfs"
	for (j = 1; j <= no; j++)
		printf " %12s %9s", o[j], "cellfs/" substr(o[j], 1, 2)
	printf "\n"
	for (i = 1; i <= n; i++) {
		k = keys[i]
		if (!(("cellfs", k) in v))
			continue
		printf "%-28s %12.1f", names[i], v["cellfs", k]
		for (j = 1; j <= no; j++) {
			if (((o[j], k) in v) && v[o[j], k] > 0)
				printf " %12.1f %8.2fx", v[o[j], k],
				       v["cellfs", k] / v[o[j], k]
			else
				printf " %12s %9s", "-", "-"
		}
		printf "\n"
	}
	# the daemons CPU time per operation: tmpfs has none
	printf "%-28s %12s", "daemon CPU us/op (lower)", "cellfs"
	for (j = 1; j <= no; j++)
		if (((o[j], "create_cpu_us") in v))
			printf " %12s %9s", o[j], "cellfs/" substr(o[j], 1, 2)
	printf "\n"
	for (i = 1; i <= 6; i++) {
		k = keys[i] "_cpu_us"
		if (!(("cellfs", k) in v))
			continue
		printf "%-28s %12.1f", names[i], v["cellfs", k]
		for (j = 1; j <= no; j++)
			if (((o[j], k) in v) && v[o[j], k] > 0)
				printf " %12.1f %8.2fx", v[o[j], k],
				       v["cellfs", k] / v[o[j], k]
		printf "\n"
	}
}
# one line of the paired table: per target, the ratios cellfs/target of
# the passes both ran, sorted; the median, the least and the greatest
function paired(k, name,   j, p, m, r, x, y, t, med) {
	if (!(("cellfs", k) in v))
		return
	printf "%-28s", name
	for (j = 1; j <= no; j++) {
		m = 0
		for (p = 1; p <= passes; p++)
			if ((("cellfs", k, p) in w) && ((o[j], k, p) in w) &&
			    w[o[j], k, p] > 0)
				r[++m] = w["cellfs", k, p] / w[o[j], k, p]
		if (!m) {	# tmpfs has no daemon: no CPU column
			if (k !~ /_cpu_us$/)
				printf " %-22s", "-"
			continue
		}
		for (x = 2; x <= m; x++)	# insertion sort: m is small
			for (y = x; y > 1 && r[y - 1] > r[y]; y--) {
				t = r[y]; r[y] = r[y - 1]; r[y - 1] = t
			}
		med = m % 2 ? r[(m + 1) / 2] : (r[m / 2] + r[m / 2 + 1]) / 2
		printf " %-22s", sprintf("%.2fx (%.2f-%.2f)", med, r[1], r[m])
	}
	printf "\n"
}
function load(t,   f, line, a, p, low) {
	for (p = 1; p <= passes; p++) {
		f = dir "/" t "." p ".res"
		while ((getline line < f) > 0) {
			split(line, a, " ")
			w[t, a[1], p] = a[2]
			low = a[1] ~ /_(us)$/	# times: the least is best
			if (!((t, a[1]) in v) ||
			    (!low && a[2] + 0 > v[t, a[1]] + 0) ||
			    (low && a[2] + 0 < v[t, a[1]] + 0))
				v[t, a[1]] = a[2]
		}
		close(f)
	}
}'
