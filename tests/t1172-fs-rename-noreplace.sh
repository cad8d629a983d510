#!/bin/sh

test_description='cellfs: renameat2 RENAME_NOREPLACE (what mv tries first) moves a cell onto a free name of its row and fails with EEXIST onto a cell, changing nothing; other flags and other moves are EINVAL, after which mv renames plainly'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

test_expect_success 'mount, a row of two cells' '
	cellfs_mount &&
	mkdir "$MNT/t" "$R" &&
	echo A >"$R/cf:a" &&
	echo B >"$R/cf:b"
'

test_expect_success 'RENAME_NOREPLACE onto a free name moves the cell' '
	echo OK >expect &&
	errno_of rename-noreplace "$R/cf:a" "$R/cf:c" >actual &&
	test_cmp expect actual &&
	echo A >expect &&
	test_cmp expect "$R/cf:c" &&
	test_must_fail cat "$R/cf:a" 2>/dev/null &&
	printf "cf:b\ncf:c\n" >expect &&
	ls "$R" >actual &&
	test_cmp expect actual
'

test_expect_success 'RENAME_NOREPLACE onto a cell: EEXIST, both cells kept' '
	echo EEXIST >expect &&
	errno_of rename-noreplace "$R/cf:c" "$R/cf:b" >actual &&
	test_cmp expect actual &&
	echo A >expect &&
	test_cmp expect "$R/cf:c" &&
	echo B >expect &&
	test_cmp expect "$R/cf:b"
'

# The kernel looks the target up before it asks the daemon, and answers
# EEXIST itself for a cell it finds; the daemon's own check (atomic with
# the move, a CheckAndMutate) covers a cell written between that lookup
# and the rename, a window no test here can time.
test_expect_success 'RENAME_NOREPLACE onto a cell written through .batch: EEXIST' '
	echo "put r cf:d D" >"$MNT/t/.batch" &&
	echo EEXIST >expect &&
	errno_of rename-noreplace "$R/cf:c" "$R/cf:d" >actual &&
	test_cmp expect actual &&
	printf D >expect &&
	test_cmp expect "$R/cf:d" &&
	echo A >expect &&
	test_cmp expect "$R/cf:c"
'

test_expect_success 'RENAME_NOREPLACE onto a deleted cell moves it' '
	rm "$R/cf:d" &&
	echo OK >expect &&
	errno_of rename-noreplace "$R/cf:c" "$R/cf:d" >actual &&
	test_cmp expect actual &&
	echo A >expect &&
	test_cmp expect "$R/cf:d"
'

test_expect_success 'RENAME_EXCHANGE: EINVAL with a .log line, nothing changed' '
	echo EINVAL >expect &&
	errno_of rename-exchange "$R/cf:d" "$R/cf:b" >actual &&
	test_cmp expect actual &&
	grep "RENAME_NOREPLACE are not supported" "$MNT/.log" >/dev/null &&
	echo A >expect &&
	test_cmp expect "$R/cf:d" &&
	echo B >expect &&
	test_cmp expect "$R/cf:b"
'

test_expect_success 'RENAME_NOREPLACE of a cell to another row: EINVAL (plain rename: EXDEV)' '
	mkdir "$MNT/t/s" &&
	echo EINVAL >expect &&
	errno_of rename-noreplace "$R/cf:d" "$MNT/t/s/cf:z" >actual &&
	test_cmp expect actual &&
	echo EXDEV >expect &&
	errno_of rename "$R/cf:d" "$MNT/t/s/cf:z" >actual &&
	test_cmp expect actual
'

test_expect_success 'mv onto a cell replaces it and logs no refusal' '
	sed -n "/rename flags\|RENAME_NOREPLACE/p" "$MNT/.log" >before &&
	mv "$R/cf:d" "$R/cf:b" &&
	echo A >expect &&
	test_cmp expect "$R/cf:b" &&
	mv "$R/cf:b" "$R/cf:e" &&
	test_cmp expect "$R/cf:e" &&
	sed -n "/rename flags\|RENAME_NOREPLACE/p" "$MNT/.log" >after &&
	test_cmp before after
'

test_expect_success 'mv -n onto a cell leaves both' '
	echo B2 >"$R/cf:b" &&
	mv -n "$R/cf:e" "$R/cf:b" &&
	echo B2 >expect &&
	test_cmp expect "$R/cf:b" &&
	echo A >expect &&
	test_cmp expect "$R/cf:e"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
