#!/bin/sh

test_description='cellfs: contrib/tcollector-run.sh and the collectors of contrib/collectors/ against a mount'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

TOP=${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}
RUN=$TOP/contrib/tcollector-run.sh
HOST=$(printf "%s" "$(uname -n)" | tr -c "A-Za-z0-9._/-" _)

test_expect_success 'mount' '
	cellfs_mount
'

test_expect_success 'one round of every collector: all their metrics, nothing refused' '
	for c in "$TOP"/contrib/collectors/[1-9]*/*; do
		"$c" || return 1
	done >direct &&
	test $(wc -l <direct) -gt 50 &&
	awk "{ print \$1 }" direct | sort -u >expect &&
	"$RUN" -1 "$MNT" 2>err &&
	test_must_be_empty err &&
	ls "$MNT/tsd/metrics" | sort >out &&
	test_cmp expect out &&
	for m in proc.stat.cpu proc.stat.ctxt proc.meminfo.memtotal \
		proc.loadavg.1min proc.net.bytes df.bytes.total; do
		grep -x "$m" out || return 1
	done &&
	grep "^cellfs_tsd_lines_rejected_total 0$" "$MNT/.stats" &&
	! grep "tsd/put" "$MNT/.log" &&
	cat "$MNT/tsd/metrics/proc.loadavg.1min" >out &&
	test $(wc -l <out) = 1 && grep " host=$HOST\$" out
'

test_expect_success 'a tcollector collector without host tags: the runner adds host=, as tcollector does' '
	mkdir -p col/15 &&
	cat >col/15/mine.py <<-\EOF &&
	#!/usr/bin/env python3
	import sys
	print("my.metric 1356998400 1 k=v")
	print("my.other 1356998400 2")
	print("my.given 1356998400 3 host=given")
	print("my.bad 1356998400 NaN")
	sys.stdout.flush()
	EOF
	chmod +x col/15/mine.py &&
	"$RUN" -d col -1 "$MNT" 2>err &&
	echo "$RUN: mine.py: refused: my.bad 1356998400 NaN host=$HOST" >expect &&
	test_cmp expect err &&
	echo "my.metric 1356998400 1 host=$HOST k=v" >expect &&
	test_cmp expect "$MNT/tsd/metrics/my.metric" &&
	echo "my.other 1356998400 2 host=$HOST" >expect &&
	test_cmp expect "$MNT/tsd/metrics/my.other" &&
	echo "my.given 1356998400 3 host=given" >expect &&
	test_cmp expect "$MNT/tsd/metrics/my.given" &&
	tail -2 "$MNT/.log" | cut -d" " -f2- >out &&
	cat >expect <<-EOF &&
	warn write tsd/put: line 1 "my.bad 1356998400 NaN host=$HOST": invalid value: NaN: Invalid argument
	warn write tsd/put: 1 line refused, 0 points stored: Invalid argument
	EOF
	test_cmp expect out &&
	COLLECTOR_HOST="box 1" "$RUN" -d col -1 -o /dev/stdout 2>/dev/null >out &&
	cat >expect <<-\EOF &&
	my.metric 1356998400 1 k=v host=box_1
	my.other 1356998400 2 host=box_1
	my.given 1356998400 3 host=given
	my.bad 1356998400 NaN host=box_1
	EOF
	test_cmp expect out
'

test_expect_success 'a long-lived collector in 0/ is started again when it exits; SIGTERM stops all' '
	mkdir -p live/0 &&
	cat >live/0/once.sh <<-EOF &&
	#!/bin/sh
	# prints one point numbered by its run, then exits
	n=\$(( \$(cat "$PWD/runs" 2>/dev/null || echo 0) + 1 ))
	echo \$n >"$PWD/runs"
	echo "live.m \$((1356998400 + n)) \$n"
	EOF
	chmod +x live/0/once.sh &&
	"$RUN" -d live "$MNT" 2>err &
	runner=$! &&
	i=0 &&
	while test "$(grep -c "once.sh exited" err)" != 2 && test $i -lt 300; do
		sleep 0.1 && i=$((i + 1))
	done &&
	kill -TERM $runner && wait $runner &&
	! kill -0 $runner 2>/dev/null &&
	! pgrep -f "$PWD/live/0/once.sh" &&
	echo 2 >expect && test_cmp expect runs &&
	printf "live.m 1356998401 1 host=$HOST\nlive.m 1356998402 2 host=$HOST\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/live.m" &&
	grep -c "once.sh exited; restarting in 10 s" err >out &&
	echo 2 >expect && test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
