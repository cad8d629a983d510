#!/bin/sh

test_description='cellfs: filter= of the scan file, HBase'"'"'s filter language (ParseFilter, TestParseFilter; the filters'"'"' semantics as HBase applies them in a scan)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

S="$MNT/t/.scan"

test_expect_success 'mount; a table of two families, three rows' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\ng\n" >"$MNT/t/.schema" &&
	cat >in <<-\EOF &&
	put row1 f:a@1000 apple
	put row1 f:a@2000 Banana
	put row1 f:b@1000 cherry
	put row1 g:c@1000 date
	put row2 f:a@1000 elder
	put row2 f:b@3000 fig
	put row2 g:c@1000 grape
	put row3 f:b@1000 Pear
	put row3 g:d@4000 quince
	EOF
	cat in >"$MNT/t/.batch" &&
	mkdir "$MNT/q" &&
	echo f >"$MNT/q/.schema" &&
	echo "put a%27b f:q@1000 it%27s" >"$MNT/q/.batch"
'

# check FILTER EXPECT-LINES...: filter=FILTER shows exactly those lines
check() {
	q=$1 && shift &&
	if test "$#" -gt 0
	then
		printf "%s\n" "$@" >expect
	else
		: >expect
	fi &&
	cat "$S/filter=$q" >out && test_cmp expect out
}

filters() {
	check "KeyOnlyFilter()" "row1 f:a 2000 '"''"'" "row1 f:b 1000 '"''"'" \
		"row1 g:c 1000 '"''"'" "row2 f:a 1000 '"''"'" \
		"row2 f:b 3000 '"''"'" "row2 g:c 1000 '"''"'" \
		"row3 f:b 1000 '"''"'" "row3 g:d 4000 '"''"'" &&
	: KeyOnlyFilter\(true\): the value is its length, 4 bytes big-endian &&
	check "KeyOnlyFilter(true)" "row1 f:a 2000 %00%00%00%06" \
		"row1 f:b 1000 %00%00%00%06" "row1 g:c 1000 %00%00%00%04" \
		"row2 f:a 1000 %00%00%00%05" "row2 f:b 3000 %00%00%00%03" \
		"row2 g:c 1000 %00%00%00%05" "row3 f:b 1000 %00%00%00%04" \
		"row3 g:d 4000 %00%00%00%06" &&
	check "PrefixFilter('row3') AND KeyOnlyFilter(FALSE)" \
		"row3 f:b 1000 ''" "row3 g:d 4000 ''" &&
	: each transforms what the one before it left, in text order &&
	check "PrefixFilter('row3') AND (KeyOnlyFilter() OR KeyOnlyFilter(True))" \
		"row3 f:b 1000 %00%00%00%00" "row3 g:d 4000 %00%00%00%00" &&
	check "PrefixFilter('row3') AND (KeyOnlyFilter(true) AND KeyOnlyFilter(true))" \
		"row3 f:b 1000 %00%00%00%04" "row3 g:d 4000 %00%00%00%04" &&
	check "PrefixFilter('row3') AND KeyOnlyFilter(true) AND KeyOnlyFilter(false)" \
		"row3 f:b 1000 ''" "row3 g:d 4000 ''" &&
	check " FirstKeyOnlyFilter( ) " "row1 f:a 2000 Banana" \
		"row2 f:a 1000 elder" "row3 f:b 1000 Pear" &&
	check "PrefixFilter('row2')" "row2 f:a 1000 elder" \
		"row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	check "ColumnPrefixFilter('c')" "row1 g:c 1000 date" \
		"row2 g:c 1000 grape" &&
	check "MultipleColumnPrefixFilter('c', 'd')" \
		"row1 g:c 1000 date" "row2 g:c 1000 grape" \
		"row3 g:d 4000 quince" &&
	check "InclusiveStopFilter ('row2')" "row1 f:a 2000 Banana" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" \
		"row2 f:a 1000 elder" "row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	check "TimestampsFilter(3000, 4000)" "row2 f:b 3000 fig" \
		"row3 g:d 4000 quince" &&
	check "TimestampsFilter()" &&
	check "RowFilter ( =,   'binary:row2')" "row2 f:a 1000 elder" \
		"row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	check "RowFilter(<, 'binary:row2')" "row1 f:a 2000 Banana" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" &&
	check "RowFilter(>=, 'binaryprefix:row3')" \
		"row3 f:b 1000 Pear" "row3 g:d 4000 quince" &&
	: binaryprefix compares as many bytes as it holds: a longer one is greater &&
	check "RowFilter(=, 'binaryprefix:row3xyz')" &&
	check "RowFilter(<, 'binaryprefix:row3xyz')" "row1 f:a 2000 Banana" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" \
		"row2 f:a 1000 elder" "row2 f:b 3000 fig" "row2 g:c 1000 grape" \
		"row3 f:b 1000 Pear" "row3 g:d 4000 quince" &&
	check "FamilyFilter(=, 'binary:g')" "row1 g:c 1000 date" \
		"row2 g:c 1000 grape" "row3 g:d 4000 quince" &&
	check "QualifierFilter(=, 'regexstring:^[cd]$')" \
		"row1 g:c 1000 date" "row2 g:c 1000 grape" \
		"row3 g:d 4000 quince" &&
	check "ValueFilter(=, 'substring:AN')" "row1 f:a 2000 Banana" &&
	check "ValueFilter(!=, 'substring:e')" "row1 f:a 2000 Banana" \
		"row2 f:b 3000 fig" &&
	check "ValueFilter(>, 'binary:f')" "row2 f:b 3000 fig" \
		"row2 g:c 1000 grape" "row3 g:d 4000 quince" &&
	check "ColumnRangeFilter('b', true, 'd', false)" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" \
		"row2 f:b 3000 fig" "row2 g:c 1000 grape" "row3 f:b 1000 Pear" &&
	check "ColumnRangeFilter('', true, 'a', true)" \
		"row1 f:a 2000 Banana" "row2 f:a 1000 elder" &&
	check "ColumnCountGetFilter(1)" "row1 f:a 2000 Banana" \
		"row2 f:a 1000 elder" "row3 f:b 1000 Pear" &&
	check "ColumnPaginationFilter(1, 1)" "row1 f:b 1000 cherry" \
		"row2 f:b 3000 fig" "row3 g:d 4000 quince" &&
	check "PageFilter(2)" "row1 f:a 2000 Banana" "row1 f:b 1000 cherry" \
		"row1 g:c 1000 date" "row2 f:a 1000 elder" "row2 f:b 3000 fig" \
		"row2 g:c 1000 grape" &&
	check "PageFilter(0)"
}

