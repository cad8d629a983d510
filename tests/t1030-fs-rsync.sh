#!/bin/sh

test_description='cellfs: rsync -a out of a table and back into a new one'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

command -v rsync >/dev/null || {
	skip_all="no rsync"
	test_done
}

test_expect_success 'mount and fill a table with a split' '
	cellfs_mount &&
	mkdir "$MNT/src" &&
	printf "cf\nmeta VERSIONS=2\n" >"$MNT/src/.schema" &&
	for r in a b c d e%2Ff; do
		mkdir "$MNT/src/$r" &&
		echo "value of $r" >"$MNT/src/$r/cf:x" &&
		printf "%s" "$r" >"$MNT/src/$r/meta:%40odd" || return 1
	done &&
	: >"$MNT/src/c/cf:empty" &&
	mkdir "$MNT/src/@c"
'

test_expect_success 'rsync -a out to a local directory' '
	rsync -a "$MNT/src/" out/ &&
	(cd out && find . | LC_ALL=C sort) >list &&
	cat >expect <<-\EOF &&
	.
	./.schema
	./@
	./@/a
	./@/a/cf:x
	./@/a/meta:%40odd
	./@/b
	./@/b/cf:x
	./@/b/meta:%40odd
	./@c
	./@c/c
	./@c/c/cf:empty
	./@c/c/cf:x
	./@c/c/meta:%40odd
	./@c/d
	./@c/d/cf:x
	./@c/d/meta:%40odd
	./@c/e%2Ff
	./@c/e%2Ff/cf:x
	./@c/e%2Ff/meta:%40odd
	EOF
	test_cmp expect list &&
	echo "value of d" >expect && test_cmp expect out/@c/d/cf:x
'

test_expect_success 'rsync -a back into a new table compares equal' '
	mkdir "$MNT/dst" &&
	rsync -a out/ "$MNT/dst/" &&
	diff -r out "$MNT/dst" &&
	test_cmp "$MNT/src/.regions" "$MNT/src/.regions" &&
	cut -d" " -f1 "$MNT/dst/.regions" >regions &&
	printf "@\n@c\n" >expect && test_cmp expect regions &&
	test_cmp "$MNT/src/.schema" "$MNT/dst/.schema"
'

test_expect_success 'mtimes (versions) survive the round trip' '
	test -n "$(stat -c %y "$MNT/src/a/cf:x")" &&
	test "$(stat -c %y "$MNT/src/a/cf:x")" = \
		"$(stat -c %y "$MNT/dst/a/cf:x")"
'

test_expect_success 'a second rsync transfers nothing' '
	rsync -a --stats out/ "$MNT/dst/" >stats &&
	grep "^Number of regular files transferred: 0$" stats &&
	rsync -a --stats "$MNT/src/" out/ >stats &&
	grep "^Number of regular files transferred: 0$" stats
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
