#!/bin/sh

test_description='cellfs: a row of many cells listed with ls -l costs the daemon O(1) a cell in its node table when the kernel forgets the names (a .batch of the row drops them), when rm -r removes them and when its cells change: its CPU time grows with the cells, not with their square'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# ls -l of a row interns a node per cell, all in one chain of the
# row's nodes.  Each node left that chain by walking it, and each change
# of one cell walked it whole: the kernel forgetting a million names
# after ls -l of a row of a million cells (memory pressure, a .batch, a
# schema change) held fs_mu for hours (a stand-alone t1165 stalled
# there), and rm -r of a row was quadratic twice.  Measured (the
# daemon's CPU ticks for what row_cost does, 2 cores shared): 50 at
# 4,000 cells and 2,561 at 32,000 (x51) before; 24 and 181 (x7.5) after,
# 9-15 at load 7.
N=${CELLFS_ROWNODES_N:-4000}
T="$MNT/t"

# stat_of NAME: the value of NAME in MNT/.stats
stat_of() {
	sed -n "s/^cellfs_$1 //p" "$MNT/.stats"
}

# cpu_ticks: the daemon's CPU time so far (user and system, in ticks)
cpu_ticks() {
	awk "{ print \$14 + \$15 }" /proc/$CELLFS_PID/stat
}

# nodes_settle: polls (up to 300 s: a hang, not a measure) until the
# daemon keeps fewer than 50 nodes, the kernel having forgotten the rest
nodes_settle() {
	i=0
	while test $(stat_of fuse_inodes) -ge 50; do
		i=$((i + 1))
		test $i -lt 3000 || {
			echo "nodes left after 300 s: $(stat_of fuse_inodes)"
			return 1
		}
		sleep 0.1
	done
}

# row_listed ROW COUNT: ls -l of ROW lists COUNT cells, the daemon
# holding a node for each
row_listed() {
	ls -l "$T/$1" | sed 1d >"$1.out" &&
	test $(wc -l <"$1.out") = $2 &&
	test $(stat_of fuse_inodes) -ge $2
}

# row_cost ROW COUNT: ROW of COUNT cells, listed with ls -l, every name
# dropped by a .batch of the row (a DeleteColumn of a column it lacks:
# the kernel forgets them), listed again, removed
# with rm -r; the daemon's CPU ticks from the first listing on into
# ROW.cost
row_cost() {
	awk -v n=$2 -v r=$1 "BEGIN { for (i = 1; i <= n; i++)
		printf \"put %s cf:q%08d x\\n\", r, i }" >"$1.batch" &&
	cat "$1.batch" >"$T/.batch" &&
	nodes_settle &&
	c0=$(cpu_ticks) &&
	cellfs_undisturbed 0 : row_listed $1 $2 &&
	echo "delete $1 cf:none" >"$T/.batch" &&
	nodes_settle &&
	ls -l "$T/$1" | sed 1d >"$1.again" &&
	test_cmp "$1.out" "$1.again" &&
	rm -r "$T/$1" &&
	nodes_settle &&
	c1=$(cpu_ticks) &&
	echo $((c1 - c0)) >"$1.cost" &&
	test_must_fail ls "$T/$1" 2>/dev/null
}

test_expect_success 'mount (the pid measured is the daemon'"'"'s)' '
	cellfs_mount &&
	echo cellfs >expect &&
	test_cmp expect /proc/$CELLFS_PID/comm &&
	mkdir "$T"
'

# The small row's cost is the larger of two runs: a few ticks of
# another process's load on the first made the ratio 15 at load 7.
test_expect_success "a row of $N cells, twice: listed, forgotten, listed, removed" '
	row_cost small $N &&
	row_cost small2 $N &&
	echo "$N cells: $(cat small.cost) and $(cat small2.cost) ticks"
'

test_expect_success "a row of $((8 * N)) cells costs less than 20 times as much" '
	row_cost big $((8 * N)) &&
	echo "$((8 * N)) cells: $(cat big.cost) ticks" &&
	base=$(cat small.cost) &&
	if test $(cat small2.cost) -gt $base; then base=$(cat small2.cost); fi &&
	if test $base -lt 5; then base=5; fi &&
	test $(cat big.cost) -lt $((20 * base))
'

# mv changes two columns, not the row: the names the kernel holds of
# both (a version's too) are dropped, the row's other cells kept.
test_expect_success 'mv of a cell of a row listed: the old names go, the new one comes' '
	awk -v n=$N "BEGIN { for (i = 1; i <= n; i++)
		printf \"put mv cf:q%08d x\\n\", i }" >"$T/.batch" &&
	test $(ls -l "$T/mv" | sed 1d | wc -l) = $N &&
	ls "$T/mv/.versions" | grep "^cf:q00000001@" >old &&
	test $(wc -l <old) = 1 &&
	test -f "$T/mv/.versions/$(cat old)" &&
	echo v >"$T/mv/cf:q00000002" &&
	mv "$T/mv/cf:q00000002" "$T/mv/cf:z" &&
	test_must_fail ls "$T/mv/cf:q00000002" 2>/dev/null &&
	echo v >expect &&
	test_cmp expect "$T/mv/cf:z" &&
	mv "$T/mv/cf:z" "$T/mv/cf:q00000001" &&
	test_cmp expect "$T/mv/cf:q00000001" &&
	test_must_fail ls "$T/mv/cf:z" 2>/dev/null &&
	test_must_fail ls "$T/mv/.versions/$(cat old)" 2>/dev/null &&
	printf x >expect &&
	test_cmp expect "$T/mv/cf:q00000003" &&
	test $(ls "$T/mv" | wc -l) = $((N - 1)) &&
	test $(ls "$T/mv/.versions" | grep -c "^cf:q00000001@") = 1
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
