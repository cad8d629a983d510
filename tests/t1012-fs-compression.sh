#!/bin/sh

test_description='cellfs: COMPRESSION=ZSTD set through .schema; store files written before (snappy) still read after the switch; flush, major compaction, remount and cellfs-fsck on zstd store files'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"
FSCK="$CELLFS_BUILD/cellfs-fsck"
ZSTD_MAGIC=" 28 b5 2f fd"

# puts FROM TO: a .batch of rows rFROM..rTO, each with two compressible
# cells
puts() {
	for i in $(seq "$1" "$2"); do
		echo "put r$i cf:a value-$i-of-a-column-that-compresses-well"
		echo "put r$i cf:b $i"
	done >>"$T/.batch"
}

# check FROM TO: the table holds exactly the cells of rFROM..rTO (one
# scan, its timestamps cut), and every 50th row's cells read back through
# their files
check() {
	for i in $(seq "$1" "$2"); do
		echo "r$i cf:a value-$i-of-a-column-that-compresses-well"
		echo "r$i cf:b $i"
	done | LC_ALL=C sort >check.expect &&
	cat "$T/.scan/all" >check.scan &&
	cut -d " " -f 1,2,4- check.scan >check.out &&
	test_cmp check.expect check.out &&
	for i in $(seq "$1" 50 "$2"); do
		test "$(cat "$T/r$i/cf:a")" = \
			"value-$i-of-a-column-that-compresses-well" &&
		test "$(cat "$T/r$i/cf:b")" = "$i" || return 1
	done
}

# magic FILE: the first 4 bytes of FILE (its first data block), in hex
magic() {
	od -A n -t x1 -N 4 "$1"
}