value_filters() {
	: the newest version decides, a row without the column passes &&
	check "SingleColumnValueFilter('f', 'a', =, 'binary:apple')" \
		"row3 f:b 1000 Pear" "row3 g:d 4000 quince" &&
	: every version decides, a row without the column fails &&
	check "SingleColumnValueFilter('f', 'a', =, 'binary:apple', true, false)" \
		"row1 f:a 2000 Banana" "row1 f:b 1000 cherry" "row1 g:c 1000 date" &&
	check "SingleColumnValueFilter('f', 'a', =, 'binary:elder', true, true)" \
		"row2 f:a 1000 elder" "row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	: booleans in either case, as ParseFilter reads them &&
	check "SingleColumnValueFilter('f', 'a', =, 'binary:elder', TRUE, True)" \
		"row2 f:a 1000 elder" "row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	check "SingleColumnValueExcludeFilter('f', 'a', =, 'binary:elder', true, true)" \
		"row2 f:b 3000 fig" "row2 g:c 1000 grape" &&
	check "ColumnValueFilter('f', 'b', <, 'binary:d')" \
		"row1 f:b 1000 cherry" "row3 f:b 1000 Pear" &&
	: the cells at the timestamps of the dependent column&&
	check "DependentColumnFilter('f', 'a')" "row1 f:a 2000 Banana" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" \
		"row2 f:a 1000 elder" "row2 g:c 1000 grape" &&
	check "DependentColumnFilter('f', 'a', true)" "row1 f:b 1000 cherry" \
		"row1 g:c 1000 date" "row2 g:c 1000 grape" &&
	check "DependentColumnFilter('f', 'a', false, =, 'binary:Banana')" \
		"row1 f:a 2000 Banana"
}

