#!/bin/sh

test_description='cellfs: HBase truncate and truncate_preserve through T/.ctl: the data goes, the schema, access and (preserve) region boundaries stay'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# regions: the start and end keys of table t's regions, a line each
regions() {
	cut -d" " -f2,3 "$MNT/t/.regions"
}

test_expect_success 'mount; table t with two families of their own settings, chmod 0750, split at m, rows on both sides' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\ng TTL=86400\n" >"$MNT/t/.schema" &&
	cp "$MNT/t/.schema" schema.before &&
	chmod 0750 "$MNT/t" &&
	printf "put a f:q 1\nput z g:q 2\nput a f:q 3\n" >"$MNT/t/.batch" &&
	echo "split m" >"$MNT/t/.ctl" &&
	echo flush >"$MNT/t/.ctl" &&
	regions >regions.before &&
	test "$(wc -l <regions.before)" = 2 &&
	cat "$MNT/t/.scan/all" >out &&
	test "$(wc -l <out)" = 2
'

test_expect_success 'truncate_preserve: no rows, the same schema, mode and region boundaries; logged with the schema' '
	echo truncate_preserve >"$MNT/t/.ctl" &&
	cat "$MNT/t/.scan/all" >out &&
	test_must_be_empty out &&
	ls "$MNT/t" >out &&
	printf "@\n@m\n" >expect &&
	test_cmp expect out &&
	test_cmp schema.before "$MNT/t/.schema" &&
	test "$(stat -c %a "$MNT/t")" = 750 &&
	regions >out &&
	test_cmp regions.before out &&
	grep -q "info truncate t: schema f VERSIONS=3 .*; g VERSIONS=1 .*TTL=86400" "$MNT/.log"
'

test_expect_success 'the table takes writes again; truncate leaves one region' '
	mkdir "$MNT/t/r" &&
	echo v >"$MNT/t/r/f:q" &&
	echo v >expect &&
	test_cmp expect "$MNT/t/r/f:q" &&
	echo truncate >"$MNT/t/.ctl" &&
	test_must_fail cat "$MNT/t/r/f:q" &&
	regions >out &&
	echo "'"''"' '"''"'" >expect &&
	test_cmp expect out &&
	test_cmp schema.before "$MNT/t/.schema" &&
	test "$(stat -c %a "$MNT/t")" = 750
'

test_expect_success 'a truncate survives kill -9; other tables are untouched' '
	mkdir "$MNT/u" &&
	echo f >"$MNT/u/.schema" &&
	mkdir "$MNT/u/r" "$MNT/t/r" &&
	echo keep >"$MNT/u/r/f:q" &&
	echo w >"$MNT/t/r/f:q" &&
	echo truncate >"$MNT/t/.ctl" &&
	cellfs_kill9 &&
	cellfs_mount &&
	cat "$MNT/t/.scan/all" >out &&
	test_must_be_empty out &&
	test_cmp schema.before "$MNT/t/.schema" &&
	echo keep >expect &&
	test_cmp expect "$MNT/u/r/f:q"
'

test_expect_success 'an unknown control word names truncate among the known ones' '
	echo EINVAL >expect &&
	errno_of write "$MNT/t/.ctl" "trunc" >out &&
	test_cmp expect out &&
	grep -q "truncate, truncate_preserve" "$MNT/.log"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
