#!/bin/sh

test_description='region merges (HBase merge_region) through the mount: merge KEY in T/.ctl and rmdir T/@KEY merge a region into the one before it; every cell stays readable, across a flush, a major compaction, kill -9 and a remount; the first region and a key no region starts at are refused with a .log line'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# rows rFIRST..rLAST, each cell a value of its own, kept in vals/ too
put_rows() {
	mkdir -p vals &&
	for i in $(seq "$1" "$2"); do
		r=$(printf r%04d "$i") &&
		echo "value of $r $3" >"vals/$r" &&
		mkdir -p "$MNT/t/$r" &&
		cp "vals/$r" "$MNT/t/$r/cf:q" || return 1
	done
}

# every cell written reads back, and a scan lists each row once, in order
all_cells_read() {
	for f in vals/*; do
		cmp "$f" "$MNT/t/${f#vals/}/cf:q" || return 1
	done &&
	ls vals >expect.rows &&
	cut -d" " -f1 "$MNT/t/.scan/all" >rows &&
	test_cmp expect.rows rows
}

# the regions' directories, in order
regions() {
	ls -d "$MNT"/t/@* | sed "s|.*/||" >regions.out &&
	printf "%s\n" "$@" >regions.expect &&
	test_cmp regions.expect regions.out
}

test_expect_success 'a table of four regions' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	put_rows 0 199 a &&
	mkdir "$MNT/t/@r0050" "$MNT/t/@r0100" "$MNT/t/@r0150" &&
	put_rows 40 160 b &&
	regions @ @r0050 @r0100 @r0150 &&
	all_cells_read
'

test_expect_success 'merge KEY in T/.ctl: the region at KEY joins the one before' '
	echo "merge r0100" >"$MNT/t/.ctl" &&
	regions @ @r0050 @r0150 &&
	all_cells_read &&
	grep -q "^cellfs_merges_total{table=\"t\"} 1$" "$MNT/t/.stats"
'

test_expect_success 'rmdir T/@KEY: the same, the inverse of mkdir T/@KEY' '
	rmdir "$MNT/t/@r0150" &&
	regions @ @r0050 &&
	test ! -e "$MNT/t/@r0150" &&
	all_cells_read &&
	put_rows 120 180 c &&
	all_cells_read
'

test_expect_success 'refused: the first region (EINVAL), a key no region starts at (ENOENT), with .log lines' '
	echo EINVAL >expect &&
	errno_of rmdir "$MNT/t/@" >out && test_cmp expect out &&
	last_log >out &&
	grep -q "rmdir @: the first region has no region before it to merge with" out &&
	test_must_fail sh -c "echo \"merge r0077\" >\"\$1\"" sh "$MNT/t/.ctl" &&
	last_log >out &&
	grep -q "no region starts at the key" out &&
	regions @ @r0050 &&
	all_cells_read
'

test_expect_success 'after a flush and a major compaction, kill -9 and a remount: the merged regions and every cell' '
	echo flush >"$MNT/t/.ctl" &&
	echo major_compact >"$MNT/t/.ctl" &&
	all_cells_read &&
	put_rows 0 30 d &&
	echo "merge r0050" >"$MNT/t/.ctl" &&
	put_rows 31 60 e &&
	regions @ &&
	cellfs_kill9 &&
	cellfs_mount &&
	regions @ &&
	all_cells_read &&
	mkdir "$MNT/t/@r0100" &&
	regions @ @r0100 &&
	all_cells_read
'

test_done
