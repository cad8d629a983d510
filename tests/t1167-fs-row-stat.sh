#!/bin/sh

test_description='cellfs: the stat of a row directory (its time is its newest cell'"'"'s) reads the row once, not once per attribute timeout: the daemon keeps the time a read or a listing found, raised by a Put and forgotten by anything else (an rm, a .batch, rmdir)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# A row's time needs every column's newest version: a read of the whole
# row, page by page (0.9 s for a row of a million cells), which the
# stat of the row made again each time the kernel's cache timeout had passed,
# unless the daemon knew one of the row's cells present.
N=${CELLFS_ROWSTAT_N:-3000}
T="$MNT/t"
# 2100-01-01: the row's newest cell, newer than anything written now
NEWEST=4102444800

# gets: the engine's reads of table t (a row read is one)
gets() {
	sed -n "s/^cellfs_gets_total{table=\"t\"} //p" "$T/.stats"
}

# The kernel keeps names and attributes cache_timeout=1 second here (10 by
# default): the stats after `sleep 2` ask the daemon again.
test_expect_success 'mount; a row of many cells and a small one, through .batch' '
	cellfs_mount cache_timeout=1 &&
	mkdir "$T" &&
	awk -v n=$N -v t=${NEWEST}000 "BEGIN {
		for (i = 1; i <= n; i++) printf \"put wide cf:q%06d x\\n\", i
		printf \"put wide cf:q%06d@%s x\\n\", n / 2, t
		print \"put small cf:a x\" }" >"$T/.batch"
'

# .batch forgot what the daemon knew of the table: the listings tell it
# again (a row listing reads its row whole, a region listing each row)
# What the daemon knows of a row lives in its node, which it frees when
# the kernel forgets the row's inode: these checks hold while nothing
# else (drop_caches, memory pressure) makes the kernel forget it
# (cellfs_undisturbed).

# listed_known: the listings, then the stats once the kernel's names
# have timed out read nothing
listed_known() {
	ls -U "$T/wide" >wide.out &&
	test $(wc -l <wide.out) = $N &&
	ls -U "$T/@" >region.out &&
	printf "small\nwide\n" >expect &&
	test_cmp expect region.out &&
	sleep 2 &&
	g0=$(gets) &&
	stat -c %Y "$T/wide" "$T/@/wide" >times &&
	stat -c %Y "$T/@/small" >/dev/null &&
	g1=$(gets) &&
	echo "reads for the stats: $((g1 - g0))" &&
	test $g1 = $g0 &&
	printf "%s\n%s\n" $NEWEST $NEWEST >expect &&
	test_cmp expect times
}

test_expect_success 'listed, then stat after the kernel forgot the names: no read' '
	cellfs_undisturbed 0 : listed_known
'

# small_unknown: a .batch of the row makes the daemon forget its time;
# the next stat reads the row
small_unknown() {
	echo "put small cf:b y" >"$T/.batch" &&
	g0=$(gets) &&
	stat -c %Y "$T/small" >/dev/null &&
	g1=$(gets) &&
	test $((g1 - g0)) -ge 1
}

# small_known: after the kernel's names timed out, a stat reads nothing
small_known() {
	sleep 2 &&
	stat -c %Y "$T/small" >/dev/null &&
	test $(gets) = $g1
}

test_expect_success 'a row the daemon does not know is read once, then known' '
	small_unknown &&
	cellfs_undisturbed 0 small_unknown small_known
'

# put_known: Puts, older and newer than the row's time, keep it known
put_known() {
	echo n >"$T/wide/cf:new" &&
	g0=$(gets) &&
	stat -c %Y "$T/wide" >out &&
	test $(gets) = $g0 &&
	echo $NEWEST >expect &&
	test_cmp expect out &&
	echo m >"$T/wide/cf:later@$((NEWEST + 5))000" &&
	g0=$(gets) &&
	stat -c %Y "$T/wide" >out &&
	test $(gets) = $g0 &&
	echo $((NEWEST + 5)) >expect &&
	test_cmp expect out
}

# put_known_again: the row as it was before put_known, its time known
put_known_again() {
	rm -f "$T/wide/cf:later@$((NEWEST + 5))000" &&
	stat -c %Y "$T/wide" >/dev/null
}

test_expect_success 'a Put keeps the time known (older: the same; newer: it)' '
	cellfs_undisturbed 0 put_known_again put_known
'

test_expect_success 'an rm forgets it: the next stat reads the row' '
	rm "$T/wide/cf:later@$((NEWEST + 5))000" &&
	g0=$(gets) &&
	stat -c %Y "$T/wide" >out &&
	test $(gets) -gt $g0 &&
	echo $NEWEST >expect &&
	test_cmp expect out
'

test_expect_success 'rmdir of an empty row: it is gone, under every name' '
	mkdir "$T/e" &&
	test -d "$T/e" &&
	test -d "$T/@/e" &&
	rmdir "$T/e" &&
	echo ENOENT >expect &&
	errno_of stat "$T/e" >out &&
	test_cmp expect out &&
	errno_of stat "$T/@/e" >out &&
	test_cmp expect out &&
	mkdir "$T/e2" &&
	echo x >"$T/e2/cf:a" &&
	test -d "$T/@/e2" &&
	rm "$T/e2/cf:a" &&
	test -d "$T/e2" &&
	rmdir "$T/e2" &&
	errno_of stat "$T/e2" >out &&
	test_cmp expect out &&
	errno_of stat "$T/@/e2" >out &&
	test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
