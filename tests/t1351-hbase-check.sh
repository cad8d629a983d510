#!/bin/sh

test_description='cellfs: HBase CheckAndMutate through T/.batch (issue #18): compare operators, time ranges, null and empty values, filters; Append of a column named twice'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"
. "$SHARNESS_TEST_DIRECTORY/lib-hbase.sh"

# Each case names the HBase test class and method it comes from
# (hbase-server/src/test/java/org/apache/hadoop/hbase/client/).  HBase's
# checkAndMutate(ROW, FAMILY).qualifier(Q).ifMatches(OP, V).thenPut(P) is
# the write "ifmatches ROW FAMILY:Q OP V" followed by P's put lines in one
# write(2); a check that fails is ECANCELED (HBase's false).

# cam TABLE RESULT LINES: one write(2) of LINES (printf format) to
# TABLE/.batch gives RESULT (OK or ECANCELED)
cam() {
	echo "$2" >expect.cam &&
	errno_of write "$MNT/$1/.batch" "$(printf "$3")
" >out.cam &&
	test_cmp expect.cam out.cam
}

# a .batch line's empty value
E="''"

test_expect_success 'mount' '
	cellfs_mount
'

# FromClientSideTestCheckAndMutate.testCheckAndPut
test_expect_success 'testCheckAndPut: ifEquals on no row, ifNotExists twice' '
	table cp "f\n" &&
	cam cp ECANCELED "ifequals r f:q v\nput r f:q v" &&
	missing "$MNT/cp/r/f:q" &&
	cam cp OK "ifnotexists r f:q\nput r f:q v" &&
	cam cp ECANCELED "ifnotexists r f:q\nput r f:q v" &&
	cam cp OK "ifequals r f:q v\nput r f:q abcd" &&
	has "$MNT/cp/r/f:q" abcd &&
	grep "check failed: the cell.s value does not match; nothing applied" \
		"$MNT/.log"
'

# FromClientSideTestCheckAndMutate.testCheckAndPutWithCompareOp: the
# value given is on the left (LESS holds when the cell's sorts after it)
test_expect_success 'testCheckAndPutWithCompareOp: the six operators' '
	table op "f\n" &&
	cam op OK "ifnotexists r f:q\nput r f:q bbbb" &&
	cam op ECANCELED "ifmatches r f:q GREATER aaaa\nput r f:q bbbb" &&
	cam op ECANCELED "ifmatches r f:q EQUAL aaaa\nput r f:q bbbb" &&
	cam op ECANCELED "ifmatches r f:q GREATER_OR_EQUAL aaaa\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q LESS aaaa\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q LESS_OR_EQUAL aaaa\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q NOT_EQUAL aaaa\nput r f:q cccc" &&
	has "$MNT/op/r/f:q" cccc &&
	cam op ECANCELED "ifmatches r f:q < dddd\nput r f:q cccc" &&
	cam op ECANCELED "ifmatches r f:q <= dddd\nput r f:q cccc" &&
	cam op ECANCELED "ifmatches r f:q = dddd\nput r f:q cccc" &&
	cam op OK "ifmatches r f:q > dddd\nput r f:q cccc" &&
	cam op OK "ifmatches r f:q >= dddd\nput r f:q cccc" &&
	cam op OK "ifmatches r f:q != dddd\nput r f:q bbbb" &&
	has "$MNT/op/r/f:q" bbbb &&
	cam op ECANCELED "ifmatches r f:q > bbbb\nput r f:q bbbb" &&
	cam op ECANCELED "ifmatches r f:q != bbbb\nput r f:q bbbb" &&
	cam op ECANCELED "ifmatches r f:q < bbbb\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q >= bbbb\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q <= bbbb\nput r f:q bbbb" &&
	cam op OK "ifmatches r f:q = bbbb\nput r f:q cccc" &&
	has "$MNT/op/r/f:q" cccc
'

