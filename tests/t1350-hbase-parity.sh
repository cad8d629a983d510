#!/bin/sh

test_description='cellfs: scenarios of HBase'"'"'s own client tests through the mount (issue #18): versions, time ranges, deletes, NEW_VERSION_BEHAVIOR, TimestampsFilter, Increment, CheckAndPut'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"
. "$SHARNESS_TEST_DIRECTORY/lib-hbase.sh"

# Each case names the HBase test class and method it comes from (the
# classes of hbase-server/src/test/java/org/apache/hadoop/hbase/client/
# and .../regionserver/).  HBase's helpers: makeStamps(n) gives the
# timestamps 1..n, makeNAscii(VALUE, n) the values testValue0..; here
# the values are v0, v1 ... and the table is made with the family's
# VERSIONS as HBase's createTable(name, FAMILY, N) makes it.
#
# cellfs follows HBase's NEW_VERSION_BEHAVIOR (SPEC.md section 4,
# docs/engine.md "Versions and deletes": a delete masks only what was
# written before it, and a version VERSIONS newer ones crowded out stays
# dead).  Where a classic HBase test asserts the other behaviour, the case
# asserts NEW_VERSION_BEHAVIOR's answer and says so.

test_expect_success 'mount' '
	cellfs_mount
'

# TestFromClientSide4.testJiraTest861 (HBASE-861): a Get at a timestamp
# does not return a version with an earlier one.
check_861() {
	R="$MNT/j861/r" &&
	has "$R/f:q@1" v0 && missing "$R/f:q@2" && has "$R/f:q@3" v2 &&
	has "$R/f:q@4" v3 && has "$R/f:q@5" v4 && missing "$R/f:q@6" &&
	has "$R/f:q@7" v6
}
test_expect_success 'testJiraTest861: Get at a timestamp, exactly' '
	table j861 "f VERSIONS=10\n" &&
	batch j861 "put r f:q@4 v3\nput r f:q@3 v2\nput r f:q@5 v4\n" &&
	R="$MNT/j861/r" &&
	has "$R/f:q@3" v2 && missing "$R/f:q@2" && missing "$R/f:q@6" &&
	ctl j861 flush &&
	has "$R/f:q@3" v2 && missing "$R/f:q@2" && missing "$R/f:q@6" &&
	batch j861 "put r f:q@1 v0\nput r f:q@7 v6\n" &&
	check_861 &&
	ctl j861 flush && check_861 &&
	ctl j861 major_compact && check_861
'

# TestFromClientSide4.testJiraTest1014 (HBASE-1014): a put at a manual
# timestamp is found there and at no other.
test_expect_success 'testJiraTest1014: a manual timestamp' '
	table j1014 "f VERSIONS=10\n" &&
	mkdir "$MNT/j1014/r" &&
	printf testValue >"$MNT/j1014/r/f:q@12345" &&
	has "$MNT/j1014/r/f:q@12345" testValue &&
	missing "$MNT/j1014/r/f:q@12344" &&
	missing "$MNT/j1014/r/f:q@12346" &&
	echo "12345 testValue" >expect &&
	lines cat "$MNT/j1014/r/f:q@v=10"
'

# versions_of N..M: lines "TS vTS-1" for TS from N down to M
versions_of() {
	i=$1
	while test $i -ge $2; do
		echo "$i v$((i - 1))"
		i=$((i - 1))
	done
}

# scan_versions_of N..M: the same as scan lines of row r, column f:q
scan_versions_of() {
	versions_of $1 $2 | sed "s/^/r f:q /"
}