ssts() {
	ls "$DATA"/data/t/*/cf/*.sst
}

# zstd_files: every store file of t is zstd.  The reads of a check may
# start a compaction (read-driven) that deletes the files listed before
# their magic is read: a file gone is passed over, and the listing taken
# again (up to 100 times) until one file was read
zstd_files() {
	n=0
	while test $n -lt 100; do
		ssts >files && test -s files || return 1
		read=0
		while read -r f; do
			m=$(magic "$f" 2>/dev/null) && test -n "$m" || continue
			test "$m" = "$ZSTD_MAGIC" || return 1
			read=$((read + 1))
		done <files
		test $read -gt 0 && return 0
		n=$((n + 1))
	done
	return 1
}

test_expect_success 'a table with COMPRESSION=SNAPPY: its flushed store file holds snappy blocks' '
	cellfs_mount &&
	mkdir "$T" &&
	printf "cf COMPRESSION=SNAPPY\n" >"$T/.schema" &&
	puts 1 400 &&
	echo flush >"$T/.ctl" &&
	test "$(ssts | wc -l)" -eq 1 &&
	old=$(ssts) &&
	echo "$old" >old-sst &&
	test "$(magic "$old")" != "$ZSTD_MAGIC"
'

test_expect_success 'COMPRESSION=ZSTD through .schema: spelled out, and the snappy file still reads' '
	printf "cf COMPRESSION=ZSTD\n" >"$T/.schema" &&
	echo "cf VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER KEEP_DELETED_CELLS=FALSE COMPRESSION=ZSTD BLOOMFILTER=ROW BLOCKSIZE=65536 IN_MEMORY=FALSE ENCODING=NONE" >expect &&
	test_cmp expect "$T/.schema" &&
	printf "cf compression=zstd\n" >"$T/.schema" &&
	test_cmp expect "$T/.schema" &&
	test "$(ssts)" = "$(cat old-sst)" &&
	check 1 400
'

test_expect_success 'a flush under ZSTD writes zstd blocks; both files read' '
	puts 401 800 &&
	echo flush >"$T/.ctl" &&
	test "$(ssts | wc -l)" -eq 2 &&
	ssts | tr "\n" "\0" | xargs -0 cat | wc -c >two-sizes &&
	new=$(ssts | grep -v -F "$(cat old-sst)") &&
	test "$(magic "$new")" = "$ZSTD_MAGIC" &&
	check 1 800
'

test_expect_success 'a major compaction leaves one zstd file, smaller than the two (reads may have compacted them already)' '
	echo major_compact >"$T/.ctl" &&
	test "$(ssts | wc -l)" -eq 1 &&
	test "$(ssts)" != "$(cat old-sst)" &&
	test "$(magic "$(ssts)")" = "$ZSTD_MAGIC" &&
	test "$(stat -c %s "$(ssts)")" -lt "$(cat two-sizes)" &&
	check 1 800 &&
	test "$(ls "$T/r800")" = "cf:a
cf:b"
'

test_expect_success 'after a remount the schema and every cell read back; cellfs-fsck checks the zstd store file: nothing found' '
	cellfs_umount &&
	cellfs_mount &&
	test_cmp expect "$T/.schema" &&
	check 1 800 &&
	cellfs_umount &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

test_expect_success 'a damaged zstd block: EIO for its reads only, cellfs-fsck names the file, exit 1' '
	sst=$(ssts) &&
	cp "$sst" sst.orig &&
	off=$(($(stat -c %s "$sst") / 4)) &&
	b=$(od -A n -t u1 -j $off -N 1 "$sst") &&
	printf "\\$(printf %o $((255 - b)))" |
		dd of="$sst" bs=1 seek=$off conv=notrunc 2>/dev/null &&
	test "$(od -A n -t u1 -j $off -N 1 "$sst")" -eq $((255 - b)) &&
	test_expect_code 1 "$FSCK" "$DATA" >fsck.out 2>&1 &&
	grep -F "$(basename "$sst"): checksum mismatch at offset" fsck.out &&
	cellfs_mount &&
	eio=0 good=0 &&
	for i in $(seq 1 800); do
		case $(errno_of read "$T/r$i/cf:b") in
		EIO) eio=$((eio + 1)) ;;
		OK) good=$((good + 1)) ;;
		*) return 1 ;;
		esac
	done &&
	test $eio -gt 0 && test $good -gt 0 &&
	test $((eio + good)) -eq 800 &&
	grep "$(basename "$sst"): block at .*: " "$MNT/.log" >/dev/null &&
	cellfs_umount &&
	cp sst.orig "$sst" &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out &&
	cellfs_mount &&
	check 1 800
'

test_expect_success 'kill -9 after a zstd flush and under more puts; cellfs-fsck --repair, remount: every cell is intact' '
	puts 801 1000 &&
	echo flush >"$T/.ctl" &&
	puts 1001 1100 &&
	cellfs_kill9 &&
	"$FSCK" --repair "$DATA" >out 2>&1 &&
	cellfs_mount &&
	check 1 1100 &&
	zstd_files
'

test_expect_success 'an unknown compression is EINVAL with one .log line, and changes nothing' '
	echo EINVAL >expect &&
	errno_of write "$T/.schema" "cf COMPRESSION=LZ4
" >out && test_cmp expect out &&
	grep " COMPRESSION=ZSTD " "$T/.schema" >/dev/null &&
	last_log >out &&
	echo "warn write .schema: bad setting value: Invalid argument" >expect &&
	test_cmp expect out
'

test_expect_success 'the tsdb table tsd/ makes is COMPRESSION=ZSTD, ENCODING=TSDB, BLOCKSIZE=262144; its points read back after a flush and a major compaction' '
	for i in $(seq 0 99); do
		echo "sys.cpu.user $((1356998400 + 10 * i)) $i.5 host=web01"
	done >>"$MNT/tsd/put" &&
	grep "^t .* COMPRESSION=ZSTD .* BLOCKSIZE=262144 .* ENCODING=TSDB$" "$MNT/tsdb/.schema" &&
	grep "^id .* COMPRESSION=SNAPPY .* BLOCKSIZE=65536 " "$MNT/tsdb-uid/.schema" &&
	echo flush >"$MNT/tsdb/.ctl" &&
	echo major_compact >"$MNT/tsdb/.ctl" &&
	f=$(ls "$DATA"/data/tsdb/*/t/*.sst) &&
	test "$(magic "$f")" = "$ZSTD_MAGIC" &&
	q="start=1356998400&end=1356999400&m=sum:sys.cpu.user" &&
	cat "$MNT/tsd/q/$q" >out &&
	for i in $(seq 0 99); do
		echo "sys.cpu.user $((1356998400 + 10 * i)) $i.5 host=web01"
	done >expect &&
	test_cmp expect out
'

test_done
