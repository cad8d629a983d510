#!/bin/sh

test_description='cellfs: the daemon caches what the engine said of a cell (absent, or size and version); every change through any path makes it ask again'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

# mtime FILE: its modification time in milliseconds (a cell's version)
mtime() {
	stat -c %.3Y "$1" | tr -d .
}

test_expect_success 'mount, a table and a row' '
	cellfs_mount max_value=100 &&
	mkdir "$MNT/t" "$R"
'

test_expect_success 'a stat after a create shows the value written' '
	printf 12345 >"$R/cf:a" &&
	test "$(stat -c %s "$R/cf:a")" = 5 &&
	printf 1234567 >"$R/cf:a" &&
	test "$(stat -c %s "$R/cf:a")" = 7
'

test_expect_success 'a create whose value is refused leaves no cell' '
	test_must_fail sh -c "head -c 200 /dev/zero >\"\$1\"" sh "$R/cf:big" &&
	test_must_fail stat "$R/cf:big" 2>/dev/null &&
	test_must_fail cat "$R/cf:big" 2>/dev/null &&
	printf ok >"$R/cf:big" &&
	test "$(stat -c %s "$R/cf:big")" = 2 &&
	rm "$R/cf:big"
'

test_expect_success 'a missing cell, then made through .batch, is found' '
	test_must_fail stat "$R/cf:b" 2>/dev/null &&
	test_must_fail stat "$R/cf:b" 2>/dev/null &&
	echo "put r cf:b abc" >"$MNT/t/.batch" &&
	test "$(stat -c %s "$R/cf:b")" = 3
'

test_expect_success 'a missing cell, then made through its region name, is found' '
	test_must_fail stat "$R/cf:c" 2>/dev/null &&
	printf ab >"$MNT/t/@/r/cf:c" &&
	test "$(stat -c %s "$R/cf:c")" = 2
'

test_expect_success 'a cell deleted through .batch or rm is gone' '
	test "$(stat -c %s "$R/cf:b")" = 3 &&
	echo "delete r cf:b" >"$MNT/t/.batch" &&
	test_must_fail stat "$R/cf:b" 2>/dev/null &&
	test "$(stat -c %s "$R/cf:c")" = 2 &&
	rm "$MNT/t/@/r/cf:c" &&
	test_must_fail stat "$R/cf:c" 2>/dev/null &&
	printf x >"$R/cf:c" &&
	rm "$R/cf:c" &&
	test_must_fail stat "$R/cf:c" 2>/dev/null
'

test_expect_success 'a rename moves the attributes with the value' '
	printf 1234 >"$R/cf:d" &&
	test "$(stat -c %s "$MNT/t/@/r/cf:d")" = 4 &&
	test_must_fail stat "$MNT/t/@/r/cf:e" 2>/dev/null &&
	mv "$R/cf:d" "$R/cf:e" &&
	test_must_fail stat "$MNT/t/@/r/cf:d" 2>/dev/null &&
	test "$(stat -c %s "$MNT/t/@/r/cf:e")" = 4
'

# mv looks the source up first (cached 10 s), and the kernel moves that
# inode to the new name: the daemon's node has to follow it.
test_expect_success 'a name looked up, then moved, is read at once' '
	printf 123 >"$R/cf:m" &&
	test "$(stat -c %s "$R/cf:m")" = 3 &&
	mv "$R/cf:m" "$R/cf:n" &&
	test "$(stat -c %s "$R/cf:n")" = 3 &&
	cat "$R/cf:n" >out && printf 123 >expect && test_cmp expect out &&
	test_must_fail stat "$R/cf:m" 2>/dev/null &&
	mv "$R/cf:n" "$MNT/t/@/r/cf:o" &&
	cat "$R/cf:o" >out && test_cmp expect out &&
	rm "$R/cf:o"
'

test_expect_success 'a file open for writing when moved commits under its new name' '
	exec 5>"$R/cf:w" &&
	printf open >&5 &&
	mv "$R/cf:w" "$R/cf:w2" &&
	printf more >&5 &&
	exec 5>&- &&
	test_must_fail stat "$R/cf:w" 2>/dev/null &&
	cat "$R/cf:w2" >out && printf openmore >expect && test_cmp expect out
'

test_expect_success 'a put older than a future version is not the latest' '
	future=$(( $(date +%s) * 1000 + 3600000 )) &&
	printf now >"$R/cf:f" &&
	test "$(stat -c %s "$R/cf:f")" = 3 &&
	printf future-value >"$R/cf:f@$future" &&
	test "$(stat -c %s "$R/cf:f")" = 12 &&
	test "$(mtime "$R/cf:f")" = $future &&
	printf later >"$R/cf:f" &&
	test "$(stat -c %s "$R/cf:f")" = 12 &&
	test "$(mtime "$R/cf:f")" = $future &&
	cat "$R/cf:f" >out && printf future-value >expect &&
	test_cmp expect out
'

test_expect_success 'a version set with touch is what stat shows' '
	printf v >"$R/cf:g" &&
	touch -d @1000000000 "$R/cf:g" &&
	test "$(mtime "$R/cf:g")" = 1000000000000 &&
	printf vv >"$R/cf:g" &&
	test "$(stat -c %s "$R/cf:g")" = 2 &&
	test "$(mtime "$R/cf:g")" -gt 1000000000000
'

