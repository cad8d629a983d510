#!/bin/sh

test_description='cellfs: HBase TestKeepDeletes through the mount (issue #18): what a major compaction keeps with KEEP_DELETED_CELLS=TRUE and TTL, counted by raw scans'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"
. "$SHARNESS_TEST_DIRECTORY/lib-hbase.sh"

# Each case names the method of HBase's TestKeepDeletes
# (hbase-server/src/test/java/org/apache/hadoop/hbase/regionserver/) it
# comes from.  As there, a table has the three families fam1 fam2 fam3
# (HBase's COLUMNS) with KEEP_DELETED_CELLS=TRUE, ts is 1000, the row and
# column are "1" and fam1:fam1, the values T1 ... are 1 ...; a row delete
# ("deleteall 1 @TS") is a DeleteFamily marker in each family.  HBase
# counts the delete markers with a raw scan (countDeleteMarkers); here
# `T/.scan/raw` shows every cell the store holds, exactly.
#
# A major compaction of such a family keeps the puts some read of some
# time range can still need (a read whose range ends at or before a
# delete's timestamp ignores the delete) and the markers that cover
# them, nothing else (docs/engine.md "Versions and deletes").  HBase
# drops a marker only once it is older than the earliest put of the
# store's files (so often one major compaction later) and keeps some
# markers for ever; and its versions are not NEW_VERSION_BEHAVIOR's.
# Where HBase's count differs the case says so and why.

# kdc TABLE VERSIONS: the three families, KEEP_DELETED_CELLS=TRUE
kdc() {
	table "$1" "fam1 VERSIONS=$2 KEEP_DELETED_CELLS=TRUE\nfam2 VERSIONS=$2 KEEP_DELETED_CELLS=TRUE\nfam3 VERSIONS=$2 KEEP_DELETED_CELLS=TRUE\n"
}

# markers TABLE N: a raw scan shows N delete markers (countDeleteMarkers)
markers() {
	echo "$2" >expect.n &&
	{ grep -c " @Delete" <"$MNT/$1/.scan/raw" || :; } >out.n &&
	test_cmp expect.n out.n
}

# get TABLE END: fam1:fam1 of row 1, every version in [0, END)
get() {
	cat "$MNT/$1/1/fam1:fam1@0,$2,v=2147483647"
}

test_expect_success 'mount' '
	cellfs_mount
'

# testBasicScenario: 3 versions, four puts, a row delete at ts+2; after
# two major compactions "one delete marker left (the others did not have
# older puts)", and after two more puts, an old put again and two more
# major compactions, "the delete marker itself was collected".
test_expect_success 'testBasicScenario' '
	kdc kb 3 &&
	batch kb "put 1 fam1:fam1@1000 1\nput 1 fam1:fam1@1001 2\nput 1 fam1:fam1@1002 3\nput 1 fam1:fam1@1004 4\n" &&
	batch kb "deleteall 1 @1002\n" &&
	markers kb 3 &&
	echo "1001 2" >expect && lines get kb 1002 &&
	ctl kb flush &&
	lines get kb 1002 &&
	ctl kb major_compact && ctl kb major_compact &&
	markers kb 1 &&
	cat >expect <<-\EOF &&
	1 fam1: 1002 @DeleteFamily
	1 fam1:fam1 1004 4
	1 fam1:fam1 1002 3
	1 fam1:fam1 1001 2
	EOF
	lines scan kb raw &&
	lines scan kb "raw&versions=3" &&
	echo "1001 2" >expect && lines get kb 1002 &&
	missing "$MNT/kb/1/fam1:fam1@0,1004,v=2147483647" &&
	batch kb "put 1 fam1:fam1@1005 5\n" &&
	batch kb "put 1 fam1:fam1@1006 6\n" &&
	batch kb "put 1 fam1:fam1@1000 1\n" &&
	missing "$MNT/kb/1/fam1:fam1@0,1004,v=2147483647" &&
	ctl kb flush &&
	ctl kb major_compact && ctl kb major_compact &&
	markers kb 0 &&
	cat >expect <<-\EOF &&
	1 fam1:fam1 1006 6
	1 fam1:fam1 1005 5
	1 fam1:fam1 1004 4
	EOF
	lines scan kb raw
