#!/bin/sh

test_description='cellfs: HBase mutations through .batch: timestamped deletes, DeleteFamilyVersion, Increment, CheckAndPut/CheckAndDelete/CheckAndMutate, RowMutations'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

nl='
'
B="$MNT/t/.batch"

# scan QUERY: the scan file of table t (every version with versions=9).
scan() {
	cat "$MNT/t/.scan/$1"
}

# seed: r holds f:a, f:b, g:c at 1000 and 2000.
seed() {
	echo "delete r" >"$B" &&
	printf "put r f:a@1000 a1\nput r f:a@2000 a2\nput r f:b@1000 b1\nput r f:b@2000 b2\nput r g:c@1000 c1\nput r g:c@2000 c2\n" >"$B"
}

# seeded: what the scan shows of seed, nothing deleted.
seeded() {
	printf "r f:a 2000 a2\nr f:a 1000 a1\nr f:b 2000 b2\nr f:b 1000 b1\nr g:c 2000 c2\nr g:c 1000 c1\n"
}

# check_all EXPECT: the scan shows EXPECT now, after flush and after
# major_compact.
check_all() {
	scan versions=9 >out && test_cmp "$1" out &&
	echo flush >"$MNT/t/.ctl" &&
	scan versions=9 >out && test_cmp "$1" out &&
	echo major_compact >"$MNT/t/.ctl" &&
	scan versions=9 >out && test_cmp "$1" out
}

test_expect_success 'mount; families f and g keep 5 versions' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=5\ng VERSIONS=5\n" >"$MNT/t/.schema"
'

test_expect_success 'deletecolumns at TS: every version <= TS of the column' '
	seed && echo "deletecolumns r f:a@1500" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 2000 a2
	r f:b 2000 b2
	r f:b 1000 b1
	r g:c 2000 c2
	r g:c 1000 c1
	EOF
	check_all expect
'

test_expect_success 'deletecolumn at TS: that version; without TS: the latest' '
	seed && printf "deletecolumn r f:a@1000\ndeletecolumn r f:b\n" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 2000 a2
	r f:b 1000 b1
	r g:c 2000 c2
	r g:c 1000 c1
	EOF
	check_all expect
'

test_expect_success 'deletefamily at TS; deleteall of a family and of a column' '
	seed && printf "deletefamily r f@1000\ndeleteall r g:c@2000\n" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 2000 a2
	r f:b 2000 b2
	EOF
	check_all expect &&
	seed && echo "deleteall r g@1000" >"$B" &&
	scan "column=g&versions=9" >out &&
	echo "r g:c 2000 c2" >expect && test_cmp expect out
'

test_expect_success 'deletefamilyversion: the versions at exactly TS of every column' '
	seed && echo "put r f:x@3000 x3" >"$B" &&
	echo "deletefamilyversion r f@2000" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 1000 a1
	r f:b 1000 b1
	r f:x 3000 x3
	r g:c 2000 c2
	r g:c 1000 c1
	EOF
	check_all expect
'

test_expect_success 'deleteall ROW @TS: every family, versions <= TS' '
	seed && echo "deleteall r @1000" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 2000 a2
	r f:b 2000 b2
	r g:c 2000 c2
	EOF
	check_all expect
'

test_expect_success 'deleteall ROW with an empty last word: EINVAL, logged, nothing deleted' '
	seed &&
	echo EINVAL >expect &&
	errno_of write "$B" "deleteall r " >out && test_cmp expect out &&
	grep "write .batch: line 1: not a known verb with its arguments" "$MNT/.log" &&
	seeded >expect &&
	check_all expect
'

test_expect_success 'checkanddelete with an empty target word: EINVAL, logged, nothing deleted' '
	seed &&
	echo EINVAL >expect &&
	errno_of write "$B" "checkanddelete r f:a a2 f " >out && test_cmp expect out &&
	grep "write .batch: line 1: " "$MNT/.log" &&
	seeded >expect &&
	check_all expect
'

test_expect_success 'a delete masks only what was written before it' '
	seed && echo "deletefamily r f@5000" >"$B" &&
	echo "put r f:a@1000 again" >"$B" &&
	cat >expect <<-\EOF &&
	r f:a 1000 again
	r g:c 2000 c2
	r g:c 1000 c1
	EOF
	check_all expect
'

test_expect_success 'KEEP_DELETED_CELLS: a time range before the delete still sees it' '
	mkdir "$MNT/k" &&
	printf "f VERSIONS=5 KEEP_DELETED_CELLS=TRUE\n" >"$MNT/k/.schema" &&
	printf "put r f:a@1000 a1\nput r f:a@2000 a2\n" >"$MNT/k/.batch" &&
	echo "deletefamily r f@3000" >"$MNT/k/.batch" &&
	printf "r f:a 2000 a2\nr f:a 1000 a1\n" >expect &&
	for step in memstore flush major_compact; do
		test $step = memstore || echo $step >"$MNT/k/.ctl" &&
		cat "$MNT/k/.scan/time=,3000&versions=9" >out &&
		test_cmp expect out &&
		cat "$MNT/k/.scan/time=,3001&versions=9" >out &&
		test_must_be_empty out || return 1
	done
