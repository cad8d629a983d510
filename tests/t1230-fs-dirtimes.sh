#!/bin/sh

test_description='cellfs: directory times: a table shows its creation,
.schema its last schema change, a region its creation (the table or the
split that made it), a row its newest cell version; exact through stat
and listings, kept across a remount; a catalog of schema version 1 is
upgraded and shows unknown (0) times'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"

# ms PATH: PATH's mtime in milliseconds since the epoch
ms() {
	stat -c %.3Y "$1" | tr -d . | sed "s/^0*//; s/^\$/0/"
}

# now: the clock in milliseconds
now() {
	date +%s%3N
}

# after MS: waits until the clock is past MS (a few ms at most)
after() {
	i=0
	while test "$(now)" -le "$1"; do
		i=$((i + 1))
		test $i -lt 1000 || return 1
	done
}

# listed DIR NAME: NAME's mtime in ms as `ls -l` of DIR shows it (the
# attributes readdirplus brings)
listed() {
	ls -l --time-style=+%s.%3N "$1" |
		awk -v n="$2" '$NF == n { v = $(NF-1); sub(/\./, "", v)
			sub(/^0+/, "", v); print v == "" ? 0 : v }'
}

test_expect_success 'mount; a table shows its creation time' '
	cellfs_mount &&
	t0=$(now) && mkdir "$T" && t1=$(now) &&
	made=$(ms "$T") &&
	test $made -ge $t0 && test $made -le $t1 &&
	echo $made >made
'

test_expect_success '.schema and the first region: the same time' '
	made=$(cat made) &&
	test $(ms "$T/.schema") = $made &&
	test $(ms "$T/@") = $made &&
	test "$(listed "$MNT" t)" = $made &&
	test "$(listed "$T" @)" = $made
'

test_expect_success 'a schema change: .schema shows it, the table keeps its creation' '
	made=$(cat made) && after $made &&
	t0=$(now) && printf "cf VERSIONS=3\n" >"$T/.schema" && t1=$(now) &&
	changed=$(ms "$T/.schema") &&
	test $changed -ge $t0 && test $changed -le $t1 &&
	test $changed -gt $made &&
	test $(ms "$T") = $made &&
	echo $changed >changed
'

test_expect_success 'a staged schema renamed onto .schema keeps its mtime (rsync)' '
	printf "cf VERSIONS=3\n" >"$T/.schema.tmp" &&
	touch -d @1500000000.250 "$T/.schema.tmp" &&
	mv "$T/.schema.tmp" "$T/.schema" &&
	test $(ms "$T/.schema") = 1500000000250 &&
	cut -d" " -f1,2 "$T/.schema" >out &&
	echo "cf VERSIONS=3" >expect && test_cmp expect out
'

test_expect_success 'a row shows its newest cell version' '
	mkdir "$T/r" &&
	echo a >"$T/r/cf:a@1600000000123" &&
	echo b >"$T/r/cf:b@1600000000456" &&
	test $(ms "$T/r") = 1600000000456 &&
	test $(ms "$T/@/r") = 1600000000456 &&
	test "$(listed "$T/@" r)" = 1600000000456
'

test_expect_success 'a newer cell moves it at once, its delete moves it back' '
	echo c >"$T/r/cf:c@1700000000789" &&
	test $(ms "$T/r") = 1700000000789 &&
	test "$(listed "$T/@" r)" = 1700000000789 &&
	rm "$T/r/cf:c" &&
	test $(ms "$T/r") = 1600000000456 &&
	echo old >"$T/r/cf:a@1000" &&
	test $(ms "$T/r") = 1600000000456
'

test_expect_success 'a cell written now: the row shows its version' '
	t0=$(now) && echo x >"$T/r/cf:x" && t1=$(now) &&
	v=$(ms "$T/r/cf:x") &&
	test $v -ge $t0 && test $v -le $t1 &&
	test $(ms "$T/r") = $v &&
	rm "$T/r/cf:x"
'

test_expect_success 'an empty row (mkdir) has no cell and no time' '
	mkdir "$T/empty" &&
	test $(ms "$T/empty") = 0 &&
	echo e >"$T/empty/cf:e@1600000000999" &&
	test $(ms "$T/empty") = 1600000000999 &&
	rm "$T/empty/cf:e" && rmdir "$T/empty"
'

test_expect_success 'a split: both regions show the time of the split' '
	made=$(cat made) &&
	mkdir "$T/z" && echo z >"$T/z/cf:a" &&
	t0=$(now) && mkdir "$T/@m" && t1=$(now) &&
	split=$(ms "$T/@m") &&
	test $split -ge $t0 && test $split -le $t1 &&
	test $(ms "$T/@") = $split &&
	test "$(listed "$T" @)" = $split &&
	test "$(listed "$T" @m)" = $split &&
	test $(ms "$T") = $made &&
	echo $split >split
'

test_expect_success 'times are kept across a remount' '
	cellfs_umount && cellfs_mount &&
	test $(ms "$T") = $(cat made) &&
	test $(ms "$T/.schema") = 1500000000250 &&
	test $(ms "$T/@") = $(cat split) &&
	test $(ms "$T/@m") = $(cat split) &&
	test $(ms "$T/r") = 1600000000456 &&
	test "$(listed "$T/@m" r)" = 1600000000456
'

command -v sqlite3 >/dev/null && test_set_prereq SQLITE3

test_expect_success SQLITE3 'a catalog of schema version 1 is upgraded; its times unknown (0)' '
	cellfs_umount &&
	sqlite3 "$DATA/catalog.db" "ALTER TABLE tables DROP COLUMN created_ms;
		ALTER TABLE tables DROP COLUMN schema_ms;
		ALTER TABLE regions DROP COLUMN created_ms;
		DROP TABLE access;
		PRAGMA user_version = 1;" &&
	cellfs_mount &&
	grep "upgraded from schema version 1 to 2" "$MNT/.log" &&
	test $(ms "$T") = 0 && test $(ms "$T/.schema") = 0 &&
	test $(ms "$T/@m") = 0 &&
	test $(ms "$T/r") = 1600000000456 &&
	echo a >expect && test_cmp expect "$T/r/cf:a" &&
	test "$(sqlite3 "$DATA/catalog.db" "PRAGMA user_version")" = 2
'

test_expect_success SQLITE3 'after the upgrade, a table made and changed gets its times' '
	t0=$(now) && mkdir "$MNT/u" && t1=$(now) &&
	made=$(ms "$MNT/u") &&
	test $made -ge $t0 && test $made -le $t1 &&
	test $(ms "$MNT/u/@") = $made &&
	printf "cf VERSIONS=1\n" >"$T/.schema" &&
	test $(ms "$T/.schema") -ge $t0
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
