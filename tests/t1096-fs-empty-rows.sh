#!/bin/sh

test_description='cellfs: an empty row (mkdir, rm of its last cell) is removable by rmdir until a cell lands in it by any path'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

gets() {
	sed -n "s/^cellfs_gets_total{table=\"t\"} //p" "$MNT/t/.stats"
}

test_expect_success 'mount, a table' '
	cellfs_mount &&
	mkdir "$MNT/t"
'

# The row made by mkdir remembers the cells written in it, and rm of
# the last of them leaves it known empty: that rmdir reads nothing.
# What the daemon knows of a row lives partly in its node, which it frees
# when the kernel forgets the row (another suite's drop_caches, memory
# pressure); the counts of engine reads below hold while the kernel keeps
# the rows (cellfs_undisturbed), and a disturbed run is made again.

# r1_rmdir: rmdir of the emptied row r1 reads nothing (the kernel forgets
# r1 and, maybe only now, the cell rm removed from it)
r1_rmdir() {
	g0=$(gets) &&
	rmdir "$MNT/t/r1" &&
	g1=$(gets) &&
	test $((g1 - g0)) = 0
}

# r1_again: r1 emptied by rm again
r1_again() {
	{ rmdir "$MNT/t/r1" 2>/dev/null; true; } &&
	mkdir "$MNT/t/r1" && echo a >"$MNT/t/r1/cf:a" && rm "$MNT/t/r1/cf:a"
}

test_expect_success 'rm of the last cell leaves an empty row; rmdir removes it' '
	mkdir "$MNT/t/r1" &&
	echo a >"$MNT/t/r1/cf:a" && echo b >"$MNT/t/r1/cf:b" &&
	rm "$MNT/t/r1/cf:a" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/r1" >out && test_cmp expect out &&
	rm "$MNT/t/r1/cf:b" &&
	ls -A "$MNT/t/r1" >out && test_must_be_empty out &&
	test -d "$MNT/t/r1" &&
	cellfs_undisturbed 2 r1_again r1_rmdir &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/r1" >out && test_cmp expect out
'

test_expect_success 'a cell put through .batch in an empty row: ENOTEMPTY' '
	mkdir "$MNT/t/r2" &&
	echo "put r2 cf:x v" >"$MNT/t/.batch" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/r2" >out && test_cmp expect out &&
	rm "$MNT/t/r2/cf:x" &&
	echo x >"$MNT/t/r2/cf:y" && rm "$MNT/t/r2/cf:y" &&
	echo "put r2 cf:z v" >"$MNT/t/.batch" &&
	errno_of rmdir "$MNT/t/r2" >out && test_cmp expect out &&
	ls "$MNT/t/r2" >out && echo cf:z >expect.ls && test_cmp expect.ls out &&
	rm "$MNT/t/r2/cf:z" && rmdir "$MNT/t/r2"
'

test_expect_success 'a cell written, appended, moved in an emptied row: ENOTEMPTY' '
	mkdir "$MNT/t/r3" &&
	echo v >"$MNT/t/r3/cf:a" && rm "$MNT/t/r3/cf:a" &&
	echo w >>"$MNT/t/r3/cf:b" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/r3" >out && test_cmp expect out &&
	mv "$MNT/t/r3/cf:b" "$MNT/t/r3/cf:c" &&
	errno_of rmdir "$MNT/t/r3" >out && test_cmp expect out &&
	rm "$MNT/t/r3/cf:c" && rmdir "$MNT/t/r3" &&
	ls -A "$MNT/t" >out && printf ".schema\n@\n" >expect && test_cmp expect out
'

# The kernel sends LOOKUP before MKDIR; the row the LOOKUP found absent
# is not read again when nothing changed the table's rows in between.
test_expect_success 'mkdir of a new row reads the engine once' '
	g0=$(gets) &&
	mkdir "$MNT/t/new1" &&
	g1=$(gets) &&
	test $((g1 - g0)) = 1 &&
	test -d "$MNT/t/new1" &&
	echo EEXIST >expect &&
	errno_of mkdir "$MNT/t/new1" >out && test_cmp expect out &&
	echo x >"$MNT/t/new1/cf:a" &&
	errno_of mkdir "$MNT/t/new1" >out && test_cmp expect out &&
	rm "$MNT/t/new1/cf:a" && rmdir "$MNT/t/new1" &&
	mkdir "$MNT/t/new1" && rmdir "$MNT/t/new1"
