#!/bin/sh

test_description='cellfs: MNT/tsd/q/ results are produced while read: a fill over a century reads in bounded memory, a reader that stops stops the work, graphs are capped'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# hwm_kb: the daemon's peak resident memory (VmHWM), in kB
hwm_kb() {
	sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p" "/proc/$CELLFS_PID/status"
}

# tstat NAME: the value of cellfs_tsd_NAME in MNT/.stats
tstat() {
	sed -n "s/^cellfs_tsd_$1 //p" "$MNT/.stats"
}

T=1356998400
Q="start=100y-ago&m=sum:30s-avg-nan:rate:cnt.m"

test_expect_success 'mount and write a counter' '
	cellfs_mount &&
	printf "cnt.m $T 10 host=a\ncnt.m $((T + 30)) 40 host=a\ncnt.m $((T + 60)) 100 host=a\n" >in &&
	cat in >>"$MNT/tsd/put"
'

test_expect_success 'a century of 30 s intervals (fill nan, rate): head reads its start' '
	before=$(tstat query_bytes_total) &&
	head -c 1000000 "$MNT/tsd/q/$Q" >out &&
	test $(wc -c <out) -eq 1000000 &&
	head -3 out >first &&
	cat >expect <<-\EOF &&
	cnt.m 30 NaN host=a
	cnt.m 60 NaN host=a
	cnt.m 90 NaN host=a
	EOF
	test_cmp expect first &&
	after=$(tstat query_bytes_total) &&
	made=$((after - before)) &&
	echo "produced $made bytes for a 1000000-byte read" &&
	test $made -ge 1000000 && test $made -lt 1500000
'

test_expect_success 'the points themselves are there, in the middle of the century' '
	cat "$MNT/tsd/q/start=$((T - 60))&end=$((T + 90))&m=sum:30s-avg-nan:rate:cnt.m" >out &&
	cat >expect <<-\EOF &&
	cnt.m 1356998340 NaN host=a
	cnt.m 1356998370 NaN host=a
	cnt.m 1356998400 NaN host=a
	cnt.m 1356998430 1.0 host=a
	cnt.m 1356998460 2.0 host=a
	cnt.m 1356998490 NaN host=a
	EOF
	test_cmp expect out
'

test_expect_success 'the daemon stayed small: VmHWM under 200 MB' '
	hwm=$(hwm_kb) && echo "VmHWM $hwm kB" &&
	test "$hwm" -lt 200000
'

test_expect_success 'a graph of a century of intervals: EFBIG, and why' '
	echo EFBIG >expect &&
	errno_of read "$MNT/tsd/q/$Q.png" >out && test_cmp expect out &&
	echo "warn open $Q.png: graph of more than 1000000 points: File too large" >expect &&
	tail -1 "$MNT/.log" | cut -d" " -f2- >out && test_cmp expect out &&
	hwm=$(hwm_kb) && echo "VmHWM $hwm kB" &&
	test "$hwm" -lt 200000
'

test_expect_success '.png of a series that is all NaN: an empty graph, no error' '
	lines=$(wc -l <"$MNT/.log") &&
	N="start=$((T + 600))&end=$((T + 1200))&m=sum:1m-avg-nan:cnt.m" &&
	echo "cnt.m 1356999000 NaN host=a" >expect &&
	head -1 "$MNT/tsd/q/$N" >out && test_cmp expect out &&
	cat "$MNT/tsd/q/$N.png" >g.png &&
	od -An -tx1 -N8 g.png >out &&
	echo " 89 50 4e 47 0d 0a 1a 0a" >expect && test_cmp expect out &&
	cat "$MNT/tsd/q/start=$((T - 60))&end=$((T + 600))&m=sum:30s-avg-nan:rate:cnt.m.png" >g2.png &&
	od -An -tx1 -N8 g2.png >out && test_cmp expect out &&
	test $(wc -l <"$MNT/.log") -eq $lines
'

test_expect_success 'a gnuplot that fails: EIO and its last words, one whole line in .log' '
	cellfs_umount &&
	mkdir -p bin &&
	cat >bin/gnuplot <<-\EOF &&
	#!/bin/sh
	i=0
	while test $i -lt 40; do
		echo "line $i of a long complaint about nothing in particular" >&2
		i=$((i + 1))
	done
	echo "gnuplot: the real reason" >&2
	exit 1
	EOF
	chmod +x bin/gnuplot &&
	PATH="$PWD/bin:$PATH" cellfs_mount &&
	echo EIO >expect &&
	errno_of read "$MNT/tsd/q/start=$T&end=$((T + 60))&m=sum:cnt.m.png" >out &&
	test_cmp expect out &&
	tail -1 "$MNT/.log" >last &&
	grep "gnuplot failed: \.\.\..* particular gnuplot: the real reason: Input/output error$" last
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