'

# testBasicScenario, its last step: HBase's Get [0, ts+4) then shows the
# old put written once more, counting only the versions in its range;
# here the three newer versions crowd it out, as before the compactions
# (NEW_VERSION_BEHAVIOR, docs/usage.md "Where answers differ").
test_expect_success 'testBasicScenario: an old put again stays behind VERSIONS' '
	batch kb "put 1 fam1:fam1@1000 1\n" &&
	missing "$MNT/kb/1/fam1:fam1@0,1004,v=2147483647"
'

# testDeleteMarkerExpirationEmptyStore: 1 version; a DeleteColumn, a
# DeleteFamily and two Deletes of versions, no put: flush and a minor
# compaction keep the four, a major compaction removes all.
test_expect_success 'testDeleteMarkerExpirationEmptyStore' '
	kdc ke 1 &&
	batch ke "deletecolumns 1 fam1:fam1@1000\ndeletefamily 1 fam1@1000\ndeletecolumn 1 fam1:fam1@1001\ndeletecolumn 1 fam1:fam1@1002\n" &&
	cat >expect <<-\EOF &&
	1 fam1: 1000 @DeleteFamily
	1 fam1:fam1 1002 @Delete
	1 fam1:fam1 1001 @Delete
	1 fam1:fam1 1000 @DeleteColumn
	EOF
	lines scan ke raw &&
	ctl ke flush && lines scan ke raw &&
	ctl ke compact && lines scan ke raw &&
	ctl ke major_compact &&
	: >expect && lines scan ke raw
'

# testDeleteMarkerExpiration: the same markers over a put at ts (and a
# put of another family, which they do not cover); a newer put pushes
# the one at ts out.  HBase: "no markers are collected, since there is
# an affected put" (4), then at the next major compaction 0.  Here the
# put at ts is dead in every read (crowded out where the markers are
# ignored, masked where they are not), so the first major compaction
# drops it and the four markers.
test_expect_success 'testDeleteMarkerExpiration' '
	kdc kx 1 &&
	batch kx "put 1 fam1:fam1@1000 1\nput 1 fam2:fam1@990 1\n" &&
	batch kx "deletecolumns 1 fam1:fam1@1000\ndeletefamily 1 fam1@1000\ndeletecolumn 1 fam1:fam1@1001\ndeletecolumn 1 fam1:fam1@1002\n" &&
	markers kx 4 &&
	ctl kx flush && markers kx 4 &&
	ctl kx compact && markers kx 4 &&
	missing "$MNT/kx/1/fam1:fam1@0,1001,v=2147483647" &&
	batch kx "put 1 fam1:fam1@1003 1\n" &&
	ctl kx flush &&
	ctl kx major_compact &&
	markers kx 0 &&
	printf "1 fam1:fam1 1003 1\n1 fam2:fam1 990 1\n" >expect &&
	lines scan kx raw &&
	ctl kx major_compact &&
	lines scan kx raw
'

# testWithOldRow: as testDeleteMarkerExpiration with an older row in the
# same store.  HBase keeps the four markers over two major compactions,
# then after one more put "this pushed out the column and version marker
# but the family markers remains. THIS IS A PROBLEM!" (1, for ever).
# Here none stays: every marker goes with the last put it covers.
test_expect_success 'testWithOldRow' '
	kdc ko 1 &&
	batch ko "put 1 fam1:fam1@1000 1\nput 2 fam1:fam1@990 1\n" &&
	batch ko "deletecolumns 1 fam1:fam1@1000\ndeletefamily 1 fam1@1000\ndeletecolumn 1 fam1:fam1@1001\ndeletecolumn 1 fam1:fam1@1002\n" &&
	markers ko 4 &&
	ctl ko flush && ctl ko compact && markers ko 4 &&
	batch ko "put 1 fam1:fam1@1003 1\n" &&
	ctl ko flush && ctl ko major_compact &&
	markers ko 0 &&
	ctl ko major_compact && markers ko 0 &&
	batch ko "put 1 fam1:fam1@1004 1\n" &&
	ctl ko flush && ctl ko major_compact && markers ko 0 &&
	ctl ko major_compact && markers ko 0 &&
	printf "1 fam1:fam1 1004 1\n2 fam1:fam1 990 1\n" >expect &&
	lines scan ko raw