'

test_expect_success 'incr: the 8-byte counter HBase stores, read as decimal too' '
	echo "incr r f:n 41" >"$B" && echo "incr r f:n" >"$B" &&
	echo 42 >expect && cat "$MNT/t/r/f:n@counter" >out &&
	test_cmp expect out &&
	printf "\000\000\000\000\000\000\000\052" >expect &&
	cat "$MNT/t/r/f:n" >out && cmp expect out &&
	echo "incr r f:n -50" >"$B" &&
	echo -8 >expect && cat "$MNT/t/r/f:n@counter" >out &&
	test_cmp expect out &&
	echo 3 >stat.expect && stat -c %s "$MNT/t/r/f:n@counter" >out &&
	test_cmp stat.expect out
'

test_expect_success 'the counter file: a write adds, created when absent' '
	echo 5 >"$MNT/t/r/f:m@counter" &&
	echo 5 >>"$MNT/t/r/f:m@counter" &&
	printf -- "-3" >"$MNT/t/r/f:m@counter" &&
	echo 7 >expect && cat "$MNT/t/r/f:m@counter" >out &&
	test_cmp expect out &&
	echo flush >"$MNT/t/.ctl" && echo major_compact >"$MNT/t/.ctl" &&
	cat "$MNT/t/r/f:m@counter" >out && test_cmp expect out
'

test_expect_success 'counters refuse what is not one: EINVAL, ERANGE, logged' '
	echo EINVAL >expect &&
	errno_of write "$MNT/t/r/f:m@counter" "abc" >out && test_cmp expect out &&
	grep "write f:m@counter: not one decimal number" "$MNT/.log" &&
	errno_of write "$MNT/t/r/f:m@counter" "1${nl}2" >out &&
	test_cmp expect out &&
	echo "put r f:a xx" >"$B" &&
	errno_of read "$MNT/t/r/f:a@counter" >out && test_cmp expect out &&
	grep "open f:a@counter: not an 8-byte counter (2 bytes)" "$MNT/.log" &&
	errno_of write "$B" "incr r f:a 1${nl}" >out && test_cmp expect out &&
	grep "incr: the cell holds no 8-byte counter" "$MNT/.log" &&
	errno_of write "$B" "incr r f:m 1${nl}incr r f:m 1${nl}" >out &&
	test_cmp expect out &&
	grep "line 2: incr goes alone in its write" "$MNT/.log" &&
	echo ERANGE >expect &&
	errno_of write "$B" "incr r f:m 9223372036854775807${nl}" >out &&
	test_cmp expect out &&
	grep "the counter would overflow" "$MNT/.log" &&
	echo 7 >expect && cat "$MNT/t/r/f:m@counter" >out &&
	test_cmp expect out
'

test_expect_success 'checkandput: applied iff the value is as expected, else ECANCELED' '
	echo "put c f:q old" >"$B" &&
	echo ECANCELED >expect &&
	errno_of write "$B" "checkandput c f:q other f:p new${nl}" >out &&
	test_cmp expect out &&
	grep "line 1: check failed: the cell.s value does not match; nothing applied" "$MNT/.log" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/c/f:p" >out && test_cmp expect out &&
	echo "checkandput c f:q old f:p new" >"$B" &&
	printf new >expect && cat "$MNT/t/c/f:p" >out && test_cmp expect out &&
	echo "checkandput c f:none @none f:p@7 seven" >"$B" &&
	printf seven >expect && cat "$MNT/t/c/f:p@7" >out &&
	test_cmp expect out &&
	echo ECANCELED >expect &&
	errno_of write "$B" "checkandput c f:q @none f:p x${nl}" >out &&
	test_cmp expect out
'

test_expect_success 'checkanddelete: a column, a family, the row' '
	printf "put d f:a 1\nput d f:b 2\nput d g:c 3\n" >"$B" &&
	echo ECANCELED >expect &&
	errno_of write "$B" "checkanddelete d f:a 9 f:b${nl}" >out &&
	test_cmp expect out &&
	echo "checkanddelete d f:a 1 f:b" >"$B" &&
	scan prefix=d >out &&
	printf "d f:a %s 1\nd g:c %s 3\n" $(stat -c %Y "$MNT/t/d/f:a") \
		$(stat -c %Y "$MNT/t/d/g:c") >/dev/null &&
	cut -d" " -f1,2,4 out >out2 &&
	printf "d f:a 1\nd g:c 3\n" >expect && test_cmp expect out2 &&
	echo "checkanddelete d f:a 1 g" >"$B" &&
	scan prefix=d | cut -d" " -f1,2,4 >out2 &&
	printf "d f:a 1\n" >expect && test_cmp expect out2 &&
	echo "checkanddelete d f:a 1" >"$B" &&
	scan prefix=d >out && test_must_be_empty out
