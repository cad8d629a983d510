#!/bin/sh

test_description='soak: kill -9 (and power cuts) under writes, splits, flushes and compactions lose no acknowledged write'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

SOAK="$CELLFS_BUILD/tests/soak/soak"

# tests/soak/soak.c; make soak runs the long version.  Here 50 kills:
# each round (kill, cellfs-fsck, remount, reading back 256
# cells) takes about 1.5 s on a busy 2-core machine, so over a minute.
test_expect_success '50 kills, sync=batch: nothing lost or corrupted, fsck finds no damage' '
	TMPDIR="$SHARNESS_TRASH_DIRECTORY" "$SOAK" -b "$CELLFS_BUILD" \
		-k 50 -t 500 -s batch >out 2>&1 ||
	{ cat out; false; } &&
	tail -n 1 out >last &&
	grep "^soak: PASS: 50 kills, sync=batch: [0-9]* acknowledged writes checked, 0 lost, 0 corrupted, 0 fsck damage, 0 writer errors before a kill" last &&
	n=$(sed "s/.*sync=batch: \([0-9]*\) acknowledged.*/\1/" last) &&
	test "$n" -gt 1000
'

test_expect_success 'the check fails when a wrong value is where an acknowledged one must be' '
	TMPDIR="$SHARNESS_TRASH_DIRECTORY" test_expect_code 1 "$SOAK" \
		-b "$CELLFS_BUILD" -k 1 -t 300 -x >out 2>&1 &&
	grep "^soak: FAIL: 1 kills" out &&
	grep "expected q v[0-9]* a[0-9]*, found q wrong" out
'

# A power cut: the data directory on a loop-mounted ext4 image, copied at
# the kill (root and loop devices only).
if test "$(id -u)" = 0 && command -v mkfs.ext4 >/dev/null &&
   test -e /dev/loop-control; then
	test_set_prereq LOOP
fi

test_expect_success LOOP '5 power cuts, sync=always: nothing acknowledged lost' '
	TMPDIR="$SHARNESS_TRASH_DIRECTORY" "$SOAK" -b "$CELLFS_BUILD" \
		-k 5 -t 500 -s always -p >out 2>&1 ||
	{ cat out; false; } &&
	grep "^soak: PASS: 5 power cuts, sync=always: [0-9]* acknowledged writes checked, 0 lost, 0 corrupted, 0 fsck damage" out
'

test_done