'

# testRanges: 3 versions; a time range ending at ts+2 does not include
# the deletes at ts+2, one ending at ts+3 does; the same after a major
# compaction, which keeps the three markers at ts+2 (every put is seen
# by a range before them) and drops the older DeleteFamily at ts-10
# (it covers no put).
ranges_get() {
	for r in 1 2; do
		for c in fam1:fam1 fam1:fam2 fam2:fam1 fam2:fam2; do
			printf "1001 2\n1000 1\n" >expect &&
			lines cat "$MNT/kr/$r/$c@0,1002,v=2147483647" || return 1
		done
	done &&
	for c in 1/fam1:fam1 1/fam2:fam1 1/fam2:fam2 2/fam1:fam1 2/fam1:fam2; do
		missing "$MNT/kr/$c@0,1003,v=2147483647" || return 1
	done &&
	for c in 1/fam1:fam2 2/fam2:fam1 2/fam2:fam2; do
		lines cat "$MNT/kr/$c@0,1003,v=2147483647" || return 1
	done
}
test_expect_success 'testRanges' '
	kdc kr 3 &&
	for r in 1 2; do
		for v in 1 2; do
			batch kr "put $r fam1:fam1@$((999 + v)) $v\nput $r fam1:fam2@$((999 + v)) $v\nput $r fam2:fam1@$((999 + v)) $v\nput $r fam2:fam2@$((999 + v)) $v\n" ||
			return 1
		done
	done &&
	batch kr "deletecolumns 1 fam1:fam1@1002\ndeletefamily 1 fam2@1002\ndeletefamily 2 fam1@1002\ndeletefamily 1 fam2@990\n" &&
	ranges_get &&
	markers kr 4 &&
	ctl kr flush && ctl kr major_compact &&
	ranges_get &&
	cat >expect <<-\EOF &&
	1 fam1:fam1 1002 @DeleteColumn
	1 fam2: 1002 @DeleteFamily
	2 fam1: 1002 @DeleteFamily
	EOF
	scan kr raw >out.raw && grep @Delete out.raw >out && test_cmp expect out &&
	echo 19 >expect.n && wc -l <out.raw | tr -d " " >out.n && test_cmp expect.n out.n
'

# testDeleteMarkerVersioning: 1 version; a put at ts and a DeleteColumn
# at ts, Deletes of ts+1 and ts+3 (versions no put has), another column.
# HBase keeps all three markers and counts 3, 3, 1, 3, 3, 1, 1 along the
# way (its raw scan stops at VERSIONS, and it keeps markers until they
# are older than the store's earliest put).  Here the two Deletes go at
# once; the put at ts, which no read sees (a range holding ts honours
# the DeleteColumn) but which is alive where the markers are ignored and
# there crowds out what is written below ts later, stays with its
# DeleteColumn until the puts at ts+2 and ts+3 crowd it out there too.
test_expect_success 'testDeleteMarkerVersioning' '
	kdc kv 1 &&
	batch kv "put 1 fam1:fam1@1000 1\nput 1 fam1:fam2@990 1\n" &&
	batch kv "deletecolumns 1 fam1:fam1@1000\ndeletecolumn 1 fam1:fam1@1001\ndeletecolumn 1 fam1:fam1@1003\n" &&
	ctl kv flush && ctl kv major_compact && ctl kv major_compact &&
	cat >expect <<-\EOF &&
	1 fam1:fam1 1000 @DeleteColumn
	1 fam1:fam1 1000 1
	1 fam1:fam2 990 1
	EOF
	lines scan kv raw &&
	lines scan kv "raw&versions=1" &&
	batch kv "put 1 fam1:fam1@1002 2\n" && markers kv 1 &&
	batch kv "put 1 fam1:fam1@1003 3\n" && markers kv 1 &&
	ctl kv flush && markers kv 1 &&
	ctl kv major_compact && markers kv 0 &&
	batch kv "put 1 fam1:fam1@1004 4\n" &&
	ctl kv flush && markers kv 0 &&
	ctl kv major_compact && ctl kv major_compact && markers kv 0 &&
	printf "1 fam1:fam1 1004 4\n1 fam1:fam2 990 1\n" >expect &&
	lines scan kv raw
