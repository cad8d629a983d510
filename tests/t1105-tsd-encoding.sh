#!/bin/sh

test_description='tsd/: the TSDB block encoding of tsdb (ENCODING=TSDB, docs/tsblock_format.md): an older tsdb written without it still reads; after the switch, flushes and compactions write encoded blocks whose cells, dumps and queries read back byte-exact, across remount, cellfs-fsck, and a kill -9 with cellfs-fsck --repair'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

FSCK="$CELLFS_BUILD/cellfs-fsck"
METRICS="e.int e.flt e.ms e.big"
BASE=1356998400

# points HOUR0 HOURS: put lines for HOURS finished hours from BASE +
# HOUR0 hours: a counter growing by steps of every integer width, a
# two-decimal gauge on two hosts, seconds and milliseconds mixed in one
# row, and large and negative integers; one point every 10 s per series
points() {
	awk -v b=$BASE -v h0="$1" -v hs="$2" 'BEGIN {
		c = 1000; g = 5000; srand(h0 + 1)
		for (t = b + h0 * 3600; t < b + (h0 + hs) * 3600; t += 10) {
			c += int(rand() * (t % 7 == 0 ? 70000 : 300))
			g += int(rand() * 201) - 100
			printf "e.int %d %d host=a\n", t, c
			printf "e.flt %d %d.%02d host=a\n", t, g / 100, g % 100
			printf "e.flt %d %d.%02d host=b\n", t, (g + 77) / 100, (g + 77) % 100
			if (t % 20 == 0)
				printf "e.ms %d %d host=a\n", t, c % 1000
			else
				printf "e.ms %d%03d %d host=a\n", t, t % 997, -c
			printf "e.big %d %s%d%06d host=a\n", t, (t % 3 == 0 ? "-" : ""), c, t % 1000000
		}
	}'
}

# dumps: every metric dumped (which compacts each finished row)
dumps() {
	for m in $METRICS; do
		cat "$MNT/tsd/metrics/$m" || return 1
	done
}

# queries: two aggregations over the whole range
queries() {
	e=$((BASE + 8 * 3600)) &&
	cat "$MNT/tsd/q/start=$BASE&end=$e&m=sum:e.flt" &&
	cat "$MNT/tsd/q/start=$BASE&end=$e&m=sum:1m-avg:e.int" &&
	cat "$MNT/tsd/q/start=$BASE&end=$e&m=sum:e.ms"
}

