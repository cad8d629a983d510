#!/bin/sh

test_description='cellfs: a schema change after cells exist (TTL, MIN_VERSIONS, VERSIONS) applies at read at once and to the disk at the next major compaction, as in HBase'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"

# versions ROW COLUMN: the versions of COLUMN listed in ROW/.versions,
# one line
versions() {
	ls "$T/$1/.versions" | grep "^$2@" | tr '\n' ' '
}

test_expect_success 'mount; cells of old timestamps and of now' '
	cellfs_mount &&
	mkdir "$T" &&
	printf "cf VERSIONS=3\n" >"$T/.schema" &&
	mkdir "$T/r1" "$T/r2" &&
	for v in 1000 2000 3000; do
		echo "v$v" >"$T/r1/cf:a@$v" || return 1
	done &&
	echo old >"$T/r2/cf:o@5000" &&
	echo now >"$T/r2/cf:n" &&
	test "$(versions r1 cf:a)" = "cf:a@1000 cf:a@2000 cf:a@3000 "
'

test_expect_success 'VERSIONS lowered: only the newest are read, at once' '
	stat "$T/r1/cf:a@1000" >/dev/null &&
	printf "cf VERSIONS=1\n" >"$T/.schema" &&
	test "$(versions r1 cf:a)" = "cf:a@3000 " &&
	test_must_fail cat "$T/r1/cf:a@1000" 2>/dev/null &&
	test "$(cat "$T/r1/cf:a")" = v3000
'

test_expect_success 'VERSIONS raised again before a major compaction: the older versions are back (a flush keeps them)' '
	echo flush >"$T/.ctl" &&
	printf "cf VERSIONS=3\n" >"$T/.schema" &&
	test "$(versions r1 cf:a)" = "cf:a@1000 cf:a@2000 cf:a@3000 " &&
	test "$(cat "$T/r1/cf:a@1000")" = v1000
'

test_expect_success 'a major compaction under VERSIONS=1 drops them for good' '
	printf "cf VERSIONS=1\n" >"$T/.schema" &&
	echo major_compact >"$T/.ctl" &&
	printf "cf VERSIONS=3\n" >"$T/.schema" &&
	test "$(versions r1 cf:a)" = "cf:a@3000 "
'

test_expect_success 'a TTL set on a family: cells older than it are gone at once, newer stay' '
	test "$(cat "$T/r2/cf:o")" = old &&
	printf "cf VERSIONS=3 TTL=3600\n" >"$T/.schema" &&
	test_must_fail cat "$T/r2/cf:o" 2>/dev/null &&
	test_must_fail stat "$T/r2/cf:o" 2>/dev/null &&
	test "$(ls "$T/r2")" = "cf:n" &&
	test "$(cat "$T/r2/cf:n")" = now &&
	test_must_fail ls "$T/r1" 2>/dev/null &&
	test_must_fail ls -d "$T/@/r1" 2>/dev/null &&
	! ls "$T/@" | grep -q "^r1$"
'

test_expect_success 'the TTL taken away before a major compaction: the cells are back' '
	printf "cf VERSIONS=3\n" >"$T/.schema" &&
	test "$(cat "$T/r2/cf:o")" = old &&
	test "$(ls "$T/r2" | tr "\n" " ")" = "cf:n cf:o " &&
	test "$(cat "$T/r1/cf:a")" = v3000
'

test_expect_success 'MIN_VERSIONS=1 with a TTL keeps the newest version of each expired column' '
	printf "cf VERSIONS=3 MIN_VERSIONS=1 TTL=3600\n" >"$T/.schema" &&
	test "$(cat "$T/r2/cf:o")" = old &&
	test "$(cat "$T/r1/cf:a")" = v3000 &&
	echo v4000 >"$T/r1/cf:a@4000" &&
	test "$(versions r1 cf:a)" = "cf:a@4000 " &&
	test_must_fail cat "$T/r1/cf:a@3000" 2>/dev/null
'

test_expect_success 'a major compaction under a TTL drops the expired cells for good' '
	printf "cf VERSIONS=3 TTL=3600\n" >"$T/.schema" &&
	echo major_compact >"$T/.ctl" &&
	printf "cf VERSIONS=3\n" >"$T/.schema" &&
	test_must_fail cat "$T/r2/cf:o" 2>/dev/null &&
	test_must_fail ls "$T/r1" 2>/dev/null &&
	test "$(ls "$T/r2")" = "cf:n" &&
	test "$(cat "$T/r2/cf:n")" = now
'

test_expect_success 'the same after a remount' '
	cellfs_umount &&
	cellfs_mount &&
	test_must_fail cat "$T/r2/cf:o" 2>/dev/null &&
	test "$(ls "$T/r2")" = "cf:n" &&
	test "$(cut -d" " -f1-4 "$T/.schema")" = "cf VERSIONS=3 MIN_VERSIONS=0 TTL=FOREVER"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
