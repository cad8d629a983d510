#!/bin/sh

test_description='cellfs: a DeleteColumn at now (rm F:Q) keeps a version written in the future, and the daemon says so at once (HBase TimestampTestBase.doTestDelete)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

FUT=4102444801000

test_expect_success 'mount, a table with family f VERSIONS=3' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\n" >"$MNT/t/.schema"
'

# check_kept ROW: the future version is there under both names, the row
# lists it and cannot be removed.
check_kept() {
	echo v >expect &&
	cat "$MNT/t/$1/f:q" >out && test_cmp expect out &&
	cat "$MNT/t/$1/f:q@$FUT" >out && test_cmp expect out &&
	echo f:q >expect && ls "$MNT/t/$1" >out && test_cmp expect out &&
	echo "f:q@$FUT" >expect && ls "$MNT/t/$1/.versions" >out &&
	test_cmp expect out &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/$1" >out && test_cmp expect out
}

test_expect_success 'in a row made by mkdir: rm keeps the future version' '
	mkdir "$MNT/t/r1" &&
	echo old >"$MNT/t/r1/f:q" &&
	echo v >"$MNT/t/r1/f:q@$FUT" &&
	rm "$MNT/t/r1/f:q" &&
	check_kept r1
'

test_expect_success 'the future version written first, then one at now' '
	mkdir "$MNT/t/r2" &&
	echo v >"$MNT/t/r2/f:q@$FUT" &&
	echo now >"$MNT/t/r2/f:x" &&
	rm "$MNT/t/r2/f:q" "$MNT/t/r2/f:x" &&
	check_kept r2
'

test_expect_success 'in a row put by .batch: the same' '
	echo "put r3 f:q@$FUT v%0A" >"$MNT/t/.batch" &&
	rm "$MNT/t/r3/f:q" &&
	check_kept r3
'

test_expect_success 'after flush, after major_compact, after a remount' '
	echo flush >"$MNT/t/.ctl" &&
	check_kept r1 && check_kept r2 && check_kept r3 &&
	echo major_compact >"$MNT/t/.ctl" &&
	check_kept r1 && check_kept r2 && check_kept r3 &&
	cellfs_umount && cellfs_mount &&
	check_kept r1 && check_kept r2 && check_kept r3
'

test_expect_success 'rm of the future version empties the row; rmdir removes it' '
	rm "$MNT/t/r1/f:q@$FUT" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/r1/f:q" >out && test_cmp expect out &&
	ls "$MNT/t/r1" >out && test_must_be_empty out &&
	rmdir "$MNT/t/r1" &&
	errno_of stat "$MNT/t/r1" >out && test_cmp expect out
'

test_expect_success 'a version in the past is deleted by rm, and the row empties' '
	mkdir "$MNT/t/r4" &&
	echo p >"$MNT/t/r4/f:q@1000" &&
	rm "$MNT/t/r4/f:q" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/r4/f:q" >out && test_cmp expect out &&
	errno_of stat "$MNT/t/r4/f:q@1000" >out && test_cmp expect out &&
	rmdir "$MNT/t/r4"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