'

# The cells written in a row made by mkdir: their LOOKUPs know the row
# had none but those written since; a cell put another way (.batch) ends
# that, and the next LOOKUP asks the engine (and so may the stat of the
# row, whose cells' attributes the .batch forgot).
# new2_cells: the row new2 made, cells written into it: no engine read
new2_cells() {
	mkdir "$MNT/t/new2" &&
	g0=$(gets) &&
	echo x >"$MNT/t/new2/cf:a" &&
	g1=$(gets) &&
	echo y >"$MNT/t/new2/cf:b" &&
	echo y2 >"$MNT/t/new2/cf:b" &&
	g2=$(gets) &&
	test $((g1 - g0)) = 0 && test $((g2 - g1)) = 0
}

new2_gone() {
	rm -f "$MNT/t/new2/cf:a" "$MNT/t/new2/cf:b" &&
	{ rmdir "$MNT/t/new2" 2>/dev/null; true; }
}

test_expect_success 'the cells of a row made by mkdir: no engine read' '
	cellfs_undisturbed 0 new2_gone new2_cells &&
	echo "put new2 cf:d w" >"$MNT/t/.batch" &&
	g3=$(gets) &&
	echo e >"$MNT/t/new2/cf:e" &&
	g4=$(gets) &&
	test $((g4 - g3)) -ge 1 &&
	echo y2 >expect && cat "$MNT/t/new2/cf:b" >out && test_cmp expect out &&
	printf w >expect && cat "$MNT/t/new2/cf:d" >out && test_cmp expect out &&
	rm "$MNT/t/new2/cf:d" "$MNT/t/new2/cf:e" &&
	echo x >expect && cat "$MNT/t/new2/cf:a" >out && test_cmp expect out &&
	echo "put new2 cf:c z" >"$MNT/t/.batch" &&
	rm "$MNT/t/new2/cf:a" "$MNT/t/new2/cf:b" &&
	mkdir "$MNT/t/new3" &&
	echo "put new3 cf:a from-batch" >"$MNT/t/.batch" &&
	printf from-batch >expect && cat "$MNT/t/new3/cf:a" >out &&
	test_cmp expect out &&
	echo c >"$MNT/t/new3/cf:b" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/new3" >out && test_cmp expect out
'

# cp -r, rsync and tar make every row, then fill them: a cell written
# in one row leaves what the daemon knows of the others.
# f_filled: rows f0..f7 made, then filled: no engine read
f_filled() {
	for i in 0 1 2 3 4 5 6 7; do mkdir "$MNT/t/f$i" || return 1; done &&
	g0=$(gets) &&
	for i in 0 1 2 3 4 5 6 7; do
		for q in a b c; do
			echo "$i$q" >"$MNT/t/f$i/cf:$q" || return 1
		done
	done &&
	g1=$(gets) &&
	test $((g1 - g0)) = 0
}

f_gone() {
	for i in 0 1 2 3 4 5 6 7; do
		rm -f "$MNT/t/f$i/cf:a" "$MNT/t/f$i/cf:b" "$MNT/t/f$i/cf:c"
		rmdir "$MNT/t/f$i" 2>/dev/null
	done
	true
}

test_expect_success 'rows made first, then filled: no engine read' '
	cellfs_undisturbed 0 f_gone f_filled &&
	for i in 0 1 2 3 4 5 6 7; do
		ls "$MNT/t/f$i" >out && printf "cf:a\ncf:b\ncf:c\n" >expect &&
		test_cmp expect out &&
		echo "${i}b" >expect && cat "$MNT/t/f$i/cf:b" >out &&
		test_cmp expect out || return 1
	done
'