'

test_expect_success 'ifequals / ifnotexists: the lines after the check, all or nothing' '
	printf "put e f:v 1\nput e f:w 1\n" >"$B" &&
	printf "ifequals e f:v 1\nput e f:v 2\ndelete e f:w\nput e g:x 2\n" >"$B" &&
	scan prefix=e | cut -d" " -f1,2,4 >out &&
	printf "e f:v 2\ne g:x 2\n" >expect && test_cmp expect out &&
	echo ECANCELED >expect &&
	errno_of write "$B" "ifequals e f:v 1${nl}put e f:v 3${nl}" >out &&
	test_cmp expect out &&
	errno_of write "$B" "ifnotexists e g:x${nl}put e f:v 3${nl}" >out &&
	test_cmp expect out &&
	echo "ifnotexists e g:y${nl}put e f:v 4" >"$B" &&
	scan prefix=e | cut -d" " -f1,2,4 >out &&
	printf "e f:v 4\ne g:x 2\n" >expect && test_cmp expect out
'

test_expect_success 'malformed lines: EINVAL, the line in .log, nothing applied' '
	printf "put z f:q 1\n" >"$B" &&
	for l in "deletefamily z f:q" "deletefamilyversion z f" \
		 "deletefamilyversion z f:q@1" "deleteall z @x" \
		 "deletecolumns z f" "incr z f:q x" \
		 "incr z f:q@5 1" "checkandput z f:q 1 f:p" \
		 "checkanddelete z f:q" "ifequals z f:q" "ifequals z f:q 1" \
		 "frobnicate z" "put z f:q %zz"; do
		echo EINVAL >expect &&
		errno_of write "$B" "put z f:q 2${nl}$l${nl}" >out &&
		test_cmp expect out &&
		grep -F "write .batch: line 2: " "$MNT/.log" >/dev/null &&
		printf 1 >expect && cat "$MNT/t/z/f:q" >out &&
		test_cmp expect out || return 1
	done &&
	errno_of write "$B" "ifequals z f:q 1${nl}put other f:q 2${nl}" >out &&
	echo EINVAL >expect && test_cmp expect out &&
	grep "line 2: the lines after a check change its row only" "$MNT/.log" &&
	errno_of write "$B" "put z f:q 3${nl}checkandput z f:q 1 f:q 5${nl}" >out &&
	test_cmp expect out &&
	printf 1 >expect && cat "$MNT/t/z/f:q" >out && test_cmp expect out
'

test_expect_success 'a line naming a family the table lacks: ENOENT, the family in .log, nothing applied' '
	for l in "deletecolumn z nofam:q" "put z nofam:q 3" "deletefamily z nofam" \
		 "deleteall z nofam" "deletefamilyversion z nofam@5"; do
		echo ENOENT >expect &&
		errno_of write "$B" "put z f:q 2${nl}$l${nl}put z f:q 4${nl}" >out &&
		test_cmp expect out &&
		last_log | grep -F "write .batch: line 2: no family '"'"'nofam'"'"' in the table" &&
		printf 1 >expect && cat "$MNT/t/z/f:q" >out &&
		test_cmp expect out || return 1
	done &&
	echo ENOENT >expect &&
	errno_of write "$B" "ifequals z nofam:q 1${nl}put z f:q 4${nl}" >out &&
	test_cmp expect out &&
	last_log | grep -F "write .batch: line 1: no family" &&
	: the wrong form is EINVAL before the family is looked up &&
	echo EINVAL >expect &&
	errno_of write "$B" "delete z nofam${nl}" >out && test_cmp expect out &&
	errno_of write "$B" "deletefamily z nofam:q${nl}" >out &&
	test_cmp expect out &&
	printf 1 >expect && cat "$MNT/t/z/f:q" >out && test_cmp expect out
'

test_expect_success 'a row mutation is atomic: a scan never sees half of one' '
	printf "put a f:x 0\nput a f:y 0\n" >"$B" &&
	(
		i=1
		while test $i -le 300; do
			printf "put a f:x $i\nput a f:y $i\n" >"$B" || exit 1
			i=$((i + 1))
		done
	) &
	w=$! &&
	n=0 &&
	while kill -0 $w 2>/dev/null; do
		scan prefix=a >out || break
		x=$(sed -n "s/^a f:x [0-9]* //p" out) &&
		y=$(sed -n "s/^a f:y [0-9]* //p" out) &&
		test "$x" = "$y" || { echo "torn: $x $y"; kill $w; break; }
		n=$((n + 1))
	done &&
	wait $w &&
	test $n -gt 0 &&
	scan prefix=a | cut -d" " -f2,4 >out &&
	printf "f:x 300\nf:y 300\n" >expect && test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
