#!/bin/sh

test_description='cellfs: mkdir where no directory can be: a clear errno, one line in .log, nothing left behind'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

# refused PATH ERRNO LOGLINE: mkdir PATH fails with ERRNO, .log gains
# exactly one line ending in "LOGLINE: <strerror>" with the name, and
# PATH still does not exist
refused() {
	before=$(grep -c . "$MNT/.log") &&
	test "$(errno_of mkdir "$1")" = "$2" &&
	grep . "$MNT/.log" | sed "1,${before}d" >new &&
	test "$(wc -l <new)" = 1 &&
	grep "warn mkdir ${1##*/}: $3: " new &&
	test "$(errno_of stat "$1")" != OK
}

test_expect_success 'mount, a table, a row with a cell' '
	cellfs_mount &&
	mkdir "$MNT/t" "$R" &&
	echo v >"$R/cf:a" &&
	ls "$MNT" >root.before &&
	ls "$MNT/tsd" >tsd.before &&
	ls "$MNT/t" >table.before
'

test_expect_success 'mkdir of a name tsd/ does not know: EPERM' '
	refused "$MNT/tsd/x" EPERM "no directory can be made here" &&
	refused "$MNT/tsd/metrics2" EPERM "no directory can be made here" &&
	ls "$MNT/tsd" >tsd.after &&
	test_cmp tsd.before tsd.after
'

test_expect_success 'mkdir in tsd/metrics, tsd/q: EPERM' '
	refused "$MNT/tsd/metrics/m" EPERM "no directory can be made here" &&
	refused "$MNT/tsd/tagk/k" EPERM "no directory can be made here" &&
	test "$(errno_of mkdir "$MNT/tsd/q/start=1h-ago&m=sum:m")" = EPERM &&
	tail -n 1 "$MNT/.log" | grep "mkdir start=1h-ago&m=sum:m: no directory can be made here" &&
	ls "$MNT/tsd/metrics" >metrics &&
	test_must_be_empty metrics
'

test_expect_success 'a table name starting with a dot: EINVAL' '
	refused "$MNT/.t2" EINVAL "not a valid table name" &&
	ls "$MNT" >root.after &&
	test_cmp root.before root.after
'

test_expect_success 'a staging name in a table or a row: EPERM' '
	refused "$MNT/t/.stage" EPERM "no directory can be made here" &&
	refused "$R/.stage" EPERM "no directory can be made here" &&
	ls "$MNT/t" >table.after &&
	test_cmp table.before table.after
'

test_expect_success 'a cell name in a row or in .versions: EPERM' '
	refused "$R/cf:b" EPERM "no directory can be made here" &&
	refused "$R/nofam:b" EPERM "no directory can be made here" &&
	refused "$R/.versions/cf:b@5" EPERM "no directory can be made here" &&
	ls "$R" >row &&
	echo cf:a >expect &&
	test_cmp expect row
'

test_expect_success 'names that exist: EEXIST, as for any directory' '
	test "$(errno_of mkdir "$MNT/tsd")" = EEXIST &&
	test "$(errno_of mkdir "$MNT/tsd/put")" = EEXIST &&
	test "$(errno_of mkdir "$MNT/.ctl")" = EEXIST &&
	test "$(errno_of mkdir "$MNT/t/.schema")" = EEXIST &&
	test "$(errno_of mkdir "$R/cf:a")" = EEXIST &&
	test "$(errno_of mkdir "$R/.versions")" = EEXIST
'

test_expect_success 'under a table that does not exist: ENOENT' '
	test "$(errno_of mkdir "$MNT/nosuch/r")" = ENOENT
'

test_done
