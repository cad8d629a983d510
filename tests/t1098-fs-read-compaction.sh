#!/bin/sh

test_description='cellfs: a table whose reads keep going to two store files is compacted by the reads (docs/engine.md, read-driven compaction)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"

# store files of the table's one region (.regions: name start end files ...)
files() {
	cut -d" " -f4 "$T/.regions"
}

# reads that consulted two or more store files of a store, so far
multi() {
	sed -n "s/^cellfs_multi_file_reads_total //p" "$MNT/.stats"
}

# the table: two store files, under the compaction threshold
two_files() {
	mkdir "$T" &&
	for i in $(seq 100 2 298); do
		echo "put r$i cf:q even-$i" || return 1
	done >>"$T/.batch" &&
	echo flush >"$T/.ctl" &&
	for i in $(seq 101 2 299); do
		echo "put r$i cf:q odd-$i" || return 1
	done >>"$T/.batch" &&
	echo flush >"$T/.ctl" &&
	echo 2 >expect && files >out && test_cmp expect out
}

# a disturbed run's reads may have compacted it: made again
again() {
	echo drop >"$T/.ctl" && two_files
}

# Each row's cell read twice, once the rows are looked up.  A row's
# lookup reads the whole row, which consults the older file too (its
# bloom filter says no, which counts, as in LevelDB): 99 reads of two
# files (r299 lies past the older file's last key), under the 100 that
# set off the compaction.  Each cell's Get then stops at the newer file,
# which holds it: no more reads of two files.  The kernel forgetting the
# rows' names (another test's drop_caches) would make the lookups come
# again: cellfs_undisturbed runs it again then, on a new table.
newer_reads() {
	for i in $(seq 101 2 299); do
		test -d "$T/r$i" || return 1
	done &&
	m0=$(multi) &&
	for n in 1 2; do
		for i in $(seq 101 2 299); do
			test "$(cat "$T/r$i/cf:q")" = "odd-$i" || return 1
		done
	done &&
	echo "$m0" >expect && multi >out && test_cmp expect out &&
	echo 2 >expect && files >out && test_cmp expect out
}

test_expect_success 'two store files, under the compaction threshold' '
	cellfs_mount &&
	two_files
'

test_expect_success 'reads answered by the newer file alone leave them apart' '
	cellfs_undisturbed 0 again newer_reads
'

test_expect_success 'reads that need both files: compacted into one, reads unchanged' '
	for i in $(seq 102 2 298); do
		test "$(cat "$T/r$i/cf:q")" = "even-$i" || return 1
	done &&
	n=0 &&
	while test "$(files)" != 1
	do
		n=$((n + 1)) && test $n -lt 100 || return 1
		sleep 0.1
	done &&
	grep "major compaction of t/cf" "$MNT/.log" >/dev/null &&
	for i in $(seq 100 299); do
		v=$(cat "$T/r$i/cf:q") &&
		case $((i % 2)) in
		0) test "$v" = "even-$i" ;;
		1) test "$v" = "odd-$i" ;;
		esac || return 1
	done
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