'

# fams TABLE SETTINGS: the three families, each with SETTINGS
fams() {
	table "$1" "fam1 $2\nfam2 $2\nfam3 $2\n"
}

# testWithMinVersions: VERSIONS 1000, MIN_VERSIONS 3, a TTL of 1 s that
# has passed for every put (HBase's are 2 s old, these are from 1970).
# A put past its TTL lives while fewer than MIN_VERSIONS newer puts were
# ever alive at once, counting those the read's range sees (a range
# ending before the markers ignores them).  HBase shows T1 T0 until the
# flush (T0 is the fourth newest), and T1 after the put at ts+1 until a
# major compaction rewrites its file; here each put dies as soon as
# the third newer put is written.  HBase then counts 2 markers and 0 at
# the next major compaction; here the first drops all four: none covers
# a put some read needs.
test_expect_success 'testWithMinVersions' '
	fams km "VERSIONS=1000 MIN_VERSIONS=3 TTL=1 KEEP_DELETED_CELLS=TRUE" &&
	batch km "put 1 fam1:fam1@1000 3\nput 1 fam1:fam1@999 2\nput 1 fam1:fam1@997 1\nput 1 fam1:fam1@996 0\n" &&
	batch km "deleteall 1 @999\ndeletecolumns 1 fam1:fam1@999\n" &&
	echo "997 1" >expect && lines get km 998 &&
	markers km 4 &&
	ctl km flush && markers km 4 &&
	lines get km 998 &&
	batch km "put 1 fam1:fam1@1001 4\n" &&
	ctl km flush && markers km 4 &&
	missing "$MNT/km/1/fam1:fam1@0,998,v=2147483647" &&
	printf "1001 4\n1000 3\n" >expect &&
	lines cat "$MNT/km/1/fam1:fam1@v=2147483647" &&
	batch km "put 1 fam1:fam1@1002 5\n" &&
	ctl km flush && ctl km major_compact &&
	markers km 0 &&
	printf "1 fam1:fam1 1002 5\n1 fam1:fam1 1001 4\n1 fam1:fam1 1000 3\n" >expect &&
	lines scan km raw &&
	missing "$MNT/km/1/fam1:fam1@0,998,v=2147483647"
'

# testWithTTL: VERSIONS 1000, MIN_VERSIONS 1, a TTL of 1 s that has
# passed, KEEP_DELETED_CELLS=TTL: a delete older than the TTL is
# honoured by every read, so the put it covers is gone (HBase shows it
# until the flush), and a major compaction drops both; the old row of
# another put stays.
test_expect_success 'testWithTTL' '
	fams kt "VERSIONS=1000 MIN_VERSIONS=1 TTL=1 KEEP_DELETED_CELLS=TTL" &&
	grep -q "^fam1 .*KEEP_DELETED_CELLS=TTL " "$MNT/kt/.schema" &&
	batch kt "put 1 fam1:fam1@1000 3\nput 2 fam1:fam1@990 1\n" &&
	echo "1000 3" >expect && lines get kt 1001 &&
	batch kt "deleteall 1 @1002\n" &&
	missing "$MNT/kt/1/fam1:fam1@0,1001,v=2147483647" &&
	markers kt 3 &&
	ctl kt flush && markers kt 3 &&
	missing "$MNT/kt/1/fam1:fam1@0,1001,v=2147483647" &&
	ctl kt major_compact && markers kt 0 &&
	echo "2 fam1:fam1 990 1" >expect &&
	lines scan kt raw
'