compound() {
	check " (PrefixFilter ('row')AND  FirstKeyOnlyFilter())" \
		"row1 f:a 2000 Banana" "row2 f:a 1000 elder" "row3 f:b 1000 Pear" &&
	check "(PrefixFilter('row1') AND QualifierFilter (>=, 'binary:b'))OR FamilyFilter (=, 'binary:g') " \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" "row2 g:c 1000 grape" \
		"row3 g:d 4000 quince" &&
	: SKIP: a row shows whole or not at all &&
	check "SKIP ValueFilter(!=, 'binary:fig')" "row1 f:a 2000 Banana" \
		"row1 f:b 1000 cherry" "row1 g:c 1000 date" \
		"row3 f:b 1000 Pear" "row3 g:d 4000 quince" &&
	: WHILE: the scan ends at the first row that fails &&
	check " WHILE   RowFilter ( !=, 'binary:row2')" \
		"row1 f:a 2000 Banana" "row1 f:b 1000 cherry" "row1 g:c 1000 date" &&
	: AND binds tighter than OR, SKIP tighter than AND &&
	check " PrefixFilter ('row2')AND  SKIP FirstKeyOnlyFilter()OR KeyOnlyFilter()" \
		"row1 f:a 2000 '"''"'" "row1 f:b 1000 '"''"'" \
		"row1 g:c 1000 '"''"'" "row2 f:a 1000 '"''"'" \
		"row2 f:b 3000 '"''"'" "row2 g:c 1000 '"''"'" \
		"row3 f:b 1000 '"''"'" "row3 g:d 4000 '"''"'" &&
	check "(ValueFilter(>=,'binary:b') AND (ValueFilter(<=,'binary:d'))) OR ValueFilter(=,'binary:quince')" \
		"row1 f:b 1000 cherry" "row3 g:d 4000 quince" &&
	: with the other parameters &&
	cat "$S/prefix=row1&filter=FamilyFilter(=,'binary:f')&versions=3" >out &&
	printf "row1 f:a 2000 Banana\nrow1 f:a 1000 apple\nrow1 f:b 1000 cherry\n" >expect &&
	test_cmp expect out &&
	cat "$S/reversed&filter=InclusiveStopFilter('row2')" >out &&
	printf "row3 f:b 1000 Pear\nrow3 g:d 4000 quince\nrow2 f:a 1000 elder\nrow2 f:b 3000 fig\nrow2 g:c 1000 grape\n" >expect &&
	test_cmp expect out &&
	cat "$S/filter=ValueFilter(=,'binary:apple')&versions=1" >out &&
	echo "row1 f:a 1000 apple" >expect &&
	test_cmp expect out &&
	: a quote inside a string is two quotes, %XX escapes what a name cannot hold &&
	check "ValueFilter(=, 'binary:it''s') OR RowFilter(=, 'binary:row''3')" &&
	cat "$MNT/q/.scan/filter=ValueFilter(=, 'binary:it''s')" >out &&
	echo "a%27b f:q 1000 it%27s" >expect &&
	test_cmp expect out &&
	cat "$MNT/q/.scan/filter=RowFilter(=, 'binary:a''b')" >out &&
	test_cmp expect out &&
	check "ValueFilter(=,'regexstring:^(fig%7Cdate)%24')" \
		"row1 g:c 1000 date" "row2 f:b 3000 fig"
}

test_expect_success 'each filter, in the memstore' '
	filters && value_filters
'

test_expect_success 'AND, OR, SKIP, WHILE and parentheses as HBase groups them' '
	compound
'

test_expect_success 'the same after flush and after major_compact' '
	echo flush >"$MNT/t/.ctl" && filters && value_filters && compound &&
	echo major_compact >"$MNT/t/.ctl" && filters && value_filters &&
	compound
'

rows() {
	sed -n "s/^cellfs_scan_rows_total{table=\"big\"} //p" "$MNT/big/.stats"
}

