#!/bin/sh

test_description='cellfs: HBase Append of several columns of one row through .batch: append ROW F:Q VALUE [F:Q VALUE ...], atomic, errors'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

nl='
'
B="$MNT/t/.batch"

# values: "ROW FAM:QUAL VALUE" of every cell shown by the scan QUERY
# (the timestamps left out: appends write at now).
values() {
	cut -d" " -f1,2,4 "$MNT/t/.scan/$1"
}

test_expect_success 'mount (max_value 1K); families f (5 versions) and g' '
	cellfs_mount max_value=1K &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=5\ng\n" >"$MNT/t/.schema"
'

test_expect_success 'append to absent cells: each starts empty' '
	echo "append r f:a x g:b y" >"$B" &&
	printf "r f:a x\nr g:b y\n" >expect &&
	values all >out && test_cmp expect out
'

test_expect_success 'append to several columns, one named twice (the last value wins), escapes' '
	echo "append r f:a 12 g:b %20z f:a 3 f:n '"''"'" >"$B" &&
	printf "r f:a x3\nr f:n '"''"'\nr g:b y%%20z\n" >expect &&
	values all >out && test_cmp expect out &&
	printf "x3" >expect && test_cmp expect "$MNT/t/r/f:a" &&
	printf "y z" >expect && test_cmp expect "$MNT/t/r/g:b" &&
	printf "r f:a x3\nr f:a x\n" >expect &&
	values "column=f:a&versions=5" >out && test_cmp expect out
'

test_expect_success 'the same after flush and after major_compact' '
	echo flush >"$MNT/t/.ctl" &&
	echo "append r f:a 4 g:b %21" >"$B" &&
	printf "r f:a x34\nr f:n '"''"'\nr g:b y%%20z%%21\n" >expect &&
	values all >out && test_cmp expect out &&
	echo major_compact >"$MNT/t/.ctl" &&
	values all >out && test_cmp expect out &&
	echo "append r f:a 5" >"$B" &&
	echo x345 >expect && values column=f:a | cut -d" " -f3 >out &&
	test_cmp expect out
'

test_expect_success 'a version in the future: the append is newer still' '
	echo "put s f:c@4102444800000 fut" >"$B" &&
	echo "append s f:c ure g:d d" >"$B" &&
	printf "s f:c 4102444800000 future\n" >expect &&
	cat "$MNT/t/.scan/prefix=s&column=f" >out && test_cmp expect out
'

test_expect_success 'bad lines: EINVAL, a .log line, nothing applied' '
	values all >before &&
	for l in "append r" "append r f:a" "append r f:a x g:b" \
		 "append r f:a@5 x" "append r f x" \
		 "append r f:a %zz" "append r f:a x " "append r f:a  x" \
		 "append r f:a x${nl}put r f:b y" \
		 "put r f:b y${nl}append r f:a x" \
		 "append r f:a x${nl}append r f:a y"; do
		echo EINVAL >expect &&
		errno_of write "$B" "$l$nl" >out && test_cmp expect out &&
		last_log >log &&
		grep "line [12]: .*append" log || return 1
	done &&
	values all >after && test_cmp before after
'

# TestAtomicOperation.testAppendWithNonExistingFamily and
# testIncrementWithNonExistingFamily: an Append or Increment naming a
# family the table lacks fails whole (HBase: NoSuchColumnFamilyException),
# the columns of the families it has unchanged; the line in .log names
# the family.  The errno is SPEC's for an unknown family, ENOENT.
test_expect_success 'append and incr naming a family the table lacks: ENOENT, the family named, nothing applied' '
	values all >before &&
	for l in "append r nofam:a x" "append r f:a x nofam:a y" \
		 "append r f:a x g:b y nofam:c z" "incr r f:n 1 nofam:n 2"; do
		echo ENOENT >expect &&
		errno_of write "$B" "$l$nl" >out && test_cmp expect out &&
		last_log >log &&
		grep "line 1: no family .nofam. in the table" log || return 1
	done &&
	values all >after && test_cmp before after
'

test_expect_success 'a value over max_value: EFBIG, logged, no column changed' '
	v=$(printf "%0600d" 0) &&
	echo "append big f:a $v g:b $v" >"$B" &&
	echo EFBIG >expect &&
	errno_of write "$B" "append big g:b short f:a $v$nl" >out &&
	test_cmp expect out &&
	last_log >log && grep "append: a new value would pass max_value" log &&
	printf "big f:a $v\nbig g:b $v\n" >expect &&
	values prefix=big >out && test_cmp expect out
'

test_expect_success 'an append is atomic: a scan never sees some columns of it' '
	echo "append a f:x z g:y z" >"$B" &&
	(
		i=1
		while test $i -le 200; do
			echo "append a f:x z g:y z" >"$B" || exit 1
			i=$((i + 1))
		done
	) &
	w=$! &&
	n=0 &&
	while kill -0 $w 2>/dev/null; do
		values prefix=a >out || break
		x=$(sed -n "s/^a f:x //p" out) &&
		y=$(sed -n "s/^a g:y //p" out) &&
		test "$x" = "$y" || { echo "torn: $x $y"; kill $w; break; }
		n=$((n + 1))
	done &&
	wait $w &&
	test $n -gt 0 &&
	values prefix=a >out &&
	x=$(sed -n "s/^a f:x //p" out) &&
	test ${#x} = 201 &&
	sed -n "s/^a g:y //p" out >y && echo "$x" >x && test_cmp x y
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
