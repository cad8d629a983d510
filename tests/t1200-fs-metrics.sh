#!/bin/sh

test_description='cellfs: .stats is clean Prometheus text (HELP and TYPE for
every metric, _total counters; promtool check metrics when installed) and
contrib/cellfs-textfile.sh publishes it for node_exporter'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"
TOP=${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}

# check_text FILE: every sample line's metric has one HELP and one TYPE
# line before it, a counter's name ends in _total, names are valid;
# prints each problem, fails when there is one.
check_text() {
	awk '
	/^# HELP / { if (help[$3]++) { print "second HELP " $3; bad = 1 }; next }
	/^# TYPE / {
		if (type[$3]) { print "second TYPE " $3; bad = 1 }
		type[$3] = $4
		if ($4 == "counter" && $3 !~ /_total$/) {
			print "counter without _total: " $3; bad = 1
		}
		next
	}
	/^#/ { print "stray comment: " $0; bad = 1; next }
	{
		name = $1; sub(/\{.*/, "", name)
		if (name !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) {
			print "bad name: " name; bad = 1
		}
		if (!help[name]) { print "no HELP: " name; bad = 1 }
		if (!type[name]) { print "no TYPE: " name; bad = 1 }
		if ($NF !~ /^[0-9]+$/) { print "bad value: " $0; bad = 1 }
		n++
	}
	END { if (!n) { print "no samples"; bad = 1 }; exit bad }' "$1"
}

test_expect_success 'mount, write cells and points' '
	cellfs_mount && mkdir "$T" && mkdir "$T/r1" &&
	echo v >"$T/r1/cf:a" && cat "$T/r1/cf:a" >/dev/null &&
	echo "sys.load 1356998400 0.75 host=web01" >>"$MNT/tsd/put" &&
	cp "$MNT/.stats" root.prom && cp "$T/.stats" table.prom
'

test_expect_success 'the checker finds what is wrong' '
	printf "# TYPE x_total counter\nx_total 1\n" >bad1.prom &&
	test_must_fail check_text bad1.prom >out &&
	echo "no HELP: x_total" >expect && test_cmp expect out &&
	printf "# HELP x X.\n# TYPE x counter\nx 1\n" >bad2.prom &&
	test_must_fail check_text bad2.prom >out &&
	echo "counter without _total: x" >expect && test_cmp expect out
'

test_expect_success 'MNT/.stats: HELP and TYPE for every metric' '
	check_text root.prom &&
	grep "^cellfs_puts_total [1-9][0-9]*$" root.prom &&
	grep "^cellfs_tsd_points_total 1$" root.prom &&
	grep "^# HELP cellfs_disk_bytes " root.prom &&
	grep "^# TYPE cellfs_fuse_lookups_total counter$" root.prom
'

test_expect_success 'TABLE/.stats: HELP and TYPE for every metric' '
	check_text table.prom &&
	grep "^cellfs_puts_total{table=\"t\"} 1$" table.prom
'

command -v promtool >/dev/null && test_set_prereq PROMTOOL

test_expect_success PROMTOOL 'promtool check metrics finds no problem' '
	promtool check metrics <root.prom >out 2>&1 &&
	test_must_be_empty out &&
	promtool check metrics <table.prom >out 2>&1 &&
	test_must_be_empty out
'

test_expect_success 'cellfs-textfile.sh writes MNT/.stats to DIR/cellfs.prom' '
	mkdir textfile &&
	"$TOP/contrib/cellfs-textfile.sh" -1 "$MNT" textfile &&
	check_text textfile/cellfs.prom &&
	grep "^cellfs_tsd_points_total 1$" textfile/cellfs.prom &&
	ls -a textfile >out && printf ".\n..\ncellfs.prom\n" >expect &&
	test_cmp expect out
'

test_expect_success 'cellfs-textfile.sh: no mount, no file, exit 1' '
	mkdir empty textfile2 &&
	test_expect_code 1 "$TOP/contrib/cellfs-textfile.sh" -1 empty textfile2 &&
	ls -a textfile2 >out && printf ".\n..\n" >expect && test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
