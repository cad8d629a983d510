#!/bin/sh

test_description='fuzz targets: each runs over its seed corpus without a crash'

. /usr/share/sharness/sharness.sh

: "${CELLFS_BUILD:=$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)/build/default}"
CORPUS="$SHARNESS_TEST_DIRECTORY/fuzz/corpus"

# Every target (tests/fuzz/fuzz-NAME.c) has a corpus directory with at
# least one input, and runs over all of it (driver.c: one call per file;
# a crash, a sanitizer report or a failed check inside a target fails).
for src in "$SHARNESS_TEST_DIRECTORY"/fuzz/fuzz-*.c; do
	name=$(basename "$src" .c) &&
	name=${name#fuzz-}
	test_expect_success "fuzz-$name over tests/fuzz/corpus/$name" '
		n=$(ls "$CORPUS/'"$name"'" | wc -l) &&
		test "$n" -gt 0 &&
		"$CELLFS_BUILD/tests/fuzz/fuzz-'"$name"'" "$CORPUS/'"$name"'" >out &&
		echo "fuzz-'"$name"': $n inputs" >expect &&
		test_cmp expect out
	'
done

test_done