# TestFromClientSide4.testJiraTest33 (HBASE-33): the versions of a column
# between two timestamps, by Get (getVersionRangeAndVerify: the range
# [STAMPS[start], STAMPS[end] + 1)) and by Scan.
check_33() {
	R="$MNT/j33/r" &&
	for se in 0,5 0,2 4,5 2,3; do
		s=$((${se%,*} + 1)) && e=$((${se#*,} + 1)) &&
		versions_of $e $s >expect &&
		lines cat "$R/f:q@$s,$((e + 1)),v=2147483647" &&
		scan_versions_of $e $s >expect &&
		lines scan j33 "column=f:q&time=$s,$((e + 1))&versions=2147483647" ||
		return 1
	done
}
test_expect_success 'testJiraTest33: versions between two timestamps' '
	table j33 "f VERSIONS=10\n" &&
	batch j33 "put r f:q@1 v0\nput r f:q@2 v1\nput r f:q@3 v2\nput r f:q@4 v3\nput r f:q@5 v4\nput r f:q@6 v5\n" &&
	check_33 &&
	ctl j33 flush && check_33
'

# TestFromClientSide4.testJiraTest1182 (HBASE-1182): versions from a
# timestamp on (getVersionRangeAndVerifyGreaterThan: [STAMPS[start + 1],
# Long.MAX_VALUE)), by Get and by Scan.
check_1182() {
	for s in 0 2 4; do
		f=$((s + 2)) &&
		versions_of 6 $f >expect &&
		lines cat "$MNT/j33/r/f:q@$f,,v=10" &&
		scan_versions_of 6 $f >expect &&
		lines scan j33 "column=f:q&time=$f,&versions=10" || return 1
	done
}
test_expect_success 'testJiraTest1182: versions after a timestamp' '
	check_1182 &&
	ctl j33 major_compact && check_1182
'

# TestFromClientSide4.testJiraTest52 (HBASE-52): every version, by Get,
# by Scan, and as a listing.
test_expect_success 'testJiraTest52: all versions' '
	versions_of 6 1 >expect &&
	lines cat "$MNT/j33/r/f:q@v=2147483647" &&
	scan_versions_of 6 1 >expect &&
	lines scan j33 "versions=2147483647" &&
	for i in 1 2 3 4 5 6; do echo "f:q@$i"; done | sort >expect &&
	ls "$MNT/j33/r/.versions" | sort >out && test_cmp expect out
'

# TestFromClientSide4.testDuplicateVersions: versions rewritten at their
# timestamp, maxVersions of a query and of the family.
dup_exact() {
	R="$MNT/dup/r" &&
	has "$R/f:q@2" v1 && has "$R/f:q@3" v2 && has "$R/f:q@5" v4 &&
	has "$R/f:q@6" v5 && missing "$R/f:q@1" && missing "$R/f:q@4" &&
	missing "$R/f:q@7" &&
	printf "6 v5\n5 v4\n" >expect && lines cat "$R/f:q@v=2" &&
	printf "r f:q 6 v5\nr f:q 5 v4\n" >expect &&
	lines scan dup "start=r&column=f:q&versions=2"
}
test_expect_success 'testDuplicateVersions: a version rewritten replaces it' '
	table dup "f VERSIONS=10\n" &&
	batch dup "put r f:q@2 v1\nput r f:q@3 v2\nput r f:q@5 v4\nput r f:q@6 v5\n" &&
	dup_exact &&
	ctl dup flush && dup_exact &&
	batch dup "put r f:q@4 v3\nput r f:q@5 v14\nput r f:q@7 v6\nput r f:q@8 v7\nput r f:q@9 v8\n" &&
	printf "9 v8\n8 v7\n7 v6\n6 v5\n5 v14\n4 v3\n3 v2\n" >expect &&
	lines cat "$R/f:q@v=7" &&
	sed "s/^/r f:q /" expect >expect.scan &&
	scan dup "versions=7" >out && test_cmp expect.scan out &&
	has "$R/f:q@2" v1 && has "$R/f:q@3" v2 && has "$R/f:q@5" v14 &&
	has "$R/f:q@8" v7 && missing "$R/f:q@1" && missing "$R/f:q@10" &&
	ctl dup flush &&
	batch dup "put r f:q@10 v9\nput r f:q@12 v11\nput r f:q@14 v13\nput r f:q@16 v15\n" &&
	printf "16 v15\n14 v13\n12 v11\n10 v9\n9 v8\n8 v7\n7 v6\n6 v5\n5 v14\n4 v3\n" >expect &&
	lines cat "$R/f:q@v=2147483647"
'

# The end of testDuplicateVersions deletes a version in the memstore (12)
# and one in a store file (8).  Classic HBase then shows 3 and 2 again
# (10 versions: 16 14 10 9 7 6 5 4 3 2), which VERSIONS had crowded out;
# with NEW_VERSION_BEHAVIOR, as here, they stay gone.
test_expect_success 'testDuplicateVersions: deletes do not bring crowded-out versions back' '
	batch dup "deletecolumn r f:q@12\ndeletecolumn r f:q@8\n" &&
	printf "16 v15\n14 v13\n10 v9\n9 v8\n7 v6\n6 v5\n5 v14\n4 v3\n" >expect &&
	lines cat "$R/f:q@v=2147483647" &&
	ctl dup major_compact &&
	lines cat "$R/f:q@v=2147483647"
'

# TestFromClientSide4.testUpdates, testUpdatesWithMajorCompaction,
# testMajorCompactionBetweenTwoUpdates: a put at an existing timestamp
# replaces that version, in the memstore or across a major compaction.
test_expect_success 'testUpdates, testMajorCompactionBetweenTwoUpdates' '
	table upd "f VERSIONS=10\n" &&
	for r in row1 row2; do
		batch upd "put $r f:myCol@1 AAA\n" &&
		batch upd "put $r f:myCol@2 BBB\n" &&
		batch upd "put $r f:myCol@3 EEE\n" || return 1
	done &&
	has "$MNT/upd/row1/f:myCol@1" AAA && has "$MNT/upd/row1/f:myCol@2" BBB &&
	ctl upd flush && ctl upd major_compact &&
	for r in row1 row2; do
		batch upd "put $r f:myCol@1 CCC\n" &&
		batch upd "put $r f:myCol@2 DDD\n" || return 1
	done &&
	printf "3 EEE\n2 DDD\n1 CCC\n" >expect &&
	lines cat "$MNT/upd/row1/f:myCol@v=10" &&
	ctl upd flush && ctl upd major_compact &&
	lines cat "$MNT/upd/row2/f:myCol@v=10"
'

# TestFromClientSide.testDeletes (and FromClientSideTestReverseScan's
# testDeletesWithReverseScan): families f0 f1 f2 of 3 versions.
test_expect_success 'testDeletes: a family delete at a timestamp' '
	table del "f0 VERSIONS=3\nf1 VERSIONS=3\nf2 VERSIONS=3\n" &&
	batch del "put r f0:q@1000 v0\nput r f0:q@2000 v1\n" &&
	batch del "deletefamily r f0@1000\n" &&
	echo "r f0:q 2000 v1" >expect &&
	lines scan del "start=r&column=f0&versions=2147483647" &&
	echo "r f0:q 2000 v1" >expect &&
	lines scan del "reversed&start=r&column=f0&versions=2147483647"
'

# Then "Test delete latest version": 5000 3000 4000 put, a Delete of the
# latest version (5000).  Classic HBase shows 4000 3000 2000: 2000, which
# the three newer versions crowded out, comes back; with
# NEW_VERSION_BEHAVIOR (HBase's testPutMasked) it does not.
test_expect_success 'testDeletes: delete the latest version' '
	batch del "put r f0:q@5000 v4\nput r f0:q@3000 v2\nput r f0:q@4000 v3\nput r f0:@5000 v4\nput r f0:@3000 v2\nput r f0:@4000 v3\n" &&
	batch del "deletecolumn r f0:q\n" &&
	printf "r f0:q 4000 v3\nr f0:q 3000 v2\n" >expect &&
	lines scan del "start=r&stop=r0&column=f0:q&versions=2147483647" &&
	printf "r f0: 5000 v4\nr f0: 4000 v3\nr f0: 3000 v2\n" >expect &&
	lines scan del "start=r&stop=r0&column=f0:&versions=2147483647"
'

# HBASE-1847: a Delete of the empty qualifier's latest version, then of
# the whole column; then "Expected client behavior might be that you can
# re-put deleted values ... But alas, this is not to be" in classic HBase
# (a put of 1000 and 5000 stays masked).  With NEW_VERSION_BEHAVIOR a put
# after a delete is seen: 5000, and the three newest.
test_expect_success 'testDeletes: a put after a delete is seen (NEW_VERSION_BEHAVIOR)' '
	batch del "deletecolumn r f0:\n" &&
	batch del "deletecolumns r f0:\n" &&
	batch del "put r f0:q@1000 v0\nput r f0:q@5000 v4\n" &&
	printf "r f0:q 5000 v4\nr f0:q 4000 v3\nr f0:q 3000 v2\n" >expect &&
	lines scan del "start=r&stop=r0&column=f0&versions=2147483647"
'

# Deleting a family of one row but not the other, various ways; two
# Delete.addColumn (latest) of one column in one Delete delete its two
# newest versions (HRegion.prepareDeleteTimestamps counts them).
test_expect_success 'testDeletes: family, column, two latest versions in one Delete' '
	for r in r0 r1 r2; do
		batch del "put $r f1:q@1000 v0\nput $r f1:q@2000 v1\nput $r f2:q@3000 v2\nput $r f2:q@4000 v3\n" || return 1
	done &&
	batch del "deletefamily r0 f2\n" &&
	batch del "deletecolumns r1 f1:q\n" &&
	batch del "deletecolumn r2 f1:q\ndeletecolumn r2 f1:q\ndeletecolumn r2 f2:q\n" &&
	cat >expect <<-\EOF &&
	r0 f1:q 2000 v1
	r0 f1:q 1000 v0
	r1 f2:q 4000 v3
	r1 f2:q 3000 v2
	r2 f2:q 3000 v2
	EOF
	lines scan del "start=r0&stop=r3&column=f1&column=f2&versions=2147483647" &&
	ctl del flush &&
	lines scan del "start=r0&stop=r3&column=f1&column=f2&versions=2147483647" &&
	ctl del major_compact &&
	lines scan del "start=r0&stop=r3&column=f1&column=f2&versions=2147483647"
'

# HBASE-1541: a family deleted first in a row with nothing in it, then
# puts (at now) in that row and the next.
test_expect_success 'testDeletes: HBASE-1541, a family deleted in an empty row' '
	batch del "deletefamily r3 f1\n" &&
	mkdir "$MNT/del/r3" "$MNT/del/r4" &&
	printf v0 >"$MNT/del/r3/f2:q" &&
	batch del "put r4 f1:q v1\nput r4 f2:q v2\n" &&
	printf "r3 f2:q v0\nr4 f1:q v1\nr4 f2:q v2\n" >expect &&
	scan del "start=r3&column=f1&column=f2&versions=2147483647" |
		cut -d" " -f1,2,4 >out &&
	test_cmp expect out &&
	printf "r4 f1:q v1\nr4 f2:q v2\nr3 f2:q v0\n" >expect &&
	scan del "reversed&start=r4&stop=r2&column=f1&column=f2&versions=2147483647" |
		cut -d" " -f1,2,4 >out &&
	test_cmp expect out
'

# TestFromClientSide.testDeleteFamilyVersion and
# testDeleteFamilyVersionWithOtherDeletes: 5 columns of 5 versions in two
# rows; the deletes of one Delete go as one write(2).
test_expect_success 'testDeleteFamilyVersionWithOtherDeletes' '
	table dfv "f VERSIONS=5\n" &&
	s= &&
	for r in testRow myRowForTest; do
		for q in 0 1 2 3 4; do
			for ts in 1000 2000 3000 4000 5000; do
				s="${s}put $r f:q$q@$ts v$ts\n"
			done
		done
	done &&
	batch dfv "$s" &&
	ctl dfv flush &&
	batch dfv "deletefamily testRow f@2000\ndeletefamilyversion testRow f@4000\ndeletecolumns testRow f:q0@3000\ndeletecolumns testRow f:q2@5000\ndeletecolumn testRow f:q4@5000\n" &&
	ctl dfv flush &&
	batch dfv "deletefamilyversion myRowForTest f@2000\ndeletefamilyversion myRowForTest f@4000\n" &&
	ctl dfv flush &&
	{
		for q in 0 1 2 3 4; do
			for ts in 5000 3000 1000; do
				echo "myRowForTest f:q$q $ts v$ts"
			done
		done &&
		cat <<-\EOF
		testRow f:q0 5000 v5000
		testRow f:q1 5000 v5000
		testRow f:q1 3000 v3000
		testRow f:q3 5000 v5000
		testRow f:q3 3000 v3000
		testRow f:q4 3000 v3000
		EOF
	} >expect &&
	lines scan dfv versions=2147483647 &&
	missing "$MNT/dfv/testRow/f:q2" &&
	ctl dfv major_compact &&
	lines scan dfv versions=2147483647
'

# TestNewVersionBehaviorFromClientSide: a family of 3 versions, one table
# per method (its Get(ROW).setMaxVersions(N) is the scan of row r1).
nvb() {
	table "$1" "f VERSIONS=3\n"
}
row_versions() {
	scan "$1" "start=r1&stop=r2&versions=$2"
}

test_expect_success 'NVB testPutAndDeleteVersions' '
	nvb nvb1 &&
	batch nvb1 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col1@1000003 value\nput r1 f:col1@1000004 value\n" &&
	batch nvb1 "deletecolumns r1 f:col1@2000000\n" &&
	batch nvb1 "put r1 f:col1@1000000 value\n" &&
	ctl nvb1 flush &&
	echo "r1 f:col1 1000000 value" >expect &&
	lines row_versions nvb1 3
'

test_expect_success 'NVB testPutMasked' '
	nvb nvb2 &&
	batch nvb2 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col1@1000003 value\nput r1 f:col1@1000004 value\n" &&
	batch nvb2 "deletecolumn r1 f:col1@1000003\n" &&
	printf "r1 f:col1 1000004 value\nr1 f:col1 1000002 value\n" >expect &&
	lines row_versions nvb2 3 &&
	ctl nvb2 flush &&
	lines row_versions nvb2 3
'

test_expect_success 'NVB testPutMasked2' '
	nvb nvb3 &&
	batch nvb3 "put r1 f:col1@1000001 value\n" &&
	batch nvb3 "put r1 f:col1@1000002 value\n" &&
	batch nvb3 "deletecolumn r1 f:col1@1000003\n" &&
	batch nvb3 "put r1 f:col1@1000003 value\n" &&
	batch nvb3 "put r1 f:col1@1000004 value\n" &&
	printf "r1 f:col1 1000004 value\nr1 f:col1 1000003 value\nr1 f:col1 1000002 value\n" >expect &&
	lines row_versions nvb3 3 &&
	ctl nvb3 flush &&
	lines row_versions nvb3 3
'

test_expect_success 'NVB testPutMaskedAndUserMaxVersion' '
	nvb nvb4 &&
	batch nvb4 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col1@1000003 value\nput r1 f:col1@1000004 value\n" &&
	batch nvb4 "deletecolumn r1 f:col1@1000004\n" &&
	batch nvb4 "deletecolumn r1 f:col1@1000003\n" &&
	echo "r1 f:col1 1000002 value" >expect &&
	lines row_versions nvb4 1 &&
	ctl nvb4 flush &&
	lines row_versions nvb4 1 &&
	has "$MNT/nvb4/r1/f:col1" value &&
	echo "1000002 value" >expect &&
	lines cat "$MNT/nvb4/r1/f:col1@v=1"
'

test_expect_success 'NVB testSameTs' '
	nvb nvb5 &&
	for ts in 1000001 1000002 1000003 1000003 1000003 1000004; do
		batch nvb5 "put r1 f:col1@$ts value\n" || return 1
	done &&
	printf "r1 f:col1 1000004 value\nr1 f:col1 1000003 value\nr1 f:col1 1000002 value\n" >expect &&
	lines row_versions nvb5 3 &&
	ctl nvb5 flush &&
	lines row_versions nvb5 3
'

test_expect_success 'NVB testSameTsAndDelete' '
	nvb nvb6 &&
	for ts in 1000001 1000002 1000003 1000003 1000003 1000003; do
		batch nvb6 "put r1 f:col1@$ts value\n" || return 1
	done &&
	batch nvb6 "deletecolumn r1 f:col1@1000003\n" &&
	batch nvb6 "put r1 f:col1@1000004 value\n" &&
	printf "r1 f:col1 1000004 value\nr1 f:col1 1000002 value\nr1 f:col1 1000001 value\n" >expect &&
	lines row_versions nvb6 3 &&
	ctl nvb6 flush &&
	lines row_versions nvb6 3
'

test_expect_success 'NVB testDeleteFamily, with DeleteFamilyVersion' '
	nvb nvb7 &&
	batch nvb7 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col2@1000002 value\nput r1 f:col3@1000001 value\n" &&
	batch nvb7 "deletefamily r1 f@2000000\n" &&
	batch nvb7 "put r1 f:col3@1500002 value\nput r1 f:col2@1500001 value\nput r1 f:col1@1500001 value\nput r1 f:col1@1500002 value\n" &&
	ctl nvb7 flush &&
	cat >expect <<-\EOF &&
	r1 f:col1 1500002 value
	r1 f:col1 1500001 value
	r1 f:col2 1500001 value
	r1 f:col3 1500002 value
	EOF
	lines row_versions nvb7 3 &&
	batch nvb7 "deletefamilyversion r1 f@1500001\n" &&
	printf "r1 f:col1 1500002 value\nr1 f:col3 1500002 value\n" >expect &&
	lines row_versions nvb7 3 &&
	batch nvb7 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col2@1000002 value\nput r1 f:col3@1000001 value\n" &&
	ctl nvb7 flush &&
	cat >expect <<-\EOF &&
	r1 f:col1 1500002 value
	r1 f:col1 1000002 value
	r1 f:col1 1000001 value
	r1 f:col2 1000002 value
	r1 f:col3 1500002 value
	r1 f:col3 1000001 value
	EOF
	lines row_versions nvb7 3 &&
	ctl nvb7 major_compact &&
	lines row_versions nvb7 3
'

test_expect_success 'NVB testTimeRange: crowded-out versions are not in a range' '
	nvb nvb8 &&
	for ts in 1000001 1000002 1000003 1000004 1000005 1000006 1000007 1000008; do
		batch nvb8 "put r1 f:col1@$ts value\n" || return 1
	done &&
	: >expect &&
	lines scan nvb8 "start=r1&stop=r2&time=0,1000005&versions=3" &&
	missing "$MNT/nvb8/r1/f:col1@0,1000005,v=3" &&
	ctl nvb8 flush &&
	lines scan nvb8 "start=r1&stop=r2&time=0,1000005&versions=3" &&
	missing "$MNT/nvb8/r1/f:col1@0,1000005,v=3"
'

test_expect_success 'NVB testgetColumnHint: delete of the latest after a flush' '
	nvb nvb9 &&
	batch nvb9 "put r1 f:col1@100 value\nput r1 f:col1@101 value\nput r1 f:col1@102 value\nput r1 f:col1@103 value\nput r1 f:col1@104 value\nput r2 f:col1@104 value\n" &&
	ctl nvb9 flush &&
	batch nvb9 "deletecolumn r1 f:col1\n" &&
	printf "103 value\n102 value\n" >expect &&
	lines cat "$MNT/nvb9/r1/f:col1@v=3"
'

test_expect_success 'NVB testRawScanAndMajorCompaction' '
	nvb nvb10 &&
	batch nvb10 "put r1 f:col1@1000001 value\nput r1 f:col1@1000002 value\nput r1 f:col1@1000003 value\nput r1 f:col1@1000004 value\n" &&
	batch nvb10 "deletecolumn r1 f:col1@1000004\n" &&
	batch nvb10 "deletecolumn r1 f:col1@1000003\n" &&
	echo 6 >expect &&
	scan nvb10 raw >raw && wc -l <raw >out && test_cmp expect out &&
	ctl nvb10 flush &&
	scan nvb10 raw >raw && wc -l <raw >out && test_cmp expect out &&
	ctl nvb10 major_compact &&
	echo "r1 f:col1 1000002 value" >expect &&
	lines scan nvb10 raw
'

# TestKeepDeletes (regionserver): three families fam1 fam2 fam3 of 3
# versions with KEEP_DELETED_CELLS=TRUE; ts is 1000, the row and the
# column are "1" and fam1:fam1, the values T1 ... are 1 ...
kdc() {
	table "$1" "fam1 VERSIONS=3 KEEP_DELETED_CELLS=$2\nfam2 VERSIONS=3 KEEP_DELETED_CELLS=$2\nfam3 VERSIONS=3 KEEP_DELETED_CELLS=$2\n"
}

# TestKeepDeletes.testRawScan: a raw scan shows the markers (a row
# delete is a DeleteFamily in each family) and honours the time range.
test_expect_success 'TestKeepDeletes.testRawScan' '
	kdc kd1 TRUE &&
	for l in "put 1 fam1:fam1@1000 1" "put 1 fam1:fam1@1002 2" \
		 "put 1 fam1:fam1@1004 3" "deleteall 1 @1001" \
		 "deletecolumn 1 fam1:fam1@1002" \
		 "deletecolumns 1 fam1:fam1@1003"; do
		batch kd1 "$l\n" || return 1
	done &&
	cat >expect <<-\EOF &&
	1 fam1: 1001 @DeleteFamily
	1 fam1:fam1 1004 3
	1 fam1:fam1 1003 @DeleteColumn
	1 fam1:fam1 1002 @Delete
	1 fam1:fam1 1002 2
	1 fam1:fam1 1000 1
	1 fam2: 1001 @DeleteFamily
	1 fam3: 1001 @DeleteFamily
	EOF
	lines scan kd1 raw &&
	: >expect &&
	lines scan kd1 "raw&time=0,1" &&
	cat >expect <<-\EOF &&
	1 fam1: 1001 @DeleteFamily
	1 fam1:fam1 1000 1
	1 fam2: 1001 @DeleteFamily
	1 fam3: 1001 @DeleteFamily
	EOF
	lines scan kd1 "raw&time=0,1002" &&
	printf "1 fam1:fam1 1004 3\n1 fam1:fam1 1003 @DeleteColumn\n" >expect &&
	lines scan kd1 "raw&time=1003,1005"
'

# TestKeepDeletes.testBasicScenario, its reads: a Get of a time range
# before a row delete sees what it deleted, one that includes it does
# not, after flush and major compactions too.  (HBase shows T1 as well
# before the flush, from the memstore, and not after it: T1 is VERSIONS
# behind; here it is not shown at all.)  HBase's counts of delete
# markers after the major compactions, 1 and at the end 0, and what
# those compactions keep: tests/t1352, with the rest of TestKeepDeletes.
test_expect_success 'TestKeepDeletes.testBasicScenario: reads before a delete' '
	kdc kd2 TRUE &&
	batch kd2 "put 1 fam1:fam1@1000 1\nput 1 fam1:fam1@1001 2\nput 1 fam1:fam1@1002 3\nput 1 fam1:fam1@1004 4\n" &&
	batch kd2 "deleteall 1 @1002\n" &&
	grep -c @Delete <"$MNT/kd2/.scan/raw" >out && echo 3 >expect &&
	test_cmp expect out &&
	echo "1001 2" >expect &&
	lines cat "$MNT/kd2/1/fam1:fam1@0,1002,v=2147483647" &&
	ctl kd2 flush &&
	lines cat "$MNT/kd2/1/fam1:fam1@0,1002,v=2147483647" &&
	ctl kd2 major_compact && ctl kd2 major_compact &&
	lines cat "$MNT/kd2/1/fam1:fam1@0,1002,v=2147483647" &&
	missing "$MNT/kd2/1/fam1:fam1@0,1004,v=2147483647" &&
	batch kd2 "put 1 fam1:fam1@1005 5\n" &&
	batch kd2 "put 1 fam1:fam1@1006 6\n" &&
	batch kd2 "put 1 fam1:fam1@1000 1\n" &&
	missing "$MNT/kd2/1/fam1:fam1@0,1004,v=2147483647"
'

# TestKeepDeletes.testWithoutKeepingDeletes and
# testRawScanWithoutKeepingDeletes: without KEEP_DELETED_CELLS a time
# range before the delete does not see the cell; flush and minor
# compaction keep the marker, major compaction drops it and the put.
test_expect_success 'TestKeepDeletes.testWithoutKeepingDeletes' '
	kdc kd3 FALSE &&
	batch kd3 "put 1 fam1:fam1@1000 1\n" &&
	echo "1000 1" >expect &&
	lines cat "$MNT/kd3/1/fam1:fam1@0,1001,v=2147483647" &&
	batch kd3 "deletecolumn 1 fam1:fam1@1000\n" &&
	missing "$MNT/kd3/1/fam1:fam1@0,1001,v=2147483647" &&
	: >expect &&
	lines scan kd3 "time=0,1001&versions=2147483647" &&
	printf "1 fam1:fam1 1000 @Delete\n1 fam1:fam1 1000 1\n" >expect &&
	lines scan kd3 raw &&
	ctl kd3 flush && ctl kd3 compact &&
	lines scan kd3 raw &&
	ctl kd3 major_compact &&
	: >expect &&
	lines scan kd3 raw
'

# TestMinVersions (regionserver): MIN_VERSIONS with a TTL of 1 s, the
# puts made "2 s in the past" there, 100 s here (ts below); the column is
# fam1:fam1 of row "1", the values T0 ... are 0 ...  HBase answers some
# Gets from the memstore before the flush with versions its flush then
# drops (HBASE-4241: testBaseCase's "oldest version still exists"); the
# cases assert the answers after the flush, which here hold throughout.
minv() {
	table "$1" "fam1 VERSIONS=1000 MIN_VERSIONS=$2 TTL=1\nfam2 VERSIONS=1000 MIN_VERSIONS=$2 TTL=1\n"
}
mv_get() {
	cat "$MNT/$1/1/fam1:fam1@$2"
}

# TestMinVersions.testBaseCase: 2 versions minimum
mv_base() {
	echo "$ts 4" >expect && lines mv_get mv1 "0,$((ts + 1)),v=1" &&
	printf "$ts 4\n$((ts - 1)) 3\n" >expect &&
	lines mv_get mv1 v=2147483647 &&
	echo "$((ts - 1)) 3" >expect && lines mv_get mv1 "0,$ts,v=1" &&
	missing "$MNT/mv1/1/fam1:fam1@0,$((ts - 1))" &&
	missing "$MNT/mv1/1/fam1:fam1@0,$((ts - 2))"
}
test_expect_success 'TestMinVersions.testBaseCase' '
	minv mv1 2 &&
	ts=$(($(date +%s%3N) - 100000)) &&
	for d in 3 2 1 0; do
		batch mv1 "put 1 fam1:fam1@$((ts - d)) $((4 - d))\n" || return 1
	done &&
	mv_base &&
	ctl mv1 flush && mv_base &&
	ctl mv1 major_compact && mv_base
'

# TestMinVersions.testDelete: 3 versions minimum, a row delete at ts - 1
test_expect_success 'TestMinVersions.testDelete' '
	minv mv2 3 &&
	for d in 2 1 0; do
		batch mv2 "put 1 fam1:fam1@$((ts - d)) $((3 - d))\n" || return 1
	done &&
	batch mv2 "deleteall 1 @$((ts - 1))\n" &&
	echo "$ts 3" >expect &&
	lines mv_get mv2 v=2147483647 &&
	echo "1 fam1:fam1 $ts 3" >expect &&
	lines scan mv2 "versions=2147483647" &&
	ctl mv2 flush && ctl mv2 major_compact &&
	lines scan mv2 "versions=2147483647"
'

# TestMinVersions.testMemStore: a backdated put after the flush is not
# the latest version; one after it is.
test_expect_success 'TestMinVersions.testMemStore' '
	minv mv3 2 &&
	for d in 2 1 0; do
		batch mv3 "put 1 fam1:fam1@$((ts - d)) $((4 - d))\n" || return 1
	done &&
	ctl mv3 flush && ctl mv3 major_compact &&
	batch mv3 "put 1 fam1:fam1@$((ts - 3)) 1\n" &&
	printf 4 >expect && lines cat "$MNT/mv3/1/fam1:fam1" &&
	printf "$ts 4\n$((ts - 1)) 3\n" >expect &&
	lines mv_get mv3 v=2147483647 &&
	batch mv3 "put 1 fam1:fam1@$((ts + 1)) 5\n" &&
	printf "$((ts + 1)) 5\n$ts 4\n" >expect &&
	lines mv_get mv3 v=2147483647
'

# TestMinVersions.testFilters: TimestampsFilter(ts - 1, ts - 2) shows
# only T2: with 2 versions minimum T1 is gone from the user'"'"'s view.
mv_filters() {
	echo "1 fam2:fam2 $((ts - 1)) 2" >expect &&
	lines scan mv4 "column=fam2:fam2&ts=$((ts - 1)),$((ts - 2))&versions=2147483647" &&
	echo "1 fam1:fam1 $((ts - 1)) 2" >expect &&
	lines scan mv4 "column=fam1:fam1&filter=TimestampsFilter($((ts - 1)), $((ts - 2)))&versions=2147483647"
}
test_expect_success 'TestMinVersions.testFilters' '
	minv mv4 2 &&
	for d in 3 2 1 0; do
		batch mv4 "put 1 fam1:fam1@$((ts - d)) $((3 - d))\nput 1 fam2:fam2@$((ts - d)) $((3 - d))\n" ||
		return 1
	done &&
	mv_filters &&
	ctl mv4 flush && ctl mv4 major_compact && mv_filters
'

# TestAsyncTableScan and the other AbstractTestAsyncTableScan classes
# (client): rows 000 ... 999 (CQ1 holds the number, here as text), regions
# split at 111, 222 ... 999; testScanWithLimit and
# testReversedScanWithLimit, testScan(START, INCL, STOP, INCL, LIMIT).  An
# inclusive stop row R is stop=R%00 (the next key), an exclusive start
# row start=R%00; a reversed scan says an exclusive start R with
# RowFilter(<, 'binary:R') and an inclusive stop R with
# InclusiveStopFilter('R').
# rows QUERY: the first and last row of a scan of lim, and their count
rows() {
	scan lim "$1" | cut -d" " -f1 >all &&
	echo "$(head -1 all) $(tail -1 all) $(wc -l <all)"
}
test_expect_success 'scans with a limit across regions, forward and reversed' '
	table lim "f\n" &&
	s= && i=0 &&
	while test $i -lt 1000; do
		s="${s}put $(printf %03d $i) f:cq1 $i\n" &&
		i=$((i + 1)) || return 1
	done &&
	batch lim "$s" &&
	for k in 111 222 333 444 555 666 777 888 999; do
		mkdir "$MNT/lim/@$k" || return 1
	done &&
	ls "$MNT/lim" | grep -c "^@" >out && echo 10 >expect &&
	test_cmp expect out &&
	echo 500 >expect &&
	scan lim "start=500&limit=1" | cut -d" " -f4 >out &&
	test_cmp expect out &&
	echo "001 900 900" >expect && lines rows "start=001&stop=998&limit=900" &&
	echo "123 222 100" >expect && lines rows "start=123&stop=234%00&limit=100" &&
	echo "234 333 100" >expect && lines rows "start=234&stop=456&limit=100" &&
	echo "346 445 100" >expect && lines rows "start=345%00&stop=567%00&limit=100" &&
	echo "457 556 100" >expect && lines rows "start=456%00&stop=678&limit=100" &&
	echo "001 997 997" >expect && lines rows "start=001&stop=998&limit=1000" &&
	echo "123 322 200" >expect && lines rows "start=123&stop=345%00&limit=200" &&
	echo "998 099 900" >expect && lines rows "reversed&start=998&stop=001&limit=900" &&
	echo "543 444 100" >expect && lines rows "reversed&start=543&stop=320&limit=100" &&
	echo "654 555 100" >expect && lines rows "reversed&start=654&stop=432&limit=100" &&
	echo "764 665 100" >expect &&
	lines rows "reversed&start=765&filter=RowFilter(<, '"'binary:765'"') AND InclusiveStopFilter('"'543'"')&limit=100" &&
	echo "875 776 100" >expect &&
	lines rows "reversed&start=876&stop=654&filter=RowFilter(<, '"'binary:876'"')&limit=100" &&
	echo "998 002 997" >expect && lines rows "reversed&start=998&stop=001&limit=1000" &&
	echo "543 344 200" >expect &&
	lines rows "reversed&start=543&filter=InclusiveStopFilter('"'321'"')&limit=200"
'

# TestTimestampsFilter.testWithVersionDeletes: versions 1..5 of row:0
# column:0, the version 4 deleted; TimestampsFilter(2, 3, 4, 5) with all
# versions, from the memstore and from a store file.
test_expect_success 'TestTimestampsFilter.testWithVersionDeletes' '
	table tsf "cf VERSIONS=5\n" &&
	for v in 1 2 3 4 5; do
		batch tsf "put row%%3A0 cf:column%%3A0@$v value-version-$v\n" || return 1
	done &&
	batch tsf "deletecolumn row%%3A0 cf:column%%3A0@4\n" &&
	cat >expect <<-\EOF &&
	row%3A0 cf:column%3A0 5 value-version-5
	row%3A0 cf:column%3A0 3 value-version-3
	row%3A0 cf:column%3A0 2 value-version-2
	EOF
	lines scan tsf "ts=2,3,4,5&versions=5" &&
	lines scan tsf "filter=TimestampsFilter(2, 3, 4, 5)&versions=5" &&
	ctl tsf flush &&
	lines scan tsf "ts=2,3,4,5&versions=5"
'

# TestTimestampsFilter.testMultiColumns: TimestampsFilter(3) on a Get of
# two columns, all versions.
test_expect_success 'TestTimestampsFilter.testMultiColumns' '
	table tsm "cf VERSIONS=10\n" &&
	batch tsm "put row cf:column0@3 value0-3\nput row cf:column1@3 value1-3\nput row cf:column2@1 value2-1\nput row cf:column2@2 value2-2\nput row cf:column2@3 value2-3\nput row cf:column3@2 value3-2\nput row cf:column4@1 value4-1\nput row cf:column4@2 value4-2\nput row cf:column4@3 value4-3\n" &&
	printf "row cf:column2 3 value2-3\nrow cf:column4 3 value4-3\n" >expect &&
	lines scan tsm "start=row&stop=row0&column=cf:column2&column=cf:column4&ts=3&versions=10"
'

# TestScannersFromClientSide.testScanBatch (without the batch, which a
# scan file has no use for): c0..c7 at 0..7, c6 again at 2, a
# DeleteFamily at 3; all versions of a family of 1 version.
test_expect_success 'TestScannersFromClientSide.testScanBatch' '
	table sb "f\n" &&
	s= &&
	for i in 0 1 2 3 4 5 6 7; do
		s="${s}put row f:q$i@$i testValue\n"
	done &&
	batch sb "$s" &&
	batch sb "put row f:q6@2 testValue\n" &&
	batch sb "deletefamily row f@3\n" &&
	printf "row f:q4 4 testValue\nrow f:q5 5 testValue\nrow f:q6 6 testValue\nrow f:q7 7 testValue\n" >expect &&
	lines scan sb versions=2147483647 &&
	ctl sb flush &&
	lines scan sb versions=2147483647
'

# TestFromClientSide3.testScanAfterDeletingSpecifiedRow: a row deleted
# (at now), then two puts of its empty qualifier.
test_expect_success 'testScanAfterDeletingSpecifiedRow' '
	table sdr "cf\n" &&
	mkdir "$MNT/sdr/SpecifiedRow" &&
	printf testValue >"$MNT/sdr/SpecifiedRow/cf:testQualifier" &&
	rm -r "$MNT/sdr/SpecifiedRow" &&
	mkdir "$MNT/sdr/SpecifiedRow" &&
	printf value_0 >"$MNT/sdr/SpecifiedRow/cf:" &&
	printf value_1 >"$MNT/sdr/SpecifiedRow/cf:" &&
	echo "SpecifiedRow cf: value_1" >expect &&
	scan sdr all | cut -d" " -f1,2,4 >out && test_cmp expect out &&
	scan sdr column=cf | cut -d" " -f1,2,4 >out && test_cmp expect out &&
	: >expect.none &&
	scan sdr column=cf:testQualifier >out && test_cmp expect.none out &&
	ctl sdr flush &&
	scan sdr all | cut -d" " -f1,2,4 >out && test_cmp expect out &&
	scan sdr column=cf:testQualifier >out && test_cmp expect.none out
'

# TestFromClientSide3.testScanAfterDeletingSpecifiedRowV2: a row delete at
# now, then puts at now + 1, + 2, + 3 (now is 1000000 here).
test_expect_success 'testScanAfterDeletingSpecifiedRowV2' '
	batch sdr "deleteall Row2 @1000000\n" &&
	batch sdr "put Row2 cf:@1000001 testValue\n" &&
	batch sdr "put Row2 cf:qual1@1000002 qual1\n" &&
	batch sdr "put Row2 cf:qual0@1000003 qual0\n" &&
	cat >expect <<-\EOF &&
	Row2 cf: 1000001 testValue
	Row2 cf:qual0 1000003 qual0
	Row2 cf:qual1 1000002 qual1
	EOF
	lines scan sdr "start=Row2&stop=Row3" &&
	ctl sdr flush &&
	lines scan sdr "start=Row2&stop=Row3"
'

# TestFromClientSide (FromClientSideTestCheckAndMutate).testCheckAndPut
test_expect_success 'testCheckAndPut: ifEquals, ifNotExists, another row' '
	table cap "f\n" &&
	echo ECANCELED >expect &&
	errno_of write "$MNT/cap/.batch" "checkandput testRow f:q testValue f:q testValue
" >out && test_cmp expect out &&
	grep "check failed" "$MNT/.log" &&
	batch cap "checkandput testRow f:q @none f:q testValue\n" &&
	errno_of write "$MNT/cap/.batch" "checkandput testRow f:q @none f:q testValue
" >out && test_cmp expect out &&
	batch cap "checkandput testRow f:q testValue f:q abcd\n" &&
	has "$MNT/cap/testRow/f:q" abcd &&
	echo EINVAL >expect &&
	errno_of write "$MNT/cap/.batch" "ifequals testRow f:q abcd
put anotherrow f:q testValue
" >out && test_cmp expect out &&
	grep "the lines after a check change its row only" "$MNT/.log" &&
	missing "$MNT/cap/anotherrow/f:q"
'

# TestFromClientSide.testAppend: two Appends of several columns; a column
# absent before starts empty, and all columns of one Append have one
# timestamp.
test_expect_success 'testAppend: several columns, one timestamp' '
	table app "f\n" &&
	batch app "append testRow f:b 42 f:a 23\n" &&
	batch app "append testRow f:b 23 f:a 42 f:c 23\n" &&
	printf "testRow f:a 2342\ntestRow f:b 4223\ntestRow f:c 23\n" >expect &&
	scan app all | cut -d" " -f1,2,4 >out && test_cmp expect out &&
	scan app all | cut -d" " -f3 | uniq | wc -l >out &&
	echo 1 >expect && test_cmp expect out
'

# counters: the 8-byte values of row ROW, as "QUAL N" lines
counters() {
	for q in "$@"; do
		echo "$q $(cat "$MNT/inc/$ROW/f:$q@counter")" || return 1
	done
}

# TestIncrementsFromClientSide.testIncrement: single and multi-column
# Increments (one atomic mutation of the row, as HBase's Increment).
test_expect_success 'testIncrement: several columns by different amounts' '
	table inc "f\n" &&
	ROW=testRow &&
	batch inc "incr testRow f:a 1\n" &&
	batch inc "incr testRow f:b 2\n" &&
	batch inc "incr testRow f:c 3\n" &&
	batch inc "incr testRow f:d 4\n" &&
	batch inc "incr testRow f:b 1 f:d 1 f:e 1\n" &&
	printf "a 1\nb 3\nc 3\nd 5\ne 1\n" >expect &&
	lines counters a b c d e &&
	batch inc "incr a f:a 1 f:b 2 f:c 3 f:d 4 f:e 5 f:f 6 f:g 7 f:h 8 f:i 9\n" &&
	batch inc "incr a f:a 1 f:b 2 f:c 3 f:d 4 f:e 5 f:f 6 f:g 7 f:h 8 f:i 9\n" &&
	batch inc "incr a f:a 0 f:b 0 f:c 0 f:d 0 f:e 0 f:f 0 f:g 0 f:h 0 f:i 0\n" &&
	ROW=a &&
	printf "a 2\nb 4\nc 6\nd 8\ne 10\nf 12\ng 14\nh 16\ni 18\n" >expect &&
	lines counters a b c d e f g h i &&
	echo 9 >expect &&
	ls "$MNT/inc/a" | wc -l >out && test_cmp expect out
'

# TestIncrementsFromClientSide.testIncrementIncrZeroAtFirst
test_expect_success 'testIncrementIncrZeroAtFirst' '
	batch inc "incr zero f:col1 0\n" &&
	ROW=zero &&
	echo "col1 0" >expect && lines counters col1 &&
	printf 00000000 | tr 0 "\\000" >expect &&
	cat "$MNT/inc/zero/f:col1" >out && cmp expect out &&
	batch inc "incr zero f:col1 1 f:col2 0 f:col3 2\n" &&
	printf "col1 1\ncol2 0\ncol3 2\n" >expect &&
	lines counters col1 col2 col3
'

# TestIncrementsFromClientSide.testIncrementOnSameColumn: a column named
# twice in one Increment is incremented once (each delta applies to the
# value read before the Increment; the last one named is written).
test_expect_success 'testIncrementOnSameColumn' '
	batch inc "incr same f:A 1 f:A 1 f:B 1 f:B 1 f:C 1 f:C 1\n" &&
	ROW=same &&
	printf "A 1\nB 1\nC 1\n" >expect && lines counters A B C &&
	batch inc "incr same f:A 1 f:B 1 f:C 1\n" &&
	printf "A 2\nB 2\nC 2\n" >expect && lines counters A B C
'

# TestIncrementsFromClientSide.testIncrementingInvalidValue: a cell of 4
# bytes is no counter; a multi-column Increment naming it changes nothing.
test_expect_success 'testIncrementingInvalidValue' '
	batch inc "put bad f:q %%00%%00%%00%%05\n" &&
	echo EINVAL >expect &&
	errno_of write "$MNT/inc/.batch" "incr bad f:q 5
" >out && test_cmp expect out &&
	errno_of write "$MNT/inc/.batch" "incr bad f:ok 1 f:q 5
" >out && test_cmp expect out &&
	grep "no 8-byte counter" "$MNT/.log" &&
	missing "$MNT/inc/bad/f:ok"
'

test_expect_success 'malformed incr lines: EINVAL, the reason in .log' '
	for l in "incr r" "incr r f:a x" "incr r f:a 1 f:b 1x" "incr r f:a 1 1" \
		 "incr r f:a@5 1" "incr r f:a 1 f 1" \
		 "incr r f:a 99999999999999999999" "incr r f:a 1 " "incr r f:a --1"; do
		echo EINVAL >expect &&
		errno_of write "$MNT/inc/.batch" "$l
" >out && test_cmp expect out &&
		grep -F "write .batch: line 1: not '"'"'incr ROW" "$MNT/.log" ||
		return 1
	done &&
	missing "$MNT/inc/r/f:a"
'

test_expect_success 'unmount' '
	cellfs_umount &&
	! cellfs_is_mounted
'

test_done
