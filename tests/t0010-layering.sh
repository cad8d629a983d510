#!/bin/sh

test_description='the arrows run one way: between modules, and between the engine'"'"'s files'

. /usr/share/sharness/sharness.sh

: "${CELLFS_BUILD:=$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)/build/default}"

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

test -d "$CELLFS_BUILD/engine" || {
	skip_all="no objects under $CELLFS_BUILD"
	test_done
}

test_expect_success 'modules depend downward only: fs > net > tsd > engine > meta > util' '
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

test_expect_success 'the engine'"'"'s files form no cycle' '
	edges engine >engine-edges &&
	test -s engine-edges &&
	tsort engine-edges >order 2>err &&
	test_must_be_empty err
'

test_expect_success 'the check can fail: a cycle is found' '
	{ cat engine-edges && echo "engine/region engine/db"; } >cyclic &&
	tsort cyclic >/dev/null 2>err;
	grep -q loop err
'

test_done
