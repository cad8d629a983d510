#!/bin/sh

test_description='cellfs: the scan file T/.scan/QUERY: rows, columns, time range, versions, limit, HBase filters, streaming'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

S="$MNT/t/.scan"

test_expect_success 'mount; a table with two families' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\ng\n" >"$MNT/t/.schema" &&
	cat >in <<-\EOF &&
	put a f:x@1000 1
	put a f:x@2000 2
	put a f:y@1000 hello%20world
	put a g:z@1500 z
	put ab f:x@3000 3
	put ab f:x%2Fy@3000 slash
	put b f:xx@1000 '"''"'
	put b g:z@4000 z4
	EOF
	cat in >"$MNT/t/.batch"
'

# check Q EXPECT-LINES...: the scan Q shows exactly those lines, in the
# memstore, after flush and after major_compact.
check() {
	q=$1 && shift &&
	printf "%s\n" "$@" >expect &&
	test "$#" -gt 0 || : >expect
	cat "$S/$q" >out && test_cmp expect out
}

scans() {
	check all "a f:x 2000 2" \
		"a f:y 1000 hello%20world" "a g:z 1500 z" "ab f:x 3000 3" \
		"ab f:x%2Fy 3000 slash" "b f:xx 1000 '"''"'" "b g:z 4000 z4" &&
	check "start=ab&stop=b" "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" &&
	check "start=ab" "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" \
		"b f:xx 1000 '"''"'" "b g:z 4000 z4" &&
	check "prefix=a&column=g" "a g:z 1500 z" &&
	check "column=f:x&versions=3" "a f:x 2000 2" "a f:x 1000 1" \
		"ab f:x 3000 3" &&
	check "column=f:x&column=g:z&prefix=a" "a f:x 2000 2" "a g:z 1500 z" \
		"ab f:x 3000 3" &&
	check "time=1000,2000&versions=3&prefix=a" "a f:x 1000 1" \
		"a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "time=3000," "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" \
		"b g:z 4000 z4" &&
	check "limit=2" "a f:x 2000 2" "a f:y 1000 hello%20world" \
		"a g:z 1500 z" "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" &&
	check "colprefix=x&limit=2" "a f:x 2000 2" "ab f:x 3000 3" \
		"ab f:x%2Fy 3000 slash" &&
	check "qualifier=x%2Fy" "ab f:x%2Fy 3000 slash" &&
	check "value=z4" "b g:z 4000 z4" &&
	check "value='"''"'" "b f:xx 1000 '"''"'" &&
	check "ts=1000" "a f:x 1000 1" "a f:y 1000 hello%20world" \
		"b f:xx 1000 '"''"'" &&
	check "ts=1000,4000&versions=1&column=f:x" "a f:x 1000 1" &&
	check "prefix=c"
}

test_expect_success 'queries in the memstore' '
	scans
'

test_expect_success 'the same after flush and after major_compact' '
	echo flush >"$MNT/t/.ctl" && scans &&
	echo major_compact >"$MNT/t/.ctl" && scans
'

test_expect_success 'raw: delete markers and what they cover, until major_compact' '
	mkdir "$MNT/w" &&
	printf "f VERSIONS=3\n" >"$MNT/w/.schema" &&
	printf "put r f:a@1000 a1\nput r f:a@2000 a2\nput r f:b@1000 b1\n" \
		>"$MNT/w/.batch" &&
	echo "deletecolumns r f:a@1500" >"$MNT/w/.batch" &&
	echo "delete r f:b@1000" >"$MNT/w/.batch" &&
	echo "deletefamily r f@500" >"$MNT/w/.batch" &&
	cat >expect <<-\EOF &&
	r f: 500 @DeleteFamily
	r f:a 2000 a2
	r f:a 1500 @DeleteColumn
	r f:a 1000 a1
	r f:b 1000 @Delete
	r f:b 1000 b1
	EOF
	cat "$MNT/w/.scan/raw" >out && test_cmp expect out &&
	echo "r f:a 2000 a2" >expect.live &&
	cat "$MNT/w/.scan/all" >out && test_cmp expect.live out &&
	echo flush >"$MNT/w/.ctl" &&
	cat "$MNT/w/.scan/raw" >out && test_cmp expect out &&
	printf "r f:a 1500 @DeleteColumn\nr f:a 1000 a1\nr f:b 1000 @Delete\nr f:b 1000 b1\n" \
		>expect.ts &&
	cat "$MNT/w/.scan/raw&ts=1500,1000&column=f:b&column=f:a" >out &&
	test_cmp expect.ts out &&
	echo "r f:b 1000 b1" >expect.v &&
	cat "$MNT/w/.scan/raw&value=b1" >out && test_cmp expect.v out &&
	cat "$MNT/w/.scan/raw&time=1001,1600" >out &&
	echo "r f:a 1500 @DeleteColumn" >expect.t && test_cmp expect.t out &&
	echo major_compact >"$MNT/w/.ctl" &&
	cat "$MNT/w/.scan/raw" >out && test_cmp expect.live out