# FromClientSideTestCheckAndMutate.testCheckAndDeleteWithCompareOp
test_expect_success 'testCheckAndDeleteWithCompareOp' '
	table del "f\n" &&
	put2="put r f:q bbbb" && put3="put r f:q cccc" &&
	d="deletecolumns r f:q" &&
	cam del OK "$put2" &&
	cam del ECANCELED "ifmatches r f:q GREATER aaaa\n$d" &&
	cam del ECANCELED "ifmatches r f:q EQUAL aaaa\n$d" &&
	cam del ECANCELED "ifmatches r f:q GREATER_OR_EQUAL aaaa\n$d" &&
	has "$MNT/del/r/f:q" bbbb &&
	cam del OK "ifmatches r f:q LESS aaaa\n$d" &&
	missing "$MNT/del/r/f:q" &&
	cam del OK "$put2" &&
	cam del OK "ifmatches r f:q LESS_OR_EQUAL aaaa\n$d" &&
	cam del OK "$put2" &&
	cam del OK "ifmatches r f:q NOT_EQUAL aaaa\n$d" &&
	cam del OK "$put3" &&
	cam del ECANCELED "ifmatches r f:q LESS dddd\n$d" &&
	cam del ECANCELED "ifmatches r f:q LESS_OR_EQUAL dddd\n$d" &&
	cam del ECANCELED "ifmatches r f:q EQUAL dddd\n$d" &&
	cam del OK "ifmatches r f:q GREATER dddd\n$d" &&
	cam del OK "$put3" &&
	cam del OK "ifmatches r f:q GREATER_OR_EQUAL dddd\n$d" &&
	cam del OK "$put3" &&
	cam del OK "ifmatches r f:q NOT_EQUAL dddd\n$d" &&
	cam del OK "$put2" &&
	cam del ECANCELED "ifmatches r f:q GREATER bbbb\n$d" &&
	cam del ECANCELED "ifmatches r f:q NOT_EQUAL bbbb\n$d" &&
	cam del ECANCELED "ifmatches r f:q LESS bbbb\n$d" &&
	cam del OK "ifmatches r f:q GREATER_OR_EQUAL bbbb\n$d" &&
	cam del OK "$put2" &&
	cam del OK "ifmatches r f:q LESS_OR_EQUAL bbbb\n$d" &&
	cam del OK "$put2" &&
	cam del OK "ifmatches r f:q EQUAL bbbb\n$d" &&
	missing "$MNT/del/r/f:q"
'

# FromClientSideTestCheckAndMutate.testCheckAndMutateWithTimeRange: the
# check reads the newest version in the range (TimeRange.at is @TS,
# from @T1, and until @,T2); ts is HBase's currentTime()/2, long past
# the limits of any range here
tr_cases() {
	cam tr ECANCELED "ifequals r f:q@1000010000 v\n$1" &&
	cam tr ECANCELED "ifequals r f:q@1000010000, v\n$1" &&
	cam tr ECANCELED "ifequals r f:q@1000010000,1000020000 v\n$1" &&
	cam tr ECANCELED "ifequals r f:q@,1000000000 v\n$1" &&
	cam tr OK "ifequals r f:q@1000000000 v\n$1" &&
	cam tr OK "ifequals r f:q@1000000000, v\n$1" &&
	cam tr OK "ifequals r f:q@1000000000,1000020000 v\n$1" &&
	cam tr OK "ifequals r f:q@,1000010000 v\n$1"
}
test_expect_success 'testCheckAndMutateWithTimeRange: puts, row mutations, deletes' '
	table tr "f\n" &&
	p="put r f:q@1000000000 v" &&
	cam tr OK "ifnotexists r f:q\n$p" &&
	tr_cases "$p" &&
	echo flush >"$MNT/tr/.ctl" &&
	tr_cases "$p\nput r f:p x" &&
	has "$MNT/tr/r/f:p" x &&
	cam tr ECANCELED "ifequals r f:q@1000010000 v\ndeletecolumn r f:q" &&
	has "$MNT/tr/r/f:q" v &&
	cam tr OK "ifequals r f:q@1000000000 v\ndeletecolumn r f:q" &&
	missing "$MNT/tr/r/f:q"
'

# HRegion.checkAndMutateInternal: a value of 0 bytes is HBase's null
# (ifNotExists is ifMatches(EQUAL, null)): it holds for an absent or an
# empty cell, and NOT_EQUAL null for a nonempty one (as HBase 2.4.10
# and 2.5 on); any other value never holds for an absent cell
test_expect_success 'the null value: absent and empty cells' '
	table nul "f\n" &&
	cam nul ECANCELED "ifmatches r f:e != @none\nput r f:x 1" &&
	cam nul ECANCELED "ifmatches r f:e != x\nput r f:x 1" &&
	cam nul ECANCELED "ifmatches r f:e > x\nput r f:x 1" &&
	cam nul OK "ifequals r f:e $E\nput r f:x 1" &&
	cam nul OK "ifmatches r f:e = @none\nput r f:x 2" &&
	cam nul OK "put r f:e $E" &&
	has "$MNT/nul/r/f:e" "" &&
	cam nul OK "ifnotexists r f:e\nput r f:x 3" &&
	cam nul ECANCELED "ifmatches r f:e NOT_EQUAL @none\nput r f:x 4" &&
	cam nul OK "ifmatches r f:x NOT_EQUAL $E\nput r f:x 5" &&
	cam nul ECANCELED "ifnotexists r f:x\nput r f:x 6" &&
	cam nul OK "checkandput r f:e $E f:y 7" &&
	cam nul OK "checkanddelete r f:absent @none f:y" &&
	missing "$MNT/nul/r/f:y" &&
	has "$MNT/nul/r/f:x" 5