# What the daemon knows of a filled row is undone by every other way a
# cell can come into it: its region's name, .batch, mv, a schema change.
test_expect_success 'a filled row: cells that come another way are found' '
	mkdir "$MNT/t/g1" && echo a >"$MNT/t/g1/cf:a" &&
	echo b >"$MNT/t/@/g1/cf:b" &&
	echo b >expect && cat "$MNT/t/g1/cf:b" >out && test_cmp expect out &&
	echo "put g1 cf:c c" >"$MNT/t/.batch" &&
	printf c >expect && cat "$MNT/t/g1/cf:c" >out && test_cmp expect out &&
	mkdir "$MNT/t/g2" && echo a >"$MNT/t/g2/cf:a" &&
	mv "$MNT/t/g1/cf:a" "$MNT/t/g2/cf:m" &&
	echo a >expect && cat "$MNT/t/g2/cf:m" >out && test_cmp expect out &&
	mkdir "$MNT/t/g3" && echo a >"$MNT/t/g3/cf:a" &&
	echo "put g3 cf:z z" >"$MNT/t/.batch" &&
	printf z >expect && cat "$MNT/t/g3/cf:z" >out && test_cmp expect out
'

# A row with cells is no empty row: when its cells go another way, the
# row goes too (rm keeps an emptied row; .batch does not).
test_expect_success 'a filled row whose cells go through .batch is gone' '
	mkdir "$MNT/t/h1" && echo a >"$MNT/t/h1/cf:a" &&
	echo b >"$MNT/t/h1/cf:b" &&
	echo "delete h1" >"$MNT/t/.batch" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/h1" >out && test_cmp expect out &&
	errno_of stat "$MNT/t/h1/cf:a" >out && test_cmp expect out &&
	mkdir "$MNT/t/h1" && rmdir "$MNT/t/h1"
'

# A cell written again after its rm: the row has it again.
test_expect_success 'a cell written again after its rm keeps its row' '
	mkdir "$MNT/t/e2" && echo a >"$MNT/t/e2/cf:a" &&
	rm "$MNT/t/e2/cf:a" && echo a2 >"$MNT/t/e2/cf:a" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/e2" >out && test_cmp expect out &&
	echo a2 >expect && cat "$MNT/t/e2/cf:a" >out && test_cmp expect out &&
	rm "$MNT/t/e2/cf:a" && rmdir "$MNT/t/e2"
'

# Past 32 columns a row is no longer followed; its lookups ask the engine.
test_expect_success 'a row of more than 32 cells made through the mount' '
	mkdir "$MNT/t/w1" &&
	for i in $(seq 1 40); do
		echo "$i" >"$MNT/t/w1/cf:q$i" || return 1
	done &&
	ls "$MNT/t/w1" | wc -l >out && echo 40 >expect && test_cmp expect out &&
	echo 37 >expect && cat "$MNT/t/w1/cf:q37" >out && test_cmp expect out &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/w1/cf:q41" >out && test_cmp expect out &&
	rm "$MNT/t/w1/cf:q1" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/w1" >out && test_cmp expect out &&
	rm "$MNT/t/w1"/cf:* && rmdir "$MNT/t/w1"
'

# filled_past: 16400 rows made and filled; the first is remembered, the
# last asked.  The daemon keeps a row's time in its node, which the
# kernel forgetting the row (another suite's drop_caches) frees: then a
# stat of the row reads it (cellfs_undisturbed).
filled_past() {
	xargs -d "\n" mkdir <rows &&
	while read -r r; do echo a >"$r/cf:a" || return 1; done <rows &&
	g0=$(gets) &&
	echo b >"$MNT/t/c00000/cf:b" &&
	g1=$(gets) &&
	echo b >"$MNT/t/c16399/cf:b" &&
	g2=$(gets) &&
	test $((g1 - g0)) = 0 && test $((g2 - g1)) = 1
}

# filled_gone: the rows of filled_past removed, as far as they came
filled_gone() {
	sed "s|\$|/cf:a|" rows | xargs -d "\n" rm -f &&
	rm -f "$MNT/t/c00000/cf:b" "$MNT/t/c16399/cf:b" &&
	{ xargs -d "\n" rmdir <rows 2>/dev/null; true; } &&
	test $(ls "$MNT/t/@" | grep -c "^c[0-9]") = 0
}

