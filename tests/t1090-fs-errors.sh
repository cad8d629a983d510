#!/bin/sh

test_description='cellfs: refused operations through ordinary commands: malformed names, a full data disk, a damaged store file, one cut short under the daemon'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

FSCK="$CELLFS_BUILD/cellfs-fsck"

test_expect_success 'mount' '
	cellfs_mount &&
	mkdir "$MNT/t" && mkdir "$MNT/t/r" && echo v >"$MNT/t/r/cf:q"
'

test_expect_success 'malformed names are EINVAL, each with a line in .log' '
	echo EINVAL >expect &&
	errno_of mkdir "$MNT/t/%zz" >out && test_cmp expect out &&
	last_log >log && grep "malformed escape in row name" log &&
	errno_of stat "$MNT/t/a%2fb" >out && test_cmp expect out &&
	errno_of write "$MNT/t/r/cf:%G1" v >out && test_cmp expect out &&
	last_log >log && grep "not a cell name" log &&
	errno_of write "$MNT/t/r/nocolon" v >out && test_cmp expect out &&
	errno_of write "$MNT/t/r/bad%20fam:q" v >out && test_cmp expect out &&
	errno_of write "$MNT/t/r/cf:q@12x" v >out && test_cmp expect out &&
	errno_of mkdir "$MNT/t/@%4" >out && test_cmp expect out &&
	errno_of write "$MNT/t/.batch" "put r" >out && test_cmp expect out &&
	last_log >log && grep "line 1" log &&
	ls "$MNT/t/r" >out && echo cf:q >expect && test_cmp expect out
'

test_expect_success 'unknown table, row and cell are ENOENT; chown is accepted and ignored' '
	echo ENOENT >expect &&
	errno_of stat "$MNT/nope" >out && test_cmp expect out &&
	errno_of stat "$MNT/t/norow" >out && test_cmp expect out &&
	errno_of stat "$MNT/t/r/cf:none" >out && test_cmp expect out &&
	errno_of write "$MNT/nope/r/cf:q" v >out && test_cmp expect out &&
	chown 1:1 "$MNT/t/r/cf:q" &&
	test "$(stat -c %u "$MNT/t/r/cf:q")" = "$(id -u)"
'

test_expect_success 'unmount' '
	cellfs_umount
'

# A data directory on its own small tmpfs, with a filler file to free:
# writes of $1 random bytes (base64) into a tmpfs of $2 MiB holding a
# filler of $3 MiB go on until ENOSPC; every acknowledged one survives a
# remount, and writes resume once the filler is gone.
full_disk() {
	mkdir -p "$DATA" && mount -t tmpfs -o size=${2}m tmpfs "$DATA" &&
	test_when_finished "cellfs_umount; umount \"$DATA\"" &&
	cellfs_mount flush_size=4M &&
	mkdir "$MNT/t" && mkdir "$MNT/t/r" &&
	val=$(head -c $1 /dev/urandom | base64 -w0) &&
	dd if=/dev/zero of="$DATA/filler" bs=1M count=$3 2>/dev/null &&
	i=0 && : >acked &&
	while test $i -lt 20000
	do
		r=$(errno_of write "$MNT/t/r/cf:c$i" "$val") &&
		if test "$r" = OK
		then
			echo $i >>acked
		else
			echo "$r" >refused && break
		fi
		i=$((i + 1))
	done &&
	echo ENOSPC >expect && test_cmp expect refused &&
	test $(wc -l <acked) -gt 5 &&
	grep "No space left on device" "$MNT/.log" >/dev/null &&
	rm "$DATA/filler" &&
	sleep 1 &&
	errno_of write "$MNT/t/r/cf:after" after >out &&
	echo OK >expect && test_cmp expect out &&
	cellfs_umount && cellfs_mount &&
	for i in $(cat acked)
	do
		test "$(cat "$MNT/t/r/cf:c$i")" = "$val" ||
		return 1
	done &&
	cat "$MNT/t/r/cf:after" >out && printf after >expect && test_cmp expect out
}

# 100 KB values: log records written with pwrite(2)
test_expect_success 'a full data disk: ENOSPC, nothing acknowledged lost, writes resume' '
	full_disk 75000 48 20
'

# 4 KB values: log records stored through the mapped segment, which a
# full disk stops when the segment cannot be preallocated further
test_expect_success 'a full data disk under small cells (the mapped log): the same' '
	rm -rf "$DATA" &&
	full_disk 3000 24 18
'

test_expect_success 'a damaged store file: EIO for its reads only, named by cellfs-fsck' '
	rm -rf "$DATA" &&
	cellfs_mount &&
	mkdir "$MNT/t" "$MNT/u" &&
	for i in 1 2 3 4 5 6 7 8; do
		echo "put r$i cf:q value-$i" >>"$MNT/t/.batch" &&
		echo "put r$i cf:q other-$i" >>"$MNT/u/.batch" || return 1
	done &&
	echo flush >"$MNT/.ctl" &&
	cellfs_umount &&
	sst=$(ls "$DATA"/data/t/*/cf/*.sst | head -1) &&
	test -f "$sst" &&
	# flip the byte (writing 0xff did nothing when it was 0xff already:
	# byte 20 is in the timestamp of the first cell, 0xff 256 ms a minute)
	b=$(od -A n -t u1 -j 20 -N 1 "$sst") &&
	printf "\\$(printf %o $((255 - b)))" |
		dd of="$sst" bs=1 seek=20 conv=notrunc 2>/dev/null &&
	test "$(od -A n -t u1 -j 20 -N 1 "$sst")" -eq $((255 - b)) &&
	cellfs_mount &&
	echo EIO >expect &&
	errno_of read "$MNT/t/r1/cf:q" >out && test_cmp expect out &&
	cat "$MNT/u/r1/cf:q" >out && printf other-1 >expect && test_cmp expect out &&
	cellfs_umount &&
	test_expect_code 1 "$FSCK" "$DATA" >fsck.out 2>&1 ;
	grep "$(basename "$sst")" fsck.out
'

test_expect_success 'a store file cut short under the running daemon: EIO for the reads that need it, the daemon lives' '
	rm -rf "$DATA" &&
	cellfs_mount &&
	test_when_finished "cellfs_umount" &&
	mkdir "$MNT/t" "$MNT/u" &&
	for i in $(seq 1000 1999); do
		echo "put r$i cf:q value-$i" || return 1
	done >>"$MNT/t/.batch" &&
	echo "put r1 cf:q other-1" >>"$MNT/u/.batch" &&
	echo flush >"$MNT/.ctl" &&
	sst=$(ls "$DATA"/data/t/*/cf/*.sst | head -1) &&
	truncate -s 100 "$sst" &&
	echo EIO >expect &&
	errno_of read "$MNT/t/r1999/cf:q" >out && test_cmp expect out &&
	errno_of read "$MNT/t/r1000/cf:q" >out && test_cmp expect out &&
	grep "$(basename "$sst"): block at .*: I/O error" "$MNT/.log" >/dev/null &&
	cat "$MNT/u/r1/cf:q" >out && printf other-1 >expect &&
	test_cmp expect out &&
	kill -0 $CELLFS_PID
'

test_done