'

# TestCheckAndMutate.testCheckAndMutate: a RowMutations of a put and a
# delete; a mutation of an unknown family fails before the check
test_expect_success 'testCheckAndMutate: put and delete in one, bogus family' '
	table cm "cf\n" &&
	cam cm OK "put 12345 cf:A a\nput 12345 cf:B b\nput 12345 cf:C c" &&
	cam cm OK "ifequals 12345 cf:A a\nput 12345 cf:A a\nput 12345 cf:B b\ndeletecolumn 12345 cf:C" &&
	has "$MNT/cm/12345/cf:A" a && has "$MNT/cm/12345/cf:B" b &&
	missing "$MNT/cm/12345/cf:C" &&
	: NoSuchColumnFamilyException: ENOENT, nothing applied &&
	cam cm ENOENT "ifequals 12345 cf:A a\nput 12345 bogus:A $E" &&
	grep -F "write .batch: line 2: no family '"'"'bogus'"'"' in the table" "$MNT/.log" &&
	has "$MNT/cm/12345/cf:A" a && missing "$MNT/cm/12345/cf:C"
'

# TestCheckAndMutate.testCheckAndMutateWithSingleFilter and
# testCheckAndMutateWithMultipleFilters: checkAndMutate(ROW, FILTER)
# holds when a Get of the row with the filter returns a cell
test_expect_success 'testCheckAndMutateWithSingleFilter' '
	table sf "cf\n" &&
	cam sf OK "put 12345 cf:A a\nput 12345 cf:B b\nput 12345 cf:C c" &&
	cam sf OK "iffilter 12345 SingleColumnValueFilter(%%27cf%%27, %%27A%%27, =, %%27binary:a%%27)\nput 12345 cf:D d" &&
	has "$MNT/sf/12345/cf:D" d &&
	cam sf ECANCELED "iffilter 12345 SingleColumnValueFilter(%%27cf%%27, %%27A%%27, =, %%27binary:b%%27)\nput 12345 cf:E e" &&
	missing "$MNT/sf/12345/cf:E" &&
	grep "check failed: no cell of the row passes the filter" "$MNT/.log" &&
	cam sf OK "iffilter 12345 SingleColumnValueFilter(%%27cf%%27, %%27A%%27, =, %%27binary:a%%27)\ndeletecolumns 12345 cf:D" &&
	missing "$MNT/sf/12345/cf:D" &&
	cam sf OK "iffilter 12345 SingleColumnValueFilter(%%27cf%%27, %%27B%%27, =, %%27binary:b%%27)\nput 12345 cf:D d\ndeletecolumns 12345 cf:A" &&
	has "$MNT/sf/12345/cf:D" d && missing "$MNT/sf/12345/cf:A"
'

test_expect_success 'testCheckAndMutateWithMultipleFilters' '
	table mf "cf\n" &&
	cam mf OK "put 12345 cf:A a\nput 12345 cf:B b\nput 12345 cf:C c" &&
	A="SingleColumnValueFilter(%%27cf%%27, %%27A%%27, =, %%27binary:a%%27)" &&
	B="SingleColumnValueFilter(%%27cf%%27, %%27B%%27, =, %%27binary:b%%27)" &&
	Bc="SingleColumnValueFilter(%%27cf%%27, %%27B%%27, =, %%27binary:c%%27)" &&
	cam mf OK "iffilter 12345 $A AND $B\nput 12345 cf:D d" &&
	has "$MNT/mf/12345/cf:D" d &&
	cam mf ECANCELED "iffilter 12345 $A AND $Bc\nput 12345 cf:E e" &&
	missing "$MNT/mf/12345/cf:E" &&
	cam mf OK "iffilter 12345 $A AND $B\ndeletecolumns 12345 cf:D" &&
	missing "$MNT/mf/12345/cf:D" &&
	cam mf OK "iffilter 12345 $A AND $B\nput 12345 cf:D d\ndeletecolumns 12345 cf:A" &&
	has "$MNT/mf/12345/cf:D" d && missing "$MNT/mf/12345/cf:A"
'

