#!/bin/sh

test_description='cellfs: HBase reads through the mount: a cell over a time range, its N newest versions (REST /table/row/col/START,END?v=N)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

test_expect_success 'mount; family f VERSIONS=3, four versions of f:q' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\n" >"$MNT/t/.schema" &&
	mkdir "$R" &&
	for ts in 1000 2000 3000 4000; do
		printf "v$ts" >"$R/f:q@$ts" || return 1
	done
'

# check_versions: the same answers in memstore, store files, compacted.
check_versions() {
	printf "4000 v4000\n3000 v3000\n2000 v2000\n" >expect &&
	cat "$R/f:q@v=9" >out && test_cmp expect out &&
	printf "4000 v4000\n3000 v3000\n" >expect &&
	cat "$R/f:q@v=2" >out && test_cmp expect out &&
	printf "3000 v3000\n2000 v2000\n" >expect &&
	cat "$R/f:q@1500,3500,v=5" >out && test_cmp expect out &&
	printf "3000 v3000\n" >expect &&
	cat "$R/f:q@,3001,v=1" >out && test_cmp expect out &&
	printf v3000 >expect &&
	cat "$R/f:q@1500,3500" >out && test_cmp expect out &&
	echo "5 3" >expect &&
	stat -c "%s %Y" "$R/f:q@1500,3500" >out && test_cmp expect out &&
	echo "22 4" >expect &&
	stat -c "%s %Y" "$R/f:q@3000,,v=2" >out && test_cmp expect out &&
	printf v4000 >expect &&
	cat "$R/f:q@2500," >out && test_cmp expect out &&
	echo ENOENT >expect &&
	errno_of read "$R/f:q@1000,2000" >out && test_cmp expect out &&
	errno_of read "$R/f:q@5000," >out && test_cmp expect out &&
	errno_of read "$R/f:x@v=3" >out && test_cmp expect out
}

test_expect_success 'time ranges and version counts' '
	check_versions
'

test_expect_success 'the same after flush and after major_compact' '
	echo flush >"$MNT/t/.ctl" && check_versions &&
	echo major_compact >"$MNT/t/.ctl" && check_versions
'

test_expect_success 'query names are unlisted, and ls of one works' '
	echo f:q >expect && ls "$R" >out && test_cmp expect out &&
	echo "$R/f:q@v=2" >expect && ls "$R/f:q@v=2" >out &&
	test_cmp expect out
'

test_expect_success 'values are escaped in lines; the empty value is '"''"'' '
	printf "a b\n" >"$R/f:e@10" && : >"$R/f:e@20" &&
	printf "20 %s\n10 a%%20b%%0A\n" "'"''"'" >expect &&
	cat "$R/f:e@v=3" >out && test_cmp expect out
'

test_expect_success 'query names are read-only: EACCES, EPERM, logged' '
	echo EACCES >expect &&
	errno_of write "$R/f:q@v=2" x >out && test_cmp expect out &&
	grep "open f:q@v=2: read-only file" "$MNT/.log" &&
	echo EPERM >expect &&
	errno_of unlink "$R/f:q@v=2" >out && test_cmp expect out &&
	errno_of write "$R/f:new@v=2" x >out && test_cmp expect out &&
	grep "create f:new@v=2: a query name is read-only" "$MNT/.log"
'

test_expect_success 'malformed query names: EINVAL and a .log line' '
	for n in "f:q@v=0" "f:q@v=" "f:q@3,2" "f:q@2,2" "f:q@1,2,v=x" \
		 "f:q@x" "f:q@1,2,3" "f:q@v=1,2" "f:q@-1,5"; do
		echo EINVAL >expect &&
		errno_of stat "$R/$n" >out && test_cmp expect out &&
		grep -F "lookup $n: not a cell name" "$MNT/.log" || return 1
	done
'

test_expect_success 'MIN_VERSIONS with TTL: expired versions beyond MIN_VERSIONS go' '
	mkdir "$MNT/m" &&
	printf "f VERSIONS=5 MIN_VERSIONS=2 TTL=86400\n" >"$MNT/m/.schema" &&
	mkdir "$MNT/m/r" &&
	for ts in 1000 2000 3000; do
		printf "o$ts" >"$MNT/m/r/f:q@$ts" || return 1
	done &&
	printf "3000 o3000\n2000 o2000\n" >expect &&
	cat "$MNT/m/r/f:q@v=5" >out && test_cmp expect out &&
	echo v >"$MNT/m/r/f:q" &&
	cat "$MNT/m/r/f:q@v=5" >out &&
	test $(wc -l <out) = 2 && sed -n 2p out >out2 &&
	echo "3000 o3000" >expect && test_cmp expect out2 &&
	echo major_compact >"$MNT/m/.ctl" &&
	cat "$MNT/m/r/f:q@v=5" >out3 && test_cmp out out3
'

test_expect_success 'KEEP_DELETED_CELLS: a range ending before the delete sees the cells' '
	mkdir "$MNT/k" &&
	printf "f VERSIONS=3 KEEP_DELETED_CELLS=TRUE\ng VERSIONS=3\n" \
		>"$MNT/k/.schema" &&
	mkdir "$MNT/k/r" &&
	printf a >"$MNT/k/r/f:q@1000" && printf b >"$MNT/k/r/f:q@2000" &&
	printf a >"$MNT/k/r/g:q@1000" && printf b >"$MNT/k/r/g:q@2000" &&
	rm "$MNT/k/r/f:q" "$MNT/k/r/g:q" &&
	printf "2000 b\n1000 a\n" >expect &&
	for step in memstore flush major_compact; do
		test $step = memstore || echo $step >"$MNT/k/.ctl" &&
		cat "$MNT/k/r/f:q@,3000,v=3" >out && test_cmp expect out &&
		echo ENOENT >expect.e &&
		errno_of read "$MNT/k/r/f:q@v=3" >out && test_cmp expect.e out &&
		errno_of read "$MNT/k/r/g:q@,3000,v=3" >out &&
		test_cmp expect.e out || return 1
	done
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