test_expect_success 'a TTL set after a cached stat: the cell expires' '
	mkdir "$MNT/ttl" "$MNT/ttl/r" &&
	printf abc >"$MNT/ttl/r/cf:q" &&
	test "$(stat -c %s "$MNT/ttl/r/cf:q")" = 3 &&
	echo "cf TTL=1" >"$MNT/ttl/.schema" &&
	sleep 2 &&
	test_must_fail stat "$MNT/ttl/r/cf:q" 2>/dev/null &&
	mkdir "$MNT/ttl/r" &&
	printf abcd >"$MNT/ttl/r/cf:q" &&
	test "$(stat -c %s "$MNT/ttl/r/cf:q")" = 4 &&
	sleep 2 &&
	test_must_fail stat "$MNT/ttl/r/cf:q" 2>/dev/null
'

test_expect_success 'a dropped table made again has none of the old cells' '
	printf old >"$MNT/t/r/cf:h" &&
	test "$(stat -c %s "$MNT/t/r/cf:h")" = 3 &&
	echo drop >"$MNT/t/.ctl" &&
	mkdir "$MNT/t" "$MNT/t/r" &&
	test_must_fail stat "$MNT/t/r/cf:h" 2>/dev/null
'

test_expect_success 'a family dropped and added again has none of its cells' '
	printf old >"$MNT/t/r/cf:i" &&
	test "$(stat -c %s "$MNT/t/r/cf:i")" = 3 &&
	printf "cf\nx\n" >"$MNT/t/.schema" &&
	test "$(stat -c %s "$MNT/t/r/cf:i")" = 3 &&
	printf "x\n" >"$MNT/t/.schema" &&
	printf "cf\nx\n" >"$MNT/t/.schema" &&
	test_must_fail stat "$MNT/t/r/cf:i" 2>/dev/null
'

# The tsd layer writes its tables itself: a UID cell found missing is
# there once a put line names it.
test_expect_success 'a time-series UID cell appears after a put' '
	echo "m.a 1292148123 1 host=m.b" >>"$MNT/tsd/put" &&
	test -f "$MNT/tsdb-uid/m.b/id:tagv" &&
	test_must_fail stat "$MNT/tsdb-uid/m.b/id:metrics" 2>/dev/null &&
	echo "m.b 1292148123 2 host=x" >>"$MNT/tsd/put" &&
	test "$(stat -c %s "$MNT/tsdb-uid/m.b/id:metrics")" = 3
'

# latest ROW COLUMN: the version of the newest COLUMN@TS in ROW/.versions
latest() {
	ls "$1/.versions" | sed -n "s/^$2@//p" | sort -n | tail -n 1
}

# A close that puts tells the kernel the cell's attributes changed
# unless it holds none since the last write: either way a stat after the
# close shows the Put's size and version, also when the file was
# stat'ed (fstat) between its last write and its close.
test_expect_success 'a stat after a close shows the Put, fstat while open or not' '
	V="$MNT/v/r" && mkdir "$MNT/v" "$V" &&
	printf abc >"$V/cf:v" && v1=$(mtime "$V/cf:v") &&
	sleep 0.02 &&
	printf xyz >"$V/cf:v" && v2=$(mtime "$V/cf:v") &&
	test "$v2" -gt "$v1" && test "$v2" = "$(latest "$V" cf:v)" &&
	perl -e "open(my \$f, \">\", \$ARGV[0]) or die; syswrite(\$f, \"abcd\");
		my @s = stat(\$f) or die;
		select(undef, undef, undef, 0.05); close(\$f) or die" "$V/cf:v" &&
	test "$(stat -c %s "$V/cf:v")" = 4 &&
	v3=$(mtime "$V/cf:v") && test "$v3" -gt "$v2" &&
	test "$v3" = "$(latest "$V" cf:v)" &&
	: >"$V/cf:v" && test "$(stat -c %s "$V/cf:v")" = 0 &&
	test "$(mtime "$V/cf:v")" = "$(latest "$V" cf:v)"
'

gets() {
	sed -n "s/^cellfs_gets_total{table=\"$1\"} //p" "$MNT/$1/.stats"
}

# The kernel keeps a name cache_timeout seconds (1 here, 10 by default),
# then looks it up again on the next path walk: the wait below is that
# timeout passing.  A row with a cell the daemon knows present exists
# without an engine read; one whose cells it does not know (.batch
# forgets the table's) is asked.
# r1_known: a row made and given a cell, looked up again once the
# kernel's names timed out, reads nothing.  What the daemon knows of the
# cell lives in its node, which the kernel forgetting it (another suite's
# drop_caches) frees: cellfs_undisturbed (the .batch's dropping of r2,
# two inodes, may be forgotten meanwhile).
r1_known() {
	mkdir "$MNT/k/r1" && echo a >"$MNT/k/r1/cf:a" &&
	sleep 2 &&
	g0=$(gets k) &&
	test -d "$MNT/k/r1" &&
	stat "$MNT/k/r1/cf:a" >/dev/null &&
	g1=$(gets k) &&
	test $((g1 - g0)) = 0
}

r1_gone() {
	rm -f "$MNT/k/r1/cf:a" && { rmdir "$MNT/k/r1" 2>/dev/null; true; }
}

test_expect_success 'a row looked up again: known by its cells' '
	cellfs_umount &&
	cellfs_mount cache_timeout=1 &&
	mkdir "$MNT/k" "$MNT/k/r2" &&
	echo b >"$MNT/k/r2/cf:b" &&
	echo "put r3 cf:c c" >"$MNT/k/.batch" &&
	stat "$MNT/k/r3/cf:c" >/dev/null &&
	echo "delete r2" >"$MNT/k/.batch" &&
	cellfs_undisturbed 2 r1_gone r1_known &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/k/r2" >out && test_cmp expect out &&
	test -d "$MNT/k/r3" && test -f "$MNT/k/r3/cf:c" &&
	g2=$(gets k) &&
	test $((g2 - g1)) -ge 1
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