# TestCheckAndMutate.testCheckAndMutateWithTimestampFilter and
# testCheckAndMutateWithFilterAndTimeRange
test_expect_success 'testCheckAndMutateWithTimestampFilter, WithFilterAndTimeRange' '
	table tf "cf\n" &&
	cam tf OK "put 12345 cf:A@100 a" &&
	F="FamilyFilter(=, %%27binary:cf%%27) AND QualifierFilter(=, %%27binary:A%%27)" &&
	cam tf OK "iffilter 12345 $F AND TimestampsFilter(100)\nput 12345 cf:B b" &&
	has "$MNT/tf/12345/cf:B" b &&
	cam tf ECANCELED "iffilter 12345 $F AND TimestampsFilter(101)\nput 12345 cf:C c" &&
	missing "$MNT/tf/12345/cf:C" &&
	table tr2 "cf\n" &&
	cam tr2 OK "put 12345 cf:A@100 a" &&
	S="SingleColumnValueFilter(%%27cf%%27, %%27A%%27, =, %%27binary:a%%27)" &&
	cam tr2 OK "iffilter 12345 @0,101 $S\nput 12345 cf:B b" &&
	has "$MNT/tr2/12345/cf:B" b &&
	cam tr2 ECANCELED "iffilter 12345 @0,100 $S\nput 12345 cf:C c" &&
	missing "$MNT/tr2/12345/cf:C"
'

# A filter sees a column's versions before the Get's one is counted
# (UserScanQueryMatcher: the filter, then checkVersions), so a check
# may hold on an older version
test_expect_success 'a filter check sees the older versions' '
	table ov "f VERSIONS=3\n" &&
	cam ov OK "put r f:q@1 old\nput r f:q@2 new" &&
	cam ov OK "iffilter r ValueFilter(=, %%27binary:old%%27)\nput r f:p 1" &&
	has "$MNT/ov/r/f:p" 1 &&
	cam ov ECANCELED "iffilter r ValueFilter(=, %%27binary:gone%%27)\nput r f:p 2"
'

test_expect_success 'malformed checks: EINVAL, the reason in .log, nothing applied' '
	table bad "f\n" &&
	cam bad OK "put r f:q 1" &&
	for l in "ifmatches r f:q" "ifmatches r f:q 1" "ifmatches r f:q ~ 1" \
		 "ifmatches r f:q LESSER 1" "ifmatches r f:q@5,3 = 1" \
		 "ifequals r f:q@x 1" "ifequals r f:q@5,x 1" \
		 "ifequals r f 1" "ifnotexists r f:q 1" "iffilter r" \
		 "iffilter r @1,2" "iffilter r @2,1 KeyOnlyFilter()" \
		 "checkandput r f:q@,x 1 f:q 2"; do
		echo EINVAL >expect &&
		errno_of write "$MNT/bad/.batch" "$l
put r f:q 2
" >out && test_cmp expect out &&
		grep -F "write .batch: line 1: " "$MNT/.log" >/dev/null &&
		has "$MNT/bad/r/f:q" 1 || return 1
	done &&
	echo EINVAL >expect &&
	errno_of write "$MNT/bad/.batch" "iffilter r Bogus(1)
put r f:q 2
" >out && test_cmp expect out &&
	grep "write .batch: line 1: .*Bogus" "$MNT/.log" &&
	has "$MNT/bad/r/f:q" 1
'

# HRegion's reckonDeltas: every delta of an Append (as of an Increment)
# is computed from the value read before the mutation, and the new cells
# of one column share a timestamp, so the last one named wins
test_expect_success 'append of a column named twice: the last value named' '
	table ap "f\n" &&
	cam ap OK "put r f:q x" &&
	cam ap OK "append r f:q a f:p 1 f:q b" &&
	has "$MNT/ap/r/f:q" xb && has "$MNT/ap/r/f:p" 1 &&
	cam ap OK "append r f:n a f:n b f:n c" &&
	has "$MNT/ap/r/f:n" c
'

# What a check applied and an append acknowledged survive kill -9 (the
# write(2) returned: the batch is in the WAL); a check that failed left
# nothing to replay
test_expect_success 'kill -9 after checks and appends: what was acknowledged is there' '
	table cr "f\n" &&
	cam cr OK "put r f:q bbbb" &&
	cam cr OK "ifmatches r f:q > cccc\nput r f:p applied" &&
	cam cr ECANCELED "ifmatches r f:q < cccc\nput r f:n refused" &&
	cam cr OK "append r f:q 1 f:q 2" &&
	cellfs_kill9 &&
	cellfs_mount &&
	has "$MNT/cr/r/f:p" applied && has "$MNT/cr/r/f:q" bbbb2 &&
	missing "$MNT/cr/r/f:n"
'

test_expect_success 'unmount' '
	cellfs_umount &&
	! cellfs_is_mounted
'

test_done
