#!/bin/sh

test_description='the arrows run one way: between modules, between the files of a folder; no file too large to live in'

. /usr/share/sharness/sharness.sh

: "${CELLFS_BUILD:=$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)/build/default}"
: "${CELLFS_TOP:=$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}"
FOLDERS="util meta engine tsd net fs"

# edges DIR...: "from to" for every pair of object files where `from`
# uses a symbol `to` defines (names: dir/file without .o).
edges() {
	for d in "$@"; do
		for o in "$CELLFS_BUILD/$d"/*.o; do
			n=$d/$(basename "$o" .o)
			nm --defined-only "$o" |
				awk -v n="$n" '$2 ~ /[TDBR]/ { print $3, n }'
		done
	done | sort >defs &&
	for d in "$@"; do
		for o in "$CELLFS_BUILD/$d"/*.o; do
			n=$d/$(basename "$o" .o)
			nm -u "$o" | awk -v n="$n" '{ print $2, n }'
		done
	done | sort >uses &&
	join uses defs | awk '$2 != $3 { print $2, $3 }' | sort -u
}

# includes DIR: "from to" for every #include "DIR/x.h" of DIR's files, a
# file named by its name without .c or .h: a .c file and its header are
# one file (one concept, STYLE.md), except the folder's own header
# (fs/fs.h, tsd/tsd.h: the face of the whole folder, which many of its
# files implement), named with its .h.
includes() {
	d=$1
	for f in "$CELLFS_TOP/$d"/*.[ch]; do
		sed -n "s|^#include \"$d/\([^\"]*\)\".*|\1|p" "$f" |
			while read -r h; do
				echo "$(basename "$f") $h"
			done
	done | awk -v d="$d" '
		function node(f) {
			if (f == d ".h")
				return d "/" f
			sub(/\.[ch]$/, "", f)
			return d "/" f
		}
		{ a = node($1); b = node($2); if (a != b) print a, b }' |
		sort -u
}

test_expect_success 'no include cycle between the files of one folder' '
	for d in $FOLDERS; do
		test -d "$CELLFS_TOP/$d" || continue
		includes $d >inc-$d &&
		{ tsort inc-$d >/dev/null 2>err-$d || :; } &&
		sed "s|^|$d: |" err-$d || return 1
	done >bad &&
	test_must_be_empty bad &&
	test -s inc-fs
'

test_expect_success 'the include check can fail: two files that include each other'"'"'s header' '
	mkdir -p fake/d &&
	echo "#include \"d/b.h\"" >fake/d/a.c &&
	echo "#include \"d/a.h\"" >fake/d/b.c &&
	: >fake/d/a.h && : >fake/d/b.h &&
	CELLFS_TOP=$PWD/fake includes d >fake-inc &&
	echo "d/a d/b" >expect && echo "d/b d/a" >>expect &&
	test_cmp expect fake-inc &&
	tsort fake-inc >/dev/null 2>err;
	grep -q loop err
'

# lines DIR: "LINES FILE" for each .c file of DIR, largest first.
lines() {
	wc -l "$CELLFS_TOP/$1"/*.c | grep -v " total$" | sort -rn
}

test_expect_success 'the largest .c file of fs/ and engine/ is under 1,500 lines' '
	for d in fs engine; do
		lines $d | head -n 1
	done >largest &&
	test $(wc -l <largest) = 2 &&
	awk "\$1 >= 1500 { print \"too large:\", \$0 }" largest >bad &&
	test_must_be_empty bad
'

test_expect_success 'every file of docs/ is under 1,500 lines (one concept each)' '
	wc -l "$CELLFS_TOP"/docs/*.md | grep -v " total$" >doclines &&
	test -s doclines &&
	awk "\$1 >= 1500 { print \"too large:\", \$0 }" doclines >bad &&
	test_must_be_empty bad
'

test -d "$CELLFS_BUILD/engine" && test_set_prereq OBJECTS

test_expect_success OBJECTS 'modules depend downward only: fs > net > tsd > engine > meta > util' '
	mods=$(for m in util meta engine tsd net fs; do
		test -d "$CELLFS_BUILD/$m" && echo $m; done) &&
	edges $mods >file-edges &&
	awk "{ split(\$1, a, \"/\"); split(\$2, b, \"/\");
	       if (a[1] != b[1]) print a[1], b[1] }" file-edges |
		sort -u >module-edges &&
	awk "BEGIN { r[\"util\"] = 0; r[\"meta\"] = 1; r[\"engine\"] = 2;
		     r[\"tsd\"] = 3; r[\"net\"] = 4; r[\"fs\"] = 5 }
	     r[\$1] <= r[\$2] { print \"upward or sideways:\", \$0 }" \
		module-edges >bad &&
	test_must_be_empty bad
'

# A file uses another's names only through a header of its folder (the
# compiler wants them declared), so two files of a folder that use each
# other's names include each other's: fs/control.c and fs/ops.c did
# through fs/fs.h (issue #22).
test_expect_success OBJECTS 'the files of engine/, tsd/ and fs/ form no cycle of uses' '
	for d in engine tsd fs; do
		edges $d >$d-edges &&
		test -s $d-edges &&
		{ tsort $d-edges >/dev/null 2>err-$d || :; } &&
		sed "s|^|$d: |" err-$d || return 1
	done >bad &&
	test_must_be_empty bad
'

test_expect_success OBJECTS 'the check can fail: a cycle is found' '
	{ cat engine-edges && echo "engine/region engine/db"; } >cyclic &&
	tsort cyclic >/dev/null 2>err;
	grep -q loop err
'

test_done