'

test_expect_success 'raw with KEEP_DELETED_CELLS: major_compact keeps them' '
	mkdir "$MNT/kd" &&
	printf "f VERSIONS=3 KEEP_DELETED_CELLS=TRUE\n" >"$MNT/kd/.schema" &&
	printf "put r f:a@1000 a1\n" >"$MNT/kd/.batch" &&
	echo "deletecolumns r f:a@1500" >"$MNT/kd/.batch" &&
	printf "r f:a 1500 @DeleteColumn\nr f:a 1000 a1\n" >expect &&
	echo major_compact >"$MNT/kd/.ctl" &&
	cat "$MNT/kd/.scan/raw" >out && test_cmp expect out &&
	cat "$MNT/kd/.scan/all" >out && test_must_be_empty out
'

test_expect_success '.scan lists nothing and is unlisted' '
	ls -A "$MNT/t/.scan" >out && test_must_be_empty out &&
	ls -A "$MNT/t" >out && ! grep scan out
'

test_expect_success 'malformed queries: EINVAL and a .log line' '
	for q in bogus "limit=0" "limit=x" "versions=0" "time=5,5" "time=5" \
		 "start=%zz" "column=" "column=f:%zz" "ts=" "ts=1," "raw=1" \
		 "all&limit=1"; do
		echo EINVAL >expect &&
		errno_of read "$S/$q" >out && test_cmp expect out &&
		grep -F "lookup $q: scan query: " "$MNT/.log" || return 1
	done &&
	echo ENOENT >expect &&
	errno_of read "$S/column=nofam" >out && test_cmp expect out &&
	grep -F "open column=nofam: scan query: unknown family" "$MNT/.log"
'

test_expect_success 'the scan file is read-only' '
	echo EACCES >expect &&
	errno_of write "$S/all" x >out && test_cmp expect out
'

rows() {
	sed -n "s/^cellfs_scan_rows_total{table=\"big\"} //p" "$MNT/big/.stats"
}

test_expect_success 'results stream: head reads a few rows of a big table' '
	mkdir "$MNT/big" &&
	awk "BEGIN { for (i = 0; i < 60000; i++)
		printf \"put r%06d cf:q v%d\\n\", i, i }" >big.in &&
	cat big.in >"$MNT/big/.batch" &&
	r0=$(rows) &&
	head -n 3 "$MNT/big/.scan/all" >out &&
	r1=$(rows) &&
	printf "r000000 cf:q %s v0\nr000001 cf:q %s v1\nr000002 cf:q %s v2\n" \
		$(sed -n "1s/^r000000 cf:q \([0-9]*\) .*/\1/p" out) \
		$(sed -n "2s/^r000001 cf:q \([0-9]*\) .*/\1/p" out) \
		$(sed -n "3s/^r000002 cf:q \([0-9]*\) .*/\1/p" out) >expect &&
	test_cmp expect out &&
	echo "rows scanned for head: $((r1 - r0))" &&
	test $((r1 - r0)) -lt 10000 &&
	wc -l <"$MNT/big/.scan/all" >out && echo 60000 >expect &&
	test_cmp expect out
'

test_expect_success 'a reader going back starts the scan again' '
	python3 - "$MNT/big/.scan/limit=3" <<-\EOF
	import os, sys
	fd = os.open(sys.argv[1], os.O_RDONLY)
	a = os.pread(fd, 4096, 0)
	b = os.pread(fd, 10, 5)
	c = os.pread(fd, 4096, 0)
	os.close(fd)
	assert a == c and b == a[5:15] and a.count(b"\n") == 3, (a, b, c)
	EOF
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
