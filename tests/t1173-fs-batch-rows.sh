#!/bin/sh

test_description='cellfs: a .batch write drops from the kernel the names and attributes of the rows it changes, not those of the table'"'"'s other rows (a write of more than 64 rows drops the table'"'"'s)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"

lookups() {
	sed -n "s/^cellfs_fuse_lookups_total //p" "$MNT/.stats"
}

# new_lookups CMD...: runs CMD and prints how many names it made the
# daemon look up (.stats, read by lookups, costs one of its own:
# measured and taken off)
new_lookups() {
	l0=$(lookups) &&
	l1=$(lookups) &&
	"$@" >/dev/null &&
	l2=$(lookups) &&
	echo $(((l2 - l1) - (l1 - l0)))
}

# dropped CELL: polls (up to 300 s) until a stat of CELL makes the
# daemon look it up again: the kernel dropped its name (the daemon's
# invalidations are sent by a thread of their own, in order)
dropped() {
	i=0
	until n=$(new_lookups stat "$1") && test $n -gt 0; do
		i=$((i + 1))
		test $i -lt 3000 || return 1
		sleep 0.1
	done
}

# stat_all ROW: stats every cell of ROW (names listed first)
stat_all() {
	for c in $(ls "$T/$1"); do stat "$T/$1/$c" >/dev/null || return 1; done
}

test_expect_success 'mount (names kept an hour), rows r and s listed' '
	cellfs_mount cache_timeout=3600 &&
	mkdir "$T" &&
	awk "BEGIN { for (i = 1; i <= 50; i++)
		printf \"put r cf:q%02d x\\n\", i }" >"$T/.batch" &&
	echo "put s cf:a y" >"$T/.batch" &&
	ls -l "$T/r" "$T/s" >/dev/null &&
	stat_all r && stat_all s
'

# r_kept: with the names of r and s held, a .batch of another row and
# one of s; once s's names are gone (the daemon's invalidations go in
# order), a stat of every cell of r asks the daemon nothing
r_kept() {
	stat_all r && stat_all s &&
	echo "put other cf:x 1" >"$T/.batch" &&
	echo "delete s cf:none" >"$T/.batch" &&
	dropped "$T/s/cf:a" &&
	n=$(new_lookups stat_all r) &&
	test $n = 0
}

# (s's row and cell are the inodes the check itself has the kernel forget)
test_expect_success 'a .batch of other rows keeps the names of r' '
	cellfs_undisturbed 4 : r_kept
'

test_expect_success 'a .batch of r drops its names: stat asks the daemon' '
	printf "put r cf:q01 z\nput other cf:y 2\n" >"$T/.batch" &&
	dropped "$T/r/cf:q02" &&
	printf z >expect &&
	test_cmp expect "$T/r/cf:q01"
'

test_expect_success 'a .batch of more than 64 rows drops every row of the table' '
	stat_all r &&
	awk "BEGIN { for (i = 1; i <= 65; i++)
		printf \"put m%02d cf:a 1\\n\", i }" >"$T/.batch" &&
	dropped "$T/r/cf:q03"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
