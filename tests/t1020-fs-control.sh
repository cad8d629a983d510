#!/bin/sh

test_description='cellfs: .schema, .ctl, .regions, .stats, .log and .batch'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T="$MNT/t"

test_expect_success 'mount and make a table' '
	cellfs_mount && mkdir "$T"
'

test_expect_success '.schema spells every setting out' '
	echo "cf VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER KEEP_DELETED_CELLS=FALSE COMPRESSION=SNAPPY BLOOMFILTER=ROW BLOCKSIZE=65536 IN_MEMORY=FALSE ENCODING=NONE" >expect &&
	test_cmp expect "$T/.schema"
'

test_expect_success 'a bad schema line is EINVAL and changes nothing' '
	echo EINVAL >expect &&
	errno_of write "$T/.schema" "cf VERSIONS=2
other NOSUCH=1
" >out && test_cmp expect out &&
	cut -d" " -f1,2 "$T/.schema" >out &&
	echo "cf VERSIONS=1" >expect && test_cmp expect out &&
	grep "write .schema" "$MNT/.log" >/dev/null
'

test_expect_success '.batch applies put and delete lines' '
	printf "put r1 cf:a 1\nput r2 cf:b%%20x@100 two%%20words\nput r3 cf:c 3\n" \
		>"$T/.batch" &&
	echo "delete r3" >"$T/.batch" &&
	ls "$T/@" >out && printf "r1\nr2\n" >expect && test_cmp expect out &&
	printf "two words" >expect && test_cmp expect "$T/r2/cf:b%20x@100"
'

test_expect_success 'a .batch write with a bad line applies none of its lines' '
	echo EINVAL >expect &&
	errno_of write "$T/.batch" "put r9 cf:a 9
bogus line
" >out && test_cmp expect out &&
	errno_of stat "$T/r9" >out && echo ENOENT >expect &&
	test_cmp expect out &&
	grep "line 2" "$MNT/.log" >/dev/null &&
	: a family the table lacks is ENOENT, as for a cell made in it &&
	echo ENOENT >expect &&
	errno_of write "$T/.batch" "put r9 nofam:a 9" >out &&
	test_cmp expect out
'

test_expect_success 'reading .batch dumps put lines; cat into another table copies' '
	grep "^put r2 cf:b%20x@100 two%20words$" "$T/.batch" &&
	mkdir "$MNT/copy" && cat "$T/.batch" >"$MNT/copy/.batch" &&
	test_cmp "$T/.batch" "$MNT/copy/.batch"
'

test_expect_success '.ctl: flush, compact, major_compact; a bad word is EINVAL' '
	echo flush >"$T/.ctl" && echo compact >"$T/.ctl" &&
	echo major_compact >"$T/.ctl" &&
	echo flush >"$MNT/.ctl" && echo sync >"$MNT/.ctl" &&
	echo compact >"$MNT/.ctl" &&
	echo EINVAL >expect &&
	errno_of write "$T/.ctl" "explode" >out && test_cmp expect out &&
	errno_of write "$MNT/.ctl" "drop" >out && test_cmp expect out
'

test_expect_success '.regions and split: mkdir @KEY and split KEY' '
	echo "@ '"''"' '"''"' 1" >expect &&
	cut -d" " -f1-4 "$T/.regions" >out && test_cmp expect out &&
	mkdir "$T/@r2" &&
	echo "split r3" >"$T/.ctl" &&
	cut -d" " -f1-3 "$T/.regions" >out &&
	cat >expect <<-\EOF &&
	@ '"''"' r2
	@r2 r2 r3
	@r3 r3 '"''"'
	EOF
	test_cmp expect out &&
	ls "$T" >out && printf "@\n@r2\n@r3\n" >expect && test_cmp expect out &&
	ls "$T/@" >out && echo r1 >expect && test_cmp expect out &&
	ls "$T/@r2" >out && echo r2 >expect && test_cmp expect out &&
	printf 1 >expect && test_cmp expect "$T/@r2/r1/cf:a"
'

test_expect_success '.prefix/P lists the rows beginning with P' '
	echo "put s1 cf:a x" >"$T/.batch" &&
	ls "$T/.prefix/r" >out && printf "r1\nr2\n" >expect &&
	test_cmp expect out
'

test_expect_success '.stats in the Prometheus text format' '
	grep "^# TYPE cellfs_puts_total counter$" "$MNT/.stats" &&
	grep "^cellfs_puts_total [1-9][0-9]*$" "$MNT/.stats" &&
	grep "^cellfs_regions{table=\"t\"} 3$" "$T/.stats"
'

test_expect_success '.stats: what only the daemon counts is not in a table'"'"'s' '
	for m in cache_hits cache_misses bloom_skips files_skipped \
		 multi_file_reads wal_syncs wal_bytes; do
		grep "^cellfs_${m}_total [0-9]*$" "$MNT/.stats" &&
		! grep "cellfs_${m}_total" "$T/.stats" || return 1
	done &&
	grep "^cellfs_puts_total{table=\"t\"} [1-9][0-9]*$" "$T/.stats"
'

test_expect_success 'staging a schema, renamed onto .schema' '
	printf "cf\nextra VERSIONS=2\n" >"$T/.schema.tmp" &&
	mv "$T/.schema.tmp" "$T/.schema" &&
	grep "^extra VERSIONS=2 " "$T/.schema"
'

test_expect_success 'drop through .ctl' '
	echo drop >"$MNT/copy/.ctl" &&
	ls "$MNT" >out && printf "t\ntsd\n" >expect && test_cmp expect out
'

test_expect_success 'a table made again after a drop has none of the old empty rows' '
	mkdir "$MNT/again" && mkdir "$MNT/again/kept" "$MNT/again/gone" &&
	echo v >"$MNT/again/kept/cf:a" &&
	echo drop >"$MNT/again/.ctl" &&
	mkdir "$MNT/again" &&
	errno_of stat "$MNT/again/gone" >out && echo ENOENT >expect &&
	test_cmp expect out &&
	errno_of stat "$MNT/again/kept" >out && test_cmp expect out &&
	mkdir "$MNT/again/gone" && rmdir "$MNT/again/gone" &&
	rmdir "$MNT/again" &&
	mkdir "$MNT/again" && mkdir "$MNT/again/r" && rmdir "$MNT/again" &&
	mkdir "$MNT/again" &&
	errno_of stat "$MNT/again/r" >out && test_cmp expect out &&
	rmdir "$MNT/again"
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
