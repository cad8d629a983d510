#!/bin/sh

test_description='man pages: cellfs(8), cellfs-fsck(8), cellfs(5) render
without a warning, and cellfs(8) documents every -o option the daemon takes'

. /usr/share/sharness/sharness.sh

TOP=${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}
: "${CELLFS_BUILD:=$TOP/build/default}"
MAN="$TOP/man"

command -v man >/dev/null && command -v groff >/dev/null || {
	skip_all="no man or groff"
	test_done
}

for page in cellfs.8 cellfs-fsck.8 cellfs.5; do
	test_expect_success "$page renders without warnings" '
		test -f "$MAN/$page" &&
		MANWIDTH=80 man --warnings -l "$MAN/$page" >out 2>err &&
		test_must_be_empty err &&
		test $(wc -l <out) -gt 20 &&
		groff -ww -man -z "$MAN/$page" 2>err &&
		test_must_be_empty err
	'
done

test_expect_success 'the checks find a warning' '
	printf ".TH X 8\n.SH NAME\nx \\\\- y\n.BOGUS\n\\\\q\n" >bad.8 &&
	groff -ww -man -z bad.8 2>err &&
	test -s err
'

# The rendered cellfs(8), plain text.
test_expect_success 'render cellfs(8)' '
	MANWIDTH=200 man -l "$MAN/cellfs.8" 2>/dev/null | col -b >cellfs.txt
'

test_expect_success 'every -o option of fs/main.c is in cellfs(8)' '
	sed -n "/cellfs_opts\[\] = {/,/FUSE_OPT_END/p" "$TOP/fs/main.c" |
		grep -o "\"[a-z_]*=" | tr -d "\"=" | sort -u >opts &&
	test $(wc -l <opts) -ge 8 &&
	grep -x flush_size opts && grep -x readdirplus opts &&
	while read o; do
		grep -e "-o $o=" cellfs.txt >/dev/null ||
		{ echo "undocumented: -o $o"; return 1; }
	done <opts
'

test_expect_success 'every mount(8) option it ignores is in cellfs(8)' '
	sed -n "/ignored\[\] = {/,/};/p" "$TOP/fs/main.c" |
		grep -o "\"[a-z_]*\"" | tr -d "\"" >ign &&
	test $(wc -l <ign) -ge 10 && grep -x _netdev ign &&
	tr -s " ,.\n" "\n\n\n\n" <cellfs.txt >words &&
	while read o; do
		grep -x -e "$o" words >/dev/null ||
		{ echo "undocumented: $o"; return 1; }
	done <ign
'

test -x "$CELLFS_BUILD/cellfs" && test_set_prereq DAEMON

test_expect_success DAEMON 'every -o option of cellfs --help is in cellfs(8)' '
	"$CELLFS_BUILD/cellfs" --help >help &&
	sed -n "/^cellfs options:/,/^$/p" help |
		grep -o -e "-o [a-z_]*=" | sort -u >helpopts &&
	test $(wc -l <helpopts) -ge 8 &&
	while read o; do
		grep -e "$o" cellfs.txt >/dev/null ||
		{ echo "undocumented: $o"; return 1; }
	done <helpopts
'

test_expect_success 'README points to the man pages' '
	grep "man -l man/cellfs.8" "$TOP/README.md" &&
	grep "cellfs(5)" "$TOP/README.md" &&
	grep "cellfs-fsck(8)" "$TOP/README.md"
'

test_done
