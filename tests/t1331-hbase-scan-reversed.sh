#!/bin/sh

test_description='cellfs: reversed scans, T/.scan/reversed&... (HBase REVERSED => true): rows down, cells of a row in forward order, start inclusive, stop exclusive, streaming'

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
	put c f:x@1000 gone
	EOF
	cat in >"$MNT/t/.batch" &&
	echo "deleteall c" >"$MNT/t/.batch"
'

# check Q EXPECT-LINES...: the scan Q shows exactly those lines.
check() {
	q=$1 && shift &&
	printf "%s\n" "$@" >expect &&
	test "$#" -gt 0 || : >expect
	cat "$S/$q" >out && test_cmp expect out
}

scans() {
	check reversed "b f:xx 1000 '"''"'" "b g:z 4000 z4" \
		"ab f:x 3000 3" "ab f:x%2Fy 3000 slash" \
		"a f:x 2000 2" "a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "reversed&start=ab&stop=a" "ab f:x 3000 3" \
		"ab f:x%2Fy 3000 slash" &&
	check "start=ab&reversed" "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" \
		"a f:x 2000 2" "a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "reversed&start=aa" "a f:x 2000 2" "a f:y 1000 hello%20world" \
		"a g:z 1500 z" &&
	check "reversed&start=zz&stop=ab" "b f:xx 1000 '"''"'" \
		"b g:z 4000 z4" &&
	check "reversed&stop=a&column=g" "b g:z 4000 z4" &&
	check "reversed&prefix=a&column=g" "a g:z 1500 z" &&
	check "reversed&prefix=a" "ab f:x 3000 3" "ab f:x%2Fy 3000 slash" \
		"a f:x 2000 2" "a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "reversed&limit=2" "b f:xx 1000 '"''"'" "b g:z 4000 z4" \
		"ab f:x 3000 3" "ab f:x%2Fy 3000 slash" &&
	check "reversed&column=f:x&versions=3" "ab f:x 3000 3" \
		"a f:x 2000 2" "a f:x 1000 1" &&
	check "reversed&time=1000,2000&versions=3" "b f:xx 1000 '"''"'" \
		"a f:x 1000 1" "a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "reversed&value=z4" "b g:z 4000 z4" &&
	check "reversed&start=a%00" "a f:x 2000 2" \
		"a f:y 1000 hello%20world" "a g:z 1500 z" &&
	check "reversed&start=0" &&
	check "reversed&prefix=c"
}

test_expect_success 'reversed queries in the memstore' '
	scans
'

test_expect_success 'the same after flush and after major_compact' '
	echo flush >"$MNT/t/.ctl" && scans &&
	echo "put b f:xx@5 older" >"$MNT/t/.batch" &&
	echo flush >"$MNT/t/.ctl" &&
	echo "deletecolumns b f:xx@5" >"$MNT/t/.batch" && scans &&
	echo major_compact >"$MNT/t/.ctl" && scans
'

test_expect_success 'across regions: the same rows' '
	echo "split ab" >"$MNT/t/.ctl" &&
	echo "split b" >"$MNT/t/.ctl" &&
	test $(wc -l <"$MNT/t/.regions") = 3 &&
	scans &&
	echo major_compact >"$MNT/t/.ctl" && scans
'

test_expect_success 'raw reversed: markers in their row, rows down' '
	mkdir "$MNT/w" &&
	printf "f VERSIONS=3\n" >"$MNT/w/.schema" &&
	printf "put r f:a@1000 a1\nput s f:a@2000 s2\n" >"$MNT/w/.batch" &&
	echo "deletecolumns r f:a@1500" >"$MNT/w/.batch" &&
	cat >expect <<-\EOF &&
	s f:a 2000 s2
	r f:a 1500 @DeleteColumn
	r f:a 1000 a1
	EOF
	cat "$MNT/w/.scan/raw&reversed" >out && test_cmp expect out &&
	echo "s f:a 2000 s2" >expect &&
	cat "$MNT/w/.scan/reversed" >out && test_cmp expect out
'

test_expect_success 'malformed: EINVAL and a .log line' '
	for q in "reversed=1" "reverse" "reversed&" "REVERSED" \
		 "reversed&limit=0"; do
		echo EINVAL >expect &&
		errno_of read "$S/$q" >out && test_cmp expect out &&
		grep -F "lookup $q: scan query: " "$MNT/.log" || return 1
	done
'

rows() {
	sed -n "s/^cellfs_scan_rows_total{table=\"big\"} //p" "$MNT/big/.stats"
}

test_expect_success 'results stream: head of a big reversed scan stops early' '
	mkdir "$MNT/big" &&
	awk "BEGIN { for (i = 0; i < 60000; i++)
		printf \"put r%06d cf:q@7 v%d\\n\", i, i }" >big.in &&
	cat big.in >"$MNT/big/.batch" &&
	echo flush >"$MNT/big/.ctl" &&
	awk "BEGIN { for (i = 1; i < 60000; i += 1000)
		printf \"put r%06d cf:q@8 w%d\\n\", i, i }" >big2.in &&
	cat big2.in >"$MNT/big/.batch" &&
	r0=$(rows) &&
	head -n 3 "$MNT/big/.scan/reversed" >out &&
	r1=$(rows) &&
	printf "r059999 cf:q 7 v59999\nr059998 cf:q 7 v59998\nr059997 cf:q 7 v59997\n" >expect &&
	test_cmp expect out &&
	echo "rows scanned for head: $((r1 - r0))" &&
	test $((r1 - r0)) -lt 10000 &&
	cat "$MNT/big/.scan/all" >fwd &&
	cat "$MNT/big/.scan/reversed" >rev &&
	test $(wc -l <rev) = 60000 &&
	LC_ALL=C sort -r fwd >expect && test_cmp expect rev &&
	grep -c " 8 w" rev >out && echo 60 >expect && test_cmp expect out &&
	printf "r001001 cf:q 8 w1001\nr001000 cf:q 7 v1000\n" >expect &&
	cat "$MNT/big/.scan/reversed&start=r001001&stop=r000999" >out &&
	test_cmp expect out
'

test_expect_success 'a reader going back starts the reversed scan again' '
	python3 - "$MNT/big/.scan/reversed&limit=3" <<-\EOF
	import os, sys
	fd = os.open(sys.argv[1], os.O_RDONLY)
	a = os.pread(fd, 4096, 0)
	b = os.pread(fd, 10, 5)
	c = os.pread(fd, 4096, 0)
	os.close(fd)
	assert a == c and b == a[5:15] and a.count(b"\n") == 3, (a, b, c)
	assert a.startswith(b"r059999 "), a
	EOF
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
