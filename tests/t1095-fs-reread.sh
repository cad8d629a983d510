#!/bin/sh

test_description='cellfs: every read after a committed change sees it (through any name, after any earlier read or open)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

C="$MNT/t/r/cf:q"

test_expect_success 'mount, a table and a row' '
	cellfs_mount &&
	mkdir "$MNT/t" "$MNT/t/r"
'

test_expect_success 'an overwrite of the same length is read back' '
	echo aaaa >"$C" &&
	cat "$C" >out && echo aaaa >expect && test_cmp expect out &&
	echo bbbb >"$C" &&
	cat "$C" >out && echo bbbb >expect && test_cmp expect out
'

test_expect_success 'a shorter, then a longer value than a page' '
	echo x >"$C" &&
	cat "$C" >out && echo x >expect && test_cmp expect out &&
	head -c 10000 /dev/zero | tr "\\0" y >expect &&
	cat expect >"$C" &&
	cat "$C" >out && test_cmp expect out &&
	test "$(stat -c %s "$C")" = 10000 &&
	dd if="$C" bs=1 skip=4097 count=3 2>/dev/null >out &&
	printf yyy >expect && test_cmp expect out &&
	echo x >"$C" &&
	cat "$C" >out && echo x >expect && test_cmp expect out
'

test_expect_success 'a change through another name: region and table paths' '
	echo one >"$C" &&
	cat "$MNT/t/@/r/cf:q" >out && echo one >expect && test_cmp expect out &&
	echo two >"$C" &&
	cat "$MNT/t/@/r/cf:q" >out && echo two >expect && test_cmp expect out &&
	echo six >"$MNT/t/@/r/cf:q" &&
	cat "$C" >out && echo six >expect && test_cmp expect out
'

test_expect_success 'a change through .batch and an append' '
	cat "$C" >/dev/null &&
	echo "put r cf:q batched" >"$MNT/t/.batch" &&
	cat "$C" >out && printf batched >expect && test_cmp expect out &&
	echo more >>"$C" &&
	cat "$C" >out && echo batchedmore >expect && test_cmp expect out
'

test_expect_success 'a version file keeps its value after a newer put' '
	echo "cf VERSIONS=3" >"$MNT/t/.schema" &&
	echo old >"$C" &&
	ts=$(sed -n "s/^put r cf:q@\([0-9]*\) old%0A$/\1/p" \
		"$MNT/t/.batch") &&
	test -n "$ts" &&
	cat "$C@$ts" >out && echo old >expect && test_cmp expect out &&
	sleep 0.01 &&
	echo new >"$C" &&
	cat "$C" >out && echo new >expect && test_cmp expect out &&
	cat "$C@$ts" >out && echo old >expect && test_cmp expect out
'

test_expect_success 'an open made after a write reads it, whatever an older open reads' '
	echo v-old >"$C" &&
	exec 8<"$C" &&
	echo v-new >"$C" &&
	exec 9<"$C" &&
	cat <&8 >/dev/null &&
	cat <&9 >out &&
	exec 8<&- 9<&- &&
	echo v-new >expect && test_cmp expect out
'

test_expect_success 'a deleted cell cannot be read, a new one can' '
	cat "$C" >/dev/null &&
	rm "$C" &&
	test_must_fail cat "$C" 2>/dev/null &&
	echo back >"$C" &&
	cat "$C" >out && echo back >expect && test_cmp expect out
'

test_expect_success 'a 1 MiB value read whole, after a cached smaller one' '
	head -c 1048576 /dev/urandom >big &&
	cat big >"$C" &&
	cmp big "$C" &&
	head -c 1000 big >"$C" &&
	head -c 1000 big >expect &&
	cmp expect "$C"
'

test_expect_success 'status files are read whole whatever their stat size' '
	test "$(stat -c %s "$MNT/.stats")" = 0 &&
	grep -q "^cellfs_fuse_lookups_total [0-9]" "$MNT/.stats"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
