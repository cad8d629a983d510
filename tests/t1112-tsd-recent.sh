#!/bin/sh

test_description='cellfs: MNT/tsd/q/ answered from the recent points in memory (docs/timeseries.md): the same bytes as the table; a cell removed under MNT/tsdb/ is seen at once and the copy rebuilt; after a remount and after a kill -9 the copy is rebuilt from the table with every acknowledged point'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# tstat NAME: the value of cellfs_tsd_NAME in MNT/.stats
tstat() {
	sed -n "s/^cellfs_tsd_$1 //p" "$MNT/.stats"
}

# wait_ready [REBUILDS]: (the tsd layer opens at its first use, and
# .stats uses it once tsdb exists) polls (up to 300 s: sanitizer builds are slow)
# until the recent points are ready after at least REBUILDS rebuilds
wait_ready() {
	i=0
	until test "$(tstat recent_ready)" = 1 &&
	      test "$(tstat recent_rebuilds_total)" -ge "${1:-1}"; do
		i=$((i + 1))
		test $i -lt 3000 || return 1
		sleep 0.1
	done
}

# The data: two hours ago to now, series r.a host=a (integers, and a
# point in milliseconds every 7th) and r.b host=b (floats).
B=$(( $(date +%s) / 3600 * 3600 - 7200 ))
# gen FROM TO: put lines of points FROM..TO-1 (every 10 s from B) into
# in.a and in.b, and the answers to sum:r.a and sum:r.b into exp.a, exp.b
gen() {
	k=$1
	while test $k -lt $2; do
		ts=$((B + 10 * k))
		if test $((k % 7)) = 3; then
			echo "r.a ${ts}250 $((k * 3 - 50)) host=a" >>in.a
		else
			echo "r.a $ts $((k * 3 - 50)) host=a" >>in.a
		fi
		echo "r.a $ts $((k * 3 - 50)) host=a" >>exp.a
		echo "r.b $ts $k.5 host=b" >>in.b
		echo "r.b $ts $k.5 host=b" >>exp.b
		k=$((k + 1))
	done
}

QA="start=$((B - 1))&m=sum:r.a"
QB="start=$((B - 1))&m=sum:r.b"

test_expect_success 'mount, put; once the copy is ready, queries are answered from it, as written' '
	cellfs_mount &&
	gen 0 500 &&
	cat in.a in.b >>"$MNT/tsd/put" &&
	wait_ready 1 &&
	r0=$(tstat query_points_recent_total) &&
	cat "$MNT/tsd/q/$QA" >out && test_cmp exp.a out &&
	cat "$MNT/tsd/q/$QB" >out && test_cmp exp.b out &&
	test $(( $(tstat query_points_recent_total) - r0 )) = 1000 &&
	test "$(tstat recent_points)" = 1000
'

test_expect_success 'a dump (which compacts the finished hour) changes nothing' '
	cat "$MNT/tsd/metrics/r.a" >/dev/null &&
	r0=$(tstat query_points_recent_total) &&
	cat "$MNT/tsd/q/$QA" >out && test_cmp exp.a out &&
	test $(( $(tstat query_points_recent_total) - r0 )) = 500
'

test_expect_success 'a cell removed under MNT/tsdb/: the next query reads the table, then the copy is rebuilt without it' '
	n=$(tstat recent_rebuilds_total) &&
	# key order (ls -U), not ls'"'"'s sort of the escaped names: the hour
	# bytes of a row key may escape to a letter or to %XX
	row=$(ls -U "$MNT/tsdb/@" | tail -1) &&
	cell=$(ls -U "$MNT/tsdb/$row" | head -1) &&
	test "$cell" = "t:%00%0B" &&
	rm "$MNT/tsdb/$row/$cell" &&
	cat "$MNT/tsd/q/$QB" >out &&
	# the first point of the last hour (second 0 of B + 3600: a
	# 4-byte float, flags 0xB) is gone
	grep -v "^r.b $((B + 3600)) " exp.b >exp.b2 &&
	test $(wc -l <exp.b2) = 499 &&
	test_cmp exp.b2 out &&
	wait_ready $((n + 1)) &&
	r0=$(tstat query_points_recent_total) &&
	cat "$MNT/tsd/q/$QB" >out && test_cmp exp.b2 out &&
	test $(( $(tstat query_points_recent_total) - r0 )) = 499 &&
	mv exp.b2 exp.b
'

test_expect_success 'remount: rebuilt from the table, the same answers from it' '
	cellfs_umount && cellfs_mount &&
	wait_ready 1 &&
	r0=$(tstat query_points_recent_total) &&
	cat "$MNT/tsd/q/$QA" >out && test_cmp exp.a out &&
	cat "$MNT/tsd/q/$QB" >out && test_cmp exp.b out &&
	test $(( $(tstat query_points_recent_total) - r0 )) = 999
'

test_expect_success 'kill -9 after more puts: every acknowledged point is back, answered from the rebuilt copy' '
	: >in.a && : >in.b &&
	gen 500 700 &&
	cat in.a in.b >>"$MNT/tsd/put" &&
	cat "$MNT/tsd/q/$QA" >out && test_cmp exp.a out &&
	cellfs_kill9 &&
	cellfs_mount &&
	wait_ready 1 &&
	r0=$(tstat query_points_recent_total) &&
	cat "$MNT/tsd/q/$QA" >out && test_cmp exp.a out &&
	cat "$MNT/tsd/q/$QB" >out && test_cmp exp.b out &&
	test $(( $(tstat query_points_recent_total) - r0 )) = 1399 &&
	cellfs_umount
'

test_done