ssts() {
	ls "$DATA"/data/tsdb/*/t/*.sst
}

# dtype FILE: the trailer type byte of FILE's last data block, in hex
# (the data blocks end where the filter block starts: footer bytes
# 32..39, docs/sst_format.md): low 4 bits the compression, high 4 the
# encoding
dtype() {
	sz=$(stat -c %s "$1") &&
	fo=$(od -A n -t u8 -j $((sz - 32)) -N 8 "$1" | tr -d " ") &&
	od -A n -t x1 -j $((fo - 5)) -N 1 "$1" | tr -d " "
}

# encoded FILE: FILE's last data block is TSDB-encoded (type 0x1?: zstd
# or, when zstd saves nothing on the encoded bytes, none)
encoded() {
	case $(dtype "$1") in
	10|12) return 0 ;;
	*) return 1 ;;
	esac
}

test_expect_success 'an older tsdb: COMPRESSION=ZSTD, no encoding (as before ENCODING existed); its flushed file has plain zstd blocks' '
	cellfs_mount &&
	mkdir "$MNT/tsdb" &&
	printf "t COMPRESSION=ZSTD\n" >"$MNT/tsdb/.schema" &&
	grep "^t .* COMPRESSION=ZSTD .* ENCODING=NONE$" "$MNT/tsdb/.schema" &&
	points 0 2 >in-a &&
	cat in-a >>"$MNT/tsd/put" &&
	dumps >dump-a &&
	test $(wc -l <dump-a) = $(wc -l <in-a) &&
	echo flush >"$MNT/tsdb/.ctl" &&
	test "$(ssts | wc -l)" -eq 1 &&
	ssts >old-sst &&
	test "$(dtype "$(ssts)")" = 02 &&
	cat "$MNT/tsdb/.scan/all" >scan-a &&
	queries >q-a &&
	test -s q-a
'

command -v sqlite3 >/dev/null && test_set_prereq SQLITE3

test_expect_success SQLITE3 'the directory as binaries before ENCODING left it (no ENCODING word in the catalog nor in .regioninfo) opens and reads the same' '
	cellfs_umount &&
	sqlite3 "$DATA/catalog.db" "UPDATE families SET settings = replace(settings, '"' ENCODING=NONE'"', '"''"')" &&
	test "$(sqlite3 "$DATA/catalog.db" "SELECT count(*) FROM families WHERE settings LIKE '"'%ENCODING%'"'")" = 0 &&
	for f in "$DATA"/data/*/*/.regioninfo; do
		sed "s/ ENCODING=NONE//" "$f" >ri && cat ri >"$f" || return 1
	done &&
	! grep -l ENCODING "$DATA"/data/*/*/.regioninfo &&
	cellfs_mount &&
	grep "^t .* COMPRESSION=ZSTD .* ENCODING=NONE$" "$MNT/tsdb/.schema" &&
	cat "$MNT/tsdb/.scan/all" >out && test_cmp scan-a out &&
	dumps >out && test_cmp dump-a out &&
	queries >out && test_cmp q-a out
'

test_expect_success 'ENCODING=TSDB through .schema: spelled out; the older file reads byte-exact' '
	printf "t COMPRESSION=ZSTD ENCODING=TSDB\n" >"$MNT/tsdb/.schema" &&
	echo "t VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER KEEP_DELETED_CELLS=FALSE COMPRESSION=ZSTD BLOOMFILTER=ROW BLOCKSIZE=65536 IN_MEMORY=FALSE ENCODING=TSDB" >expect &&
	test_cmp expect "$MNT/tsdb/.schema" &&
	cp expect schema-tsdb &&
	test "$(ssts)" = "$(cat old-sst)" &&
	cat "$MNT/tsdb/.scan/all" >out && test_cmp scan-a out &&
	dumps >out && test_cmp dump-a out &&
	queries >out && test_cmp q-a out
'

test_expect_success 'points flushed after the switch: blocks of single points and of the markers row compaction left are stored unencoded (type 0x02); both files read' '
	points 2 2 >in-b &&
	cat in-b >>"$MNT/tsd/put" &&
	dumps >dump-ab &&
	test $(wc -l <dump-ab) = $(($(wc -l <in-a) + $(wc -l <in-b))) &&
	queries >q-ab &&
	cat "$MNT/tsdb/.scan/all" >scan-ab &&
	echo flush >"$MNT/tsdb/.ctl" &&
	test "$(ssts | wc -l)" -eq 2 &&
	new=$(ssts | grep -v -F "$(cat old-sst)") &&
	test "$(dtype "$new")" = 02 &&
	test "$(dtype "$(cat old-sst)")" = 02 &&
	cat "$MNT/tsdb/.scan/all" >out && test_cmp scan-ab out &&
	dumps >out && test_cmp dump-ab out &&
	queries >out && test_cmp q-ab out
'

test_expect_success 'a major compaction rewrites both into one encoded file; every cell (value, version), dump and query the same' '
	ssts | tr "\n" "\0" | xargs -0 cat | wc -c >two-sizes &&
	echo major_compact >"$MNT/tsdb/.ctl" &&
	test "$(ssts | wc -l)" -eq 1 &&
	encoded "$(ssts)" &&
	test "$(stat -c %s "$(ssts)")" -lt "$(cat two-sizes)" &&
	cat "$MNT/tsdb/.scan/all" >out && test_cmp scan-ab out &&
	dumps >out && test_cmp dump-ab out &&
	queries >out && test_cmp q-ab out
'

# hex FILE: the bytes of FILE as one string of lower-case hex digits
hex() {
	od -An -v -tx1 "$1" | tr -d " \n" && echo
}

test_expect_success 'a compacted cell read from an encoded block is OpenTSDB'"'"'s bytes (docs/tsd_format.md'"'"'s example)' '
	cat >few <<-\EOF &&
	e.few 1292148002500 3 host=a
	e.few 1292148000 1 host=a
	e.few 1292148001 2 host=a
	e.few 1292151599 300 host=a
	EOF
	cat few >>"$MNT/tsd/put" &&
	cat "$MNT/tsd/metrics/e.few" >out &&
	test $(wc -l <out) = 4 &&
	echo flush >"$MNT/tsdb/.ctl" &&
	echo major_compact >"$MNT/tsdb/.ctl" &&
	encoded "$(ssts)" &&
	cellfs_umount &&
	cellfs_mount &&
	row="%00%00%05M%04%9D%20%00%00%01%00%00%01" &&
	ls "$MNT/tsdb/$row" >out &&
	echo "t:%00%00%00%10%F0%02q%00%E0%F1" >expect &&
	test_cmp expect out &&
	hex "$MNT/tsdb/$row/t:%00%00%00%10%F0%02q%00%E0%F1" >out &&
	echo 010203012c01 >expect &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	e.few 1292148000 1 host=a
	e.few 1292148001 2 host=a
	e.few 1292148002500 3 host=a
	e.few 1292151599 300 host=a
	EOF
	cat "$MNT/tsd/metrics/e.few" >out &&
	test_cmp expect out &&
	cat "$MNT/tsdb/.scan/all" >scan-all &&
	grep -v "^$row " scan-all >out &&
	test_cmp scan-ab out &&
	mv scan-all scan-ab
'

test_expect_success 'after a remount: the schema, every cell, dump and query; cellfs-fsck finds nothing' '
	cellfs_umount &&
	cellfs_mount &&
	test_cmp schema-tsdb "$MNT/tsdb/.schema" &&
	cat "$MNT/tsdb/.scan/all" >out && test_cmp scan-ab out &&
	dumps >out && test_cmp dump-ab out &&
	queries >out && test_cmp q-ab out &&
	cellfs_umount &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

test_expect_success 'kill -9 after an encoded compaction, a flush and more puts; cellfs-fsck --repair, remount: every point intact' '
	cellfs_mount &&
	points 4 2 >in-c &&
	cat in-c >>"$MNT/tsd/put" &&
	dumps >/dev/null &&
	echo flush >"$MNT/tsdb/.ctl" &&
	echo major_compact >"$MNT/tsdb/.ctl" &&
	encoded "$(ssts)" &&
	points 6 1 >in-e &&
	cat in-e >>"$MNT/tsd/put" &&
	echo flush >"$MNT/tsdb/.ctl" &&
	points 7 1 >in-d &&
	cat in-d >>"$MNT/tsd/put" &&
	dumps >dump-abcd &&
	test $(wc -l <dump-abcd) = $(cat in-a in-b in-c in-e in-d | wc -l) &&
	cellfs_kill9 &&
	"$FSCK" --repair "$DATA" >fsck.out 2>&1 &&
	cellfs_mount &&
	dumps >out && test_cmp dump-abcd out &&
	echo major_compact >"$MNT/tsdb/.ctl" &&
	encoded "$(ssts)" &&
	dumps >out && test_cmp dump-abcd out &&
	cellfs_umount &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

test_expect_success 'ENCODING=LZ4 is EINVAL with one .log line, and changes nothing' '
	cellfs_mount &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsdb/.schema" "t ENCODING=LZ4
" >out && test_cmp expect out &&
	grep " ENCODING=TSDB$" "$MNT/tsdb/.schema" &&
	last_log >out &&
	echo "warn write .schema: bad setting value: Invalid argument" >expect &&
	test_cmp expect out
'

test_done
