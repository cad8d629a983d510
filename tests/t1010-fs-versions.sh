#!/bin/sh

test_description='cellfs: versions, the webtable example of the HBase reference guide'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/webtable"
R="$T/com.cnn.www"

test_expect_success 'mount, make webtable with contents (VERSIONS=3) and anchor' '
	cellfs_mount &&
	mkdir "$T" &&
	printf "contents VERSIONS=3\nanchor\n" >"$T/.schema" &&
	cut -d" " -f1,2 "$T/.schema" >out &&
	printf "anchor VERSIONS=1\ncontents VERSIONS=3\n" >expect &&
	sort out >out.s && test_cmp expect out.s
'

test_expect_success 'the cells of the guide at explicit timestamps' '
	mkdir "$R" &&
	echo "<html>a" >"$R/contents:html@3" &&
	echo "<html>b" >"$R/contents:html@5" &&
	echo "<html>c" >"$R/contents:html@6" &&
	echo "CNN" >"$R/anchor:cnnsi.com@9" &&
	echo "CNN.com" >"$R/anchor:my.look.ca@8" &&
	ls "$R" >out &&
	printf "anchor:cnnsi.com\nanchor:my.look.ca\ncontents:html\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a read is the latest version, @TS reads that version' '
	echo "<html>c" >expect && test_cmp expect "$R/contents:html" &&
	echo "<html>b" >expect && test_cmp expect "$R/contents:html@5" &&
	echo "<html>a" >expect && test_cmp expect "$R/contents:html@3" &&
	test "$(stat -c %Y "$R/contents:html@5")" = 0 &&
	echo ENOENT >expect &&
	errno_of stat "$R/contents:html@4" >out && test_cmp expect out
'

test_expect_success '.versions lists every kept version' '
	ls -U "$R/.versions" >out &&
	cat >expect <<-\EOF &&
	anchor:cnnsi.com@9
	anchor:my.look.ca@8
	contents:html@6
	contents:html@5
	contents:html@3
	EOF
	test_cmp expect out &&
	echo "<html>b" >expect && test_cmp expect "$R/.versions/contents:html@5"
'

test_expect_success 'mv onto a newer cell replaces it, keeping the moved mtime' '
	M="$T/mv.row" &&
	mkdir "$M" &&
	echo moved >"$M/contents:old@100" &&
	echo newer1 >"$M/contents:new@200" &&
	echo newer2 >"$M/contents:new" &&
	mv "$M/contents:old" "$M/contents:new" &&
	echo moved >expect && test_cmp expect "$M/contents:new" &&
	test "$(stat -c %.3Y "$M/contents:new")" = 0.100 &&
	ls "$M" >out && echo contents:new >expect && test_cmp expect out &&
	ls "$M/.versions" >out && echo contents:new@100 >expect &&
	test_cmp expect out
'

test_expect_success 'a fourth version pushes out the oldest (VERSIONS=3)' '
	echo "<html>d" >"$R/contents:html@7" &&
	ls "$R/.versions" | grep contents >out &&
	printf "contents:html@5\ncontents:html@6\ncontents:html@7\n" >expect &&
	sort out >out.s && test_cmp expect out.s
'

test_expect_success 'rm F:Q@TS deletes that version only' '
	rm "$R/contents:html@7" &&
	echo "<html>c" >expect && test_cmp expect "$R/contents:html"
'

test_expect_success 'a put after a delete is visible even with an older ts' '
	rm "$R/anchor:cnnsi.com" &&
	echo ENOENT >expect &&
	errno_of stat "$R/anchor:cnnsi.com" >out && test_cmp expect out &&
	echo "again" >"$R/anchor:cnnsi.com@2" &&
	echo again >expect && test_cmp expect "$R/anchor:cnnsi.com"
'

test_expect_success 'O_APPEND appends to the latest value' '
	printf "x" >"$R/anchor:app" &&
	printf "y" >>"$R/anchor:app" && printf "z" >>"$R/anchor:app" &&
	printf xyz >expect && test_cmp expect "$R/anchor:app"
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
