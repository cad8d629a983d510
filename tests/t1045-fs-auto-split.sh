#!/bin/sh

test_description='automatic splits (HBase SteppingSplitPolicy): a table'"'"'s only region splits past 2 x flush_size, later regions past split_size; every cell survives, kill -9 included'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# rows rFIRST..rLAST of 1000 random bytes each (snappy cannot shrink
# them), kept in vals/ too
put_rows() {
	mkdir -p vals &&
	for i in $(seq "$1" "$2"); do
		r=$(printf r%04d "$i") &&
		head -c 1000 /dev/urandom >"vals/$r" &&
		mkdir -p "$MNT/t/$r" &&
		cp "vals/$r" "$MNT/t/$r/cf:q" || return 1
	done
}

# every cell written reads back byte for byte
all_cells_read() {
	for f in vals/*; do
		cmp "$f" "$MNT/t/${f#vals/}/cf:q" || return 1
	done
}

regions() {
	ls -d "$MNT"/t/@* | wc -l
}

# waits (up to 300 s: sanitizer builds are slow) for at least $1 regions
wait_regions() {
	i=0
	while test $(regions) -lt "$1"; do
		i=$((i + 1))
		test $i -lt 3000 || return 1
		sleep 0.1
	done
}

test_expect_success 'one region of ~100 KB, flush_size 64K, split_size 1G: not split' '
	cellfs_mount sync=none,flush_size=65536,split_size=1G &&
	mkdir "$MNT/t" &&
	put_rows 0 99 &&
	echo flush >"$MNT/t/.ctl" &&
	echo major_compact >"$MNT/t/.ctl" &&
	test $(regions) -eq 1
'

test_expect_success 'past 2 x flush_size the only region splits, though split_size is 1G' '
	put_rows 100 299 &&
	echo flush >"$MNT/t/.ctl" &&
	wait_regions 2 &&
	test $(regions) -eq 2 &&
	all_cells_read
'

test_expect_success 'kill -9 after the split: both regions and every cell after a remount' '
	cellfs_kill9 &&
	cellfs_mount sync=none,flush_size=65536,split_size=1G &&
	test $(regions) -eq 2 &&
	all_cells_read
'

test_expect_success 'from two regions on, split_size rules: ~150 KB regions split at split_size=100K, each row in one of them' '
	cellfs_umount &&
	cellfs_mount sync=none,flush_size=65536,split_size=100K &&
	wait_regions 4 &&
	all_cells_read &&
	for d in "$MNT"/t/@*; do ls "$d" || return 1; done |
		LC_ALL=C sort >rows &&
	(cd vals && ls | LC_ALL=C sort) >want &&
	test_cmp want rows
'

test_done