test_expect_success 'PrefixFilter, InclusiveStopFilter and WHILE end the scan past their rows' '
	mkdir "$MNT/big" &&
	echo f >"$MNT/big/.schema" &&
	awk "BEGIN { for (i = 0; i < 20000; i++)
		printf \"put r%05d f:q@7 v%d\\n\", i, i }" >big.in &&
	cat big.in >"$MNT/big/.batch" &&
	r0=$(rows) &&
	cat "$MNT/big/.scan/filter=PrefixFilter('"'"'r0012'"'"')" >out &&
	r1=$(rows) &&
	awk "BEGIN { for (i = 120; i < 130; i++)
		printf \"r%05d f:q 7 v%d\\n\", i, i }" >expect &&
	test_cmp expect out &&
	echo "rows scanned: $((r1 - r0))" &&
	test $((r1 - r0)) -lt 1000 &&
	cat "$MNT/big/.scan/filter=InclusiveStopFilter('"'"'r00005'"'"')" >out &&
	r2=$(rows) &&
	printf "r00000 f:q 7 v0\nr00001 f:q 7 v1\nr00002 f:q 7 v2\nr00003 f:q 7 v3\nr00004 f:q 7 v4\nr00005 f:q 7 v5\n" >expect &&
	test_cmp expect out &&
	test $((r2 - r1)) -lt 1000 &&
	cat "$MNT/big/.scan/filter=WHILE ValueFilter(!=,'"'"'binary:v3'"'"')" >out &&
	r3=$(rows) &&
	head -n 3 expect >expect.3 && test_cmp expect.3 out &&
	test $((r3 - r2)) -lt 1000 &&
	: inside OR the scan goes on &&
	cat "$MNT/big/.scan/filter=PrefixFilter('"'"'r0012'"'"') OR RowFilter(=,'"'"'binary:r19999'"'"')" >out &&
	r4=$(rows) &&
	test "$(wc -l <out)" -eq 11 &&
	test $((r4 - r3)) -ge 20000
'

test_expect_success 'malformed filters (TestParseFilter'"'"'s): EINVAL and a .log line' '
	for f in "" "KeyOnlyFilter ('"'"''"'"') " " FirstKeyOnlyFilter ('"'"''"'"') " \
		 " PrefixFilter(row)" " ColumnCountGetFilter('"'"'abc'"'"')" \
		 " ColumnCountGetFilter(2147483648)" " PageFilter('"'"'123'"'"')" \
		 " ColumnPaginationFilter('"'"'124'"'"')" \
		 " ColumnPaginationFilter('"'"'4'"'"' , '"'"'123a'"'"')" \
		 "TimestampsFilter(9223372036854775808, 6)" "TimestampsFilter(-45, 6)" \
		 "RowFilter ('"'"'>>'"'"' , '"'"'binary:region'"'"')" "RowFilter (>> , '"'"'binary:region'"'"')" \
		 "RowFilter (>= , '"'"'binaryoperator:region'"'"')" \
		 "RowFilter (>=, '"'"'regexstring:pre*'"'"')" \
		 "SingleColumnValueFilter ('"'"'family'"'"', '"'"'qualifier'"'"', >=, '"'"'substring:a'"'"', true, false)" \
		 "()" "NoSuchFilter()" "DependentColumnFilter('"'"'f'"'"', '"'"'q'"'"', true, =)" \
		 "PrefixFilter('"'"'a'"'"') AND" "PrefixFilter('"'"'a'"'"') XOR PageFilter(1)" \
		 "PrefixFilter('"'"'a)" "QualifierFilter(=, '"'"'regexstring:('"'"')" \
		 "SingleColumnValueFilter('"'"'f'"'"', '"'"'a'"'"', =, '"'"'binary:x'"'"', true)" \
		 "KeyOnlyFilter(yes)" "KeyOnlyFilter(true, true)" "KeyOnlyFilter(1)"; do
		echo EINVAL >expect &&
		errno_of read "$S/filter=$f" >out && test_cmp expect out &&
		grep -F "lookup filter=$f: scan query: filter" "$MNT/.log" >/dev/null || return 1
	done
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
