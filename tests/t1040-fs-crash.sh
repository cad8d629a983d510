#!/bin/sh

test_description='cellfs: kill -9 after acknowledged writes loses nothing'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

test_expect_success 'mount with sync=none (the WAL write is the acknowledgement)' '
	cellfs_mount sync=none &&
	mkdir "$MNT/t"
'

test_expect_success 'acknowledged writes: cells, batch lines, deletes' '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		mkdir "$MNT/t/row$i" &&
		echo "v$i" >"$MNT/t/row$i/cf:q" || return 1
	done &&
	printf "put b1 cf:q x\nput b2 cf:q y\n" >"$MNT/t/.batch" &&
	rm "$MNT/t/row3/cf:q" &&
	cat "$MNT/t/.batch" >before
'

test_expect_success 'kill -9 the daemon and remount' '
	cellfs_kill9 &&
	! cellfs_is_mounted &&
	cellfs_mount
'

test_expect_success 'everything acknowledged is there' '
	test_cmp before "$MNT/t/.batch" &&
	echo v7 >expect && test_cmp expect "$MNT/t/row7/cf:q" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/row3/cf:q" >out && test_cmp expect out
'

# Log records up to 8 KiB are stored through a mapping of the segment,
# larger ones with pwrite(2) (docs/wal_format.md, "Preallocation"): both
# kinds, interleaved, survive a kill, and replay cuts the segment's
# preallocated zeros as an unclean close, not as a torn record.
test_expect_success 'kill -9 after small and large cells: all there, the zero tail logged as an unclean close' '
	head -c 100000 /dev/urandom >big1 &&
	head -c 300000 /dev/urandom >big2 &&
	mkdir "$MNT/t/mix" &&
	echo small1 >"$MNT/t/mix/cf:a" &&
	cp big1 "$MNT/t/mix/cf:b" &&
	echo small2 >"$MNT/t/mix/cf:c" &&
	cp big2 "$MNT/t/mix/cf:d" &&
	echo small3 >"$MNT/t/mix/cf:e" &&
	cellfs_kill9 &&
	: >"$SHARNESS_TRASH_DIRECTORY/cellfs.err" &&
	cellfs_mount &&
	echo small1 >expect && test_cmp expect "$MNT/t/mix/cf:a" &&
	test_cmp big1 "$MNT/t/mix/cf:b" &&
	echo small2 >expect && test_cmp expect "$MNT/t/mix/cf:c" &&
	test_cmp big2 "$MNT/t/mix/cf:d" &&
	echo small3 >expect && test_cmp expect "$MNT/t/mix/cf:e" &&
	grep "not closed cleanly" "$SHARNESS_TRASH_DIRECTORY/cellfs.err" &&
	! grep "torn tail" "$SHARNESS_TRASH_DIRECTORY/cellfs.err"
'

test_expect_success 'SIGTERM unmounts and closes the db; max_value is an option' '
	pid=$CELLFS_PID &&
	kill -TERM $pid &&
	wait $pid &&
	CELLFS_PID= &&
	! cellfs_is_mounted &&
	cellfs_mount max_value=8 &&
	echo v7 >expect && test_cmp expect "$MNT/t/row7/cf:q" &&
	echo OK >expect &&
	errno_of write "$MNT/t/row1/cf:q" 12345678 >out && test_cmp expect out &&
	echo EFBIG >expect &&
	errno_of write "$MNT/t/row1/cf:q" 123456789 >out &&
	test_cmp expect out &&
	printf 12345678 >expect && test_cmp expect "$MNT/t/row1/cf:q"
'

test_expect_success 'a bad option value refuses to mount' '
	test_must_fail "$CELLFS" -o sync=sometimes "$DATA" "$MNT" 2>err &&
	grep "sync must be batch, always or none" err &&
	test_must_fail "$CELLFS" -o wal=tape "$DATA" "$MNT" 2>err &&
	grep "wal must be mmap or write" err
'

# -o wal=write: records go out with write(2), the segment is not
# preallocated (it is as long as its records), and a kill loses nothing
# acknowledged either; replay finds no zero tail to report.
test_expect_success 'wal=write: unpreallocated segments, kill -9 loses nothing acknowledged' '
	cellfs_umount &&
	cellfs_mount sync=none,wal=write &&
	mkdir "$MNT/t/w" &&
	echo small1 >"$MNT/t/w/cf:a" &&
	cp big2 "$MNT/t/w/cf:b" &&
	rm "$MNT/t/row7/cf:q" &&
	seg=$(ls "$DATA/wal" | tail -n 1) &&
	test $(stat -c %s "$DATA/wal/$seg") -lt 400000 &&
	cellfs_kill9 &&
	: >"$SHARNESS_TRASH_DIRECTORY/cellfs.err" &&
	cellfs_mount &&
	echo small1 >expect && test_cmp expect "$MNT/t/w/cf:a" &&
	test_cmp big2 "$MNT/t/w/cf:b" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/row7/cf:q" >out && test_cmp expect out &&
	! grep "not closed cleanly" "$SHARNESS_TRASH_DIRECTORY/cellfs.err" &&
	! grep "torn tail" "$SHARNESS_TRASH_DIRECTORY/cellfs.err"
'

# -o wal_compression: a record's body is snappy-compressed by default,
# stored as it is with =none; a kill loses nothing either way, and a log
# with records of both kinds replays (docs/wal_format.md, "Payload").
# With wal=write a segment is as long as its records, so its growth is
# what the batch cost the log.
test_expect_success 'wal_compression: records of both kinds survive kill -9 and replay together' '
	awk "BEGIN { for (i = 0; i < 3000; i++)
		printf \"put z%05d cf:q host=web%02d,cpu.user=42.%d\\n\", i, i % 7, i % 10 }" >lines &&
	cellfs_umount &&
	cellfs_mount sync=none,wal=write &&
	seg=$(ls "$DATA/wal" | tail -n 1) &&
	s0=$(stat -c %s "$DATA/wal/$seg") &&
	cat lines >"$MNT/t/.batch" &&
	s1=$(stat -c %s "$DATA/wal/$seg") &&
	cellfs_kill9 &&
	cellfs_mount sync=none,wal=write,wal_compression=none &&
	seg=$(ls "$DATA/wal" | tail -n 1) &&
	s2=$(stat -c %s "$DATA/wal/$seg") &&
	sed "s/^put z/put y/" lines >"$MNT/t/.batch" &&
	s3=$(stat -c %s "$DATA/wal/$seg") &&
	echo "compressed $((s1 - s0)) bytes, stored $((s3 - s2))" &&
	test $(( (s1 - s0) * 3 )) -lt $((s3 - s2)) &&
	cellfs_kill9 &&
	cellfs_mount &&
	printf "host=web02,cpu.user=42.1" >expect &&
	test_cmp expect "$MNT/t/z02011/cf:q" &&
	test_cmp expect "$MNT/t/y02011/cf:q" &&
	test $(ls "$MNT/t/@" | grep -c "^[yz]0") = 6000 &&
	test_must_fail "$CELLFS" -o wal_compression=zip "$DATA" "$MNT" 2>err &&
	grep "wal_compression must be snappy or none" err
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