# At most 16384 rows remember their columns; past that a cell written
# drops its row's erow (its other cells' lookups ask the engine again).
test_expect_success 'past 16384 filled rows: the next ones are asked' '
	awk -v m="$MNT" "BEGIN { for (i = 0; i < 16400; i++)
		printf \"%s/t/c%05d\\n\", m, i }" >rows &&
	cellfs_undisturbed 0 filled_gone filled_past &&
	echo b >expect && cat "$MNT/t/c16399/cf:b" >out && test_cmp expect out &&
	ls "$MNT/t/c16398" >out && echo cf:a >expect && test_cmp expect out &&
	sed "s|\$|/cf:a|" rows | xargs -d "\n" rm &&
	rm "$MNT/t/c00000/cf:b" "$MNT/t/c16399/cf:b" &&
	xargs -d "\n" rmdir <rows
'

test_expect_success 'a row rm left stays when its other cells go another way' '
	mkdir "$MNT/t/r4" &&
	echo a >"$MNT/t/r4/cf:a" && echo b >"$MNT/t/r4/cf:b" &&
	rm "$MNT/t/r4/cf:a" &&
	echo "delete r4" >"$MNT/t/.batch" &&
	ls -A "$MNT/t/r4" >out && test_must_be_empty out &&
	test -d "$MNT/t/r4" &&
	rmdir "$MNT/t/r4" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/r4" >out && test_cmp expect out
'

# rm keeps the row of every cell it removes without asking the engine
# whether other cells are left, up to 65536 such rows; past that it asks.
test_expect_success 'past 65536 rows rm left, rm asks the engine: rows stay right' '
	awk "BEGIN { for (i = 0; i < 65600; i++)
		printf \"put r%06d cf:a v\\nput r%06d cf:b v\\n\", i, i }" \
		>batch &&
	cat batch >"$MNT/t/.batch" &&
	awk -v m="$MNT" "BEGIN { for (i = 0; i < 65600; i++)
		printf \"%s/t/r%06d/cf:a\\n\", m, i }" | xargs -d "\\n" rm &&
	echo "delete r065599" >"$MNT/t/.batch" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/r065599" >out && test_cmp expect out &&
	rm "$MNT/t/r065598/cf:b" && test -d "$MNT/t/r065598" &&
	rmdir "$MNT/t/r065598" &&
	echo "delete r000000" >"$MNT/t/.batch" && test -d "$MNT/t/r000000" &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/r000001" >out && test_cmp expect out &&
	rm "$MNT/t/r000001/cf:b" && rmdir "$MNT/t/r000001" &&
	rmdir "$MNT/t/r000000" &&
	echo "delete r065597" >"$MNT/t/.batch" &&
	errno_of stat "$MNT/t/r065597" >out && echo ENOENT >expect &&
	test_cmp expect out
'

# rm is acknowledged once the Delete is in the WAL; the empty rows it
# leaves live in the daemon's memory only (SPEC: kept in memory).
test_expect_success 'kill -9 after rm: the deletes stay, the empty rows go' '
	mkdir "$MNT/t/k1" "$MNT/t/k2" &&
	echo a >"$MNT/t/k1/cf:a" &&
	echo a >"$MNT/t/k2/cf:a" && echo b >"$MNT/t/k2/cf:b" &&
	rm "$MNT/t/k1/cf:a" "$MNT/t/k2/cf:a" &&
	test -d "$MNT/t/k1" &&
	cellfs_kill9 &&
	cellfs_mount &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/t/k1" >out && test_cmp expect out &&
	errno_of stat "$MNT/t/k2/cf:a" >out && test_cmp expect out &&
	ls "$MNT/t/k2" >out && echo cf:b >expect && test_cmp expect out &&
	echo ENOTEMPTY >expect &&
	errno_of rmdir "$MNT/t/k2" >out && test_cmp expect out &&
	rm "$MNT/t/k2/cf:b" && rmdir "$MNT/t/k2"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