# KEEP_DELETED_CELLS=TTL against TRUE (TTL an hour, MIN_VERSIONS 1, so a
# put two hours old lives as the newest version): a range ending before
# a delete a minute old sees the put with both; before a delete older
# than the TTL only with TRUE, and a major compaction then keeps that
# delete and its put only with TRUE.  Row s, all of whose cells are
# deleted, is an empty directory while its store holds a put (ls of the
# table does not list it), read by its cells' names with a range and
# by a scan (docs/usage.md).
test_expect_success 'KEEP_DELETED_CELLS=TTL: a delete past the TTL is honoured by every read' '
	now=$(date +%s%3N) &&
	old=$((now - 7200000)) young=$((now - 60000)) aged=$((now - 7100000)) &&
	for m in TTL TRUE; do
		t=kk$m &&
		fams $t "VERSIONS=1 MIN_VERSIONS=1 TTL=3600 KEEP_DELETED_CELLS=$m" &&
		batch $t "put r fam1:a@$old p\nput r fam1:b@$old p\nput r fam1:c@$old x\nput s fam1:a@$old p\n" &&
		batch $t "deletecolumns r fam1:a@$young\ndeletecolumns r fam1:b@$aged\ndeletecolumns s fam1:a@$aged\n" &&
		has "$MNT/$t/r/fam1:a@0,$young" p &&
		missing "$MNT/$t/r/fam1:a" &&
		missing "$MNT/$t/r/fam1:b" &&
		missing "$MNT/$t/s/fam1:a" &&
		echo r >expect && lines ls "$MNT/$t/@" || return 1
	done &&
	missing "$MNT/kkTTL/r/fam1:b@0,$aged" &&
	has "$MNT/kkTRUE/r/fam1:b@0,$aged" p &&
	missing "$MNT/kkTTL/s/fam1:a@0,$aged" &&
	has "$MNT/kkTRUE/s/fam1:a@0,$aged" p &&
	: >expect && lines scan kkTTL "start=s&stop=s%00&time=0,$aged" &&
	echo "s fam1:a $old p" >expect &&
	lines scan kkTRUE "start=s&stop=s%00&time=0,$aged" &&
	ctl kkTTL flush && ctl kkTTL major_compact &&
	ctl kkTRUE flush && ctl kkTRUE major_compact &&
	printf "r fam1:a $young @DeleteColumn\nr fam1:a $old p\nr fam1:c $old x\n" >expect &&
	lines scan kkTTL raw &&
	printf "r fam1:a $young @DeleteColumn\nr fam1:a $old p\nr fam1:b $aged @DeleteColumn\nr fam1:b $old p\nr fam1:c $old x\ns fam1:a $aged @DeleteColumn\ns fam1:a $old p\n" >expect &&
	lines scan kkTRUE raw &&
	has "$MNT/kkTTL/r/fam1:a@0,$young" p &&
	missing "$MNT/kkTTL/r/fam1:b@0,$aged" &&
	has "$MNT/kkTRUE/r/fam1:b@0,$aged" p &&
	echo "s fam1:a $old p" >expect &&
	lines scan kkTRUE "start=s&stop=s%00&time=0,$aged" &&
	has "$MNT/kkTRUE/s/fam1:a@0,$aged" p &&
	missing "$MNT/kkTTL/s"
'

# The setting through .schema: a value other than FALSE, TRUE or TTL is
# refused (EINVAL, logged, the schema unchanged); TTL, and what the
# cases above kept, survive a remount.
test_expect_success 'KEEP_DELETED_CELLS: a bad value is EINVAL and logged; TTL survives a remount' '
	cat "$MNT/kkTTL/.schema" >before &&
	echo EINVAL >expect &&
	errno_of write "$MNT/kkTTL/.schema" "fam1 KEEP_DELETED_CELLS=1
" >out && test_cmp expect out &&
	last_log >log && grep "bad setting value" log &&
	cat "$MNT/kkTTL/.schema" >after && test_cmp before after &&
	scan kkTTL raw >raw.before &&
	cellfs_umount && cellfs_mount &&
	cat "$MNT/kkTTL/.schema" >after && test_cmp before after &&
	grep -q "^fam1 .*KEEP_DELETED_CELLS=TTL " after &&
	scan kkTTL raw >raw.after && test_cmp raw.before raw.after
'

test_expect_success 'unmount' '
	cellfs_umount &&
	! cellfs_is_mounted
'

test_done
