#!/bin/sh

test_description='cellfs: tables, rows and cells with mkdir, echo, cat, ls, stat, rm, rmdir'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

test_expect_success 'mount a fresh data directory' '
	cellfs_mount &&
	test "$(stat -c %a "$DATA")" = 700 &&
	ls -A "$MNT" >out && echo tsd >expect && test_cmp expect out &&
	ls "$MNT/tsd" >out && printf "annotation\nannotations\nlookup\nmetrics\nput\nq\ntagk\ntagv\ntree\ntsmeta\nuidmeta\n" >expect &&
	test_cmp expect out
'

test_expect_success 'mkdir makes a table with family cf' '
	mkdir "$MNT/webtable" &&
	ls "$MNT" >out && printf "tsd\nwebtable\n" >expect && test_cmp expect out &&
	ls -A "$MNT/webtable" >out &&
	printf ".schema\n@\n" >expect && test_cmp expect out &&
	cut -d" " -f1,2 "$MNT/webtable/.schema" >out &&
	echo "cf VERSIONS=1" >expect && test_cmp expect out
'

test_expect_success 'a bad table name is EINVAL; tsd exists already' '
	echo EINVAL >expect &&
	errno_of mkdir "$MNT/a b" >out && test_cmp expect out &&
	echo EEXIST >expect &&
	errno_of mkdir "$MNT/tsd" >out && test_cmp expect out &&
	echo EPERM >expect &&
	errno_of rmdir "$MNT/tsd" >out && test_cmp expect out
'

test_expect_success 'write and read a cell' '
	mkdir "$MNT/webtable/com.cnn.www" &&
	echo "CNN" >"$MNT/webtable/com.cnn.www/cf:title" &&
	cat "$MNT/webtable/com.cnn.www/cf:title" >out &&
	echo CNN >expect && test_cmp expect out &&
	ls "$MNT/webtable/com.cnn.www" >out &&
	echo cf:title >expect && test_cmp expect out
'

test_expect_success 'size is the value length, mtime the version in ms' '
	test "$(stat -c %s "$MNT/webtable/com.cnn.www/cf:title")" = 4 &&
	ts=$(sed -n "s/^put com.cnn.www cf:title@\([0-9]*\) .*/\1/p" \
		"$MNT/webtable/.batch") &&
	test -n "$ts" &&
	test "$(stat -c %Y "$MNT/webtable/com.cnn.www/cf:title")" = \
		$((ts / 1000)) &&
	ns=$(stat -c %y "$MNT/webtable/com.cnn.www/cf:title" |
		sed "s/.*\.\([0-9]*\) .*/\1/") &&
	test "$ns" = "$(printf %03d $((ts % 1000)))000000" &&
	test "$(stat -c %a "$MNT/webtable/com.cnn.www/cf:title")" = 644 &&
	test "$(stat -c %a "$MNT/webtable/com.cnn.www")" = 755
'

test_expect_success 'the row is listed in its region, escaped names work' '
	ls "$MNT/webtable/@" >out &&
	echo com.cnn.www >expect && test_cmp expect out &&
	mkdir "$MNT/webtable/a%20b" &&
	printf "x" >"$MNT/webtable/a%20b/cf:%2Fq" &&
	ls -U "$MNT/webtable/@" >out &&
	printf "a%%20b\ncom.cnn.www\n" >expect && test_cmp expect out &&
	cat "$MNT/webtable/@/a%20b/cf:%2Fq" >out &&
	printf x >expect && test_cmp expect out &&
	echo EINVAL >expect &&
	errno_of stat "$MNT/webtable/a%2fb" >out && test_cmp expect out
'

test_expect_success 'writes at offsets and truncate make the whole value' '
	C="$MNT/webtable/com.cnn.www/cf:title" &&
	printf "XY" | dd of="$C" bs=1 seek=1 conv=notrunc 2>/dev/null &&
	echo "CXY" >expect && test_cmp expect "$C" &&
	truncate -s 2 "$C" && printf CX >expect && test_cmp expect "$C" &&
	echo more >>"$C" && printf "CXmore\n" >expect && test_cmp expect "$C"
'

test_expect_success 'unknown family on create is ENOENT, a row without cells too' '
	echo ENOENT >expect &&
	errno_of write "$MNT/webtable/com.cnn.www/nofam:x" v >out &&
	test_cmp expect out &&
	errno_of stat "$MNT/webtable/norow" >out && test_cmp expect out &&
	errno_of stat "$MNT/webtable/com.cnn.www/cf:nothere" >out &&
	test_cmp expect out
'

test_expect_success 'rmdir of a row with cells is ENOTEMPTY; rm -r removes it' '
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/webtable/a%20b" >out && test_cmp expect out &&
	rm "$MNT/webtable/a%20b/cf:%2Fq" &&
	rmdir "$MNT/webtable/a%20b" &&
	mkdir "$MNT/webtable/gone" && rmdir "$MNT/webtable/gone" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/webtable/gone" >out && test_cmp expect out
'

test_expect_success 'mv within a row; between rows is EXDEV' '
	R="$MNT/webtable/com.cnn.www" &&
	echo anchor >"$R/cf:a" &&
	mv "$R/cf:a" "$R/cf:b" &&
	ls "$R" >out && printf "cf:b\ncf:title\n" >expect &&
	test_cmp expect out &&
	mkdir "$MNT/webtable/other" &&
	echo EXDEV >expect &&
	errno_of rename "$R/cf:b" "$MNT/webtable/other/cf:b" >out &&
	test_cmp expect out
'

test_expect_success 'touch -d moves the version, chmod is ignored' '
	R="$MNT/webtable/com.cnn.www" &&
	touch -d "@1300000000.5" "$R/cf:b" &&
	test "$(stat -c %Y "$R/cf:b")" = 1300000000 &&
	echo anchor >expect && test_cmp expect "$R/cf:b" &&
	ls "$R/.versions" >out &&
	printf "cf:b@1300000000500\n" >expect.v &&
	grep "^cf:b@" out >out.v && test_cmp expect.v out.v &&
	chmod 600 "$R/cf:b" && test "$(stat -c %a "$R/cf:b")" = 644
'

test_expect_success 'rmdir of a table with cells is ENOTEMPTY; empty table goes' '
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/webtable" >out && test_cmp expect out &&
	mkdir "$MNT/empty" && rmdir "$MNT/empty" &&
	ls "$MNT" >out && printf "tsd\nwebtable\n" >expect && test_cmp expect out
'

test_expect_success 'refusals are in .log' '
	grep "EXDEV\|Invalid cross-device" "$MNT/.log" >/dev/null &&
	grep "unknown family" "$MNT/.log" >/dev/null
'

test_expect_success 'data survives unmount and remount' '
	cellfs_umount &&
	cellfs_mount &&
	echo anchor >expect && test_cmp expect "$MNT/webtable/com.cnn.www/cf:b"
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
