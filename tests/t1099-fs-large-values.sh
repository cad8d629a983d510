#!/bin/sh

test_description='cellfs: large values (1 and 10 MiB) written with large write(2) calls read back byte-exact, by several readers, after a kill -9, after a flush, and by a reader open across a compaction'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

test_expect_success 'mount, a table and a row; random values' '
	cellfs_mount &&
	mkdir "$MNT/t" "$R" &&
	head -c 1048576 /dev/urandom >v1 &&
	head -c 10485760 /dev/urandom >v10 &&
	head -c 3000000 /dev/urandom >v3
'

test_expect_success 'written with 1 MiB write(2) calls, read back' '
	dd if=v1 of="$R/cf:one" bs=1M 2>/dev/null &&
	dd if=v10 of="$R/cf:ten" bs=1M 2>/dev/null &&
	cmp v1 "$R/cf:one" &&
	cmp v10 "$R/cf:ten" &&
	test "$(stat -c %s "$R/cf:ten")" = 10485760
'

test_expect_success 'reads of odd sizes at odd offsets' '
	dd if="$R/cf:ten" bs=4099 skip=1000 count=300 2>/dev/null >out &&
	dd if=v10 bs=4099 skip=1000 count=300 2>/dev/null >expect &&
	cmp expect out &&
	dd if="$R/cf:ten" bs=1 skip=10485759 2>/dev/null >out &&
	dd if=v10 bs=1 skip=10485759 2>/dev/null >expect &&
	cmp expect out
'

test_expect_success 'four readers at once, and an overwrite meanwhile' '
	pids= &&
	for i in 1 2 3 4; do
		cat "$R/cf:ten" >out$i &
		pids="$pids $!"
	done &&
	cat v3 >"$R/cf:ten" &&
	for p in $pids; do wait $p || return 1; done &&
	for i in 1 2 3 4; do
		cmp out$i v10 || cmp out$i v3 || return 1
	done &&
	cmp v3 "$R/cf:ten"
'

test_expect_success 'a write in the middle of a large value (read-write open)' '
	cp v10 expect &&
	printf hello | dd of=expect bs=1 seek=5000000 conv=notrunc 2>/dev/null &&
	cp v10 "$R/cf:mid" &&
	printf hello | dd of="$R/cf:mid" bs=1 seek=5000000 conv=notrunc 2>/dev/null &&
	cmp expect "$R/cf:mid"
'

test_expect_success 'kill -9 after the closes: all there after the remount' '
	cat v10 >"$R/cf:ten" &&
	cellfs_kill9 &&
	cellfs_mount &&
	cmp v1 "$R/cf:one" &&
	cmp v10 "$R/cf:ten" &&
	cmp expect "$R/cf:mid"
'

test_expect_success 'after a flush to store files and a clean restart' '
	echo flush >"$MNT/t/.ctl" &&
	cellfs_umount &&
	cellfs_mount &&
	cmp v1 "$R/cf:one" &&
	cmp v10 "$R/cf:ten" &&
	cmp expect "$R/cf:mid"
'

# A read-only open of a cell read from a store file keeps the value in
# the file's block (engine/read.c, iter_pin): a reader that opened it
# before an overwrite, a flush and a major compaction that deletes that
# store file reads the old value to the end, byte-exact, and a new open
# reads the new one.
test_expect_success 'an open reader keeps its value through an overwrite, a flush and a major compaction' '
	exec 8<"$R/cf:ten" &&
	dd bs=1048576 count=3 <&8 2>/dev/null >out &&
	cat v3 >"$R/cf:ten" &&
	echo flush >"$MNT/t/.ctl" &&
	echo major_compact >"$MNT/t/.ctl" &&
	cat <&8 >>out &&
	exec 8<&- &&
	cmp v10 out &&
	cmp v3 "$R/cf:ten" &&
	cmp v1 "$R/cf:one"
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
