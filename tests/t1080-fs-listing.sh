#!/bin/sh

test_description='cellfs: streaming listings, readdirplus, kernel caches kept true, long names, fsync, staging bound'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# stat_of NAME: the value of an unlabelled counter of MNT/.stats
stat_of() {
	sed -n "s/^cellfs_$1 //p" "$MNT/.stats"
}

rss_hwm() {
	sed -n 's/^VmHWM: *\([0-9]*\) kB/\1/p' /proc/$CELLFS_PID/status
}

# The lookup counts below hold while the kernel keeps the names it was
# given: an hour (cache_timeout), not the default 10 s, which a sanitizer
# build on a loaded machine can spend between a listing and its stats.
test_expect_success 'mount with a small cache' '
	cellfs_mount block_cache=8M,max_value=100M,cache_timeout=3600
'

test_expect_success 'a million rows through .batch in one cat' '
	mkdir "$MNT/big" &&
	awk "BEGIN { for (i = 0; i < 1000000; i++)
		printf \"put r%07d cf:q v%d\\n\", i, i }" >rows &&
	test $(wc -c <rows) -gt 20000000 &&
	cat rows >"$MNT/big/.batch" &&
	cat "$MNT/big/r0999999/cf:q" >out &&
	printf v999999 >expect && test_cmp expect out
'

test_expect_success 'listing a million-row region is one scan in bounded memory' '
	scans=$(stat_of scans_total) &&
	hwm=$(rss_hwm) &&
	ls -U "$MNT/big/@" >out &&
	test $(wc -l <out) -eq 1000000 &&
	head -1 out >first && echo r0000000 >expect && test_cmp expect first &&
	tail -1 out >last && echo r0999999 >expect && test_cmp expect last &&
	test $(stat_of scans_total) -eq $((scans + 1)) &&
	grown=$(( $(rss_hwm) - hwm )) &&
	echo "peak RSS grew by $grown kB" &&
	test $grown -lt 32768
'

# With readdirplus=auto the kernel decides page by page whether to ask
# for attributes (it begins after it sees the first stats), so a few
# pages' entries may be looked up one by one: 0 to 170 seen.
# remount OPTS: a fresh mount, the kernel holding none of its names
remount() {
	cellfs_umount && cellfs_mount "$1"
}
remount_small() {
	remount block_cache=8M,max_value=100M,cache_timeout=3600
}

# ls_plus: ls -l of the million rows, which asks the daemon for under
# 1000 of them one by one (each row's attributes came with the listing)
ls_plus() {
	lookups=$(stat_of fuse_lookups_total) &&
	plus=$(stat_of fuse_readdirplus_entries_total) &&
	ls -l "$MNT/big/@" >out &&
	test $(grep -c "^d" out) -eq 1000000 &&
	more=$(( $(stat_of fuse_lookups_total) - lookups )) &&
	plus=$(( $(stat_of fuse_readdirplus_entries_total) - plus )) &&
	echo "lookups: $more, entries with attributes: $plus" &&
	test $more -lt 1000 &&
	test $((more + plus)) -ge 1000000
}

test_expect_success 'ls -l of a million rows takes attributes from readdirplus' '
	cellfs_undisturbed 10 remount_small ls_plus
'

test_expect_success 'a row listing brings sizes and versions' '
	mkdir "$MNT/c" && mkdir "$MNT/c/r" &&
	printf abc >"$MNT/c/r/cf:q" && touch -d @1000 "$MNT/c/r/cf:q" &&
	printf 12345 >"$MNT/c/r/cf:p" &&
	lookups=$(stat_of fuse_lookups_total) &&
	ls -l --time-style=+%s "$MNT/c/r" >out &&
	test $(stat_of fuse_lookups_total) -le $((lookups + 1)) &&
	awk "{ print \$5, \$6, \$7 }" out | sed 1d >got &&
	printf "5 %s cf:p\n3 1000 cf:q\n" \
		$(stat -c %Y "$MNT/c/r/cf:p") >expect &&
	test_cmp expect got
'

test_expect_success 'cached attributes follow writes through other names' '
	ls -l "$MNT/c/r" >/dev/null &&
	echo "put r cf:q wxyz12" >"$MNT/c/.batch" &&
	stat -c %s "$MNT/c/r/cf:q" >out && echo 6 >expect && test_cmp expect out &&
	echo xx >"$MNT/c/r/cf:q@5000" &&
	stat -c %s "$MNT/c/r/cf:q" >out && echo 6 >expect && test_cmp expect out
'

test_expect_success 'cached names follow deletes through other names' '
	echo "cf VERSIONS=2" >"$MNT/c/.schema" &&
	echo xx >"$MNT/c/r/cf:q@3000000" &&
	ls -l "$MNT/c/r/.versions" >/dev/null &&
	stat "$MNT/c/r/cf:q@3000000" >/dev/null &&
	echo "put r cf:q@4000000 yy" >"$MNT/c/.batch" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/c/r/cf:q@3000000" >out && test_cmp expect out &&
	mkdir "$MNT/c/s" && echo 1 >"$MNT/c/s/cf:only@7" &&
	ls -l "$MNT/c/s" >/dev/null &&
	rm "$MNT/c/s/cf:only@7" &&
	errno_of stat "$MNT/c/s/cf:only" >out && test_cmp expect out &&
	ls -l "$MNT/c" "$MNT/c/@" >/dev/null &&
	echo "delete r" >"$MNT/c/.batch" &&
	errno_of stat "$MNT/c/r" >out && test_cmp expect out &&
	errno_of stat "$MNT/c/r/cf:p" >out && test_cmp expect out &&
	mkdir "$MNT/c/r" && echo again >"$MNT/c/r/cf:p" &&
	cat "$MNT/c/r/cf:p" >out && echo again >expect && test_cmp expect out
'

test_expect_success 'a dropped family and a dropped table leave no cached names' '
	printf "cf\nother\n" >"$MNT/c/.schema" &&
	echo "put r other:x 1" >"$MNT/c/.batch" &&
	stat "$MNT/c/r/other:x" >/dev/null &&
	echo cf >"$MNT/c/.schema" &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/c/r/other:x" >out && test_cmp expect out &&
	mkdir "$MNT/d" && mkdir "$MNT/d/r" && echo 1 >"$MNT/d/r/cf:q" &&
	ls -l "$MNT/d/r" >/dev/null &&
	echo drop >"$MNT/d/.ctl" &&
	errno_of stat "$MNT/d/r/cf:q" >out && test_cmp expect out &&
	errno_of stat "$MNT/d" >out && test_cmp expect out &&
	mkdir "$MNT/d" && ls -A "$MNT/d" >out &&
	printf ".schema\n@\n" >expect && test_cmp expect out
'

long=$(printf "%0256d" 0)
test_expect_success 'a name over 255 bytes is ENAMETOOLONG, logged and counted' '
	before=$(stat_of names_too_long_total) &&
	echo ENAMETOOLONG >expect &&
	errno_of mkdir "$MNT/c/$long" >out && test_cmp expect out &&
	errno_of write "$MNT/c/r/cf:$long" v >out && test_cmp expect out &&
	test $(stat_of names_too_long_total) -ge $((before + 2)) &&
	grep "longer than 255 bytes" "$MNT/.log" >/dev/null &&
	short=$(printf "%0255d" 0) &&
	mkdir "$MNT/c/$short" && echo ok >"$MNT/c/$short/cf:q" &&
	cat "$MNT/c/$short/cf:q" >out && echo ok >expect && test_cmp expect out
'

test_expect_success 'a row whose name is too long lives on in .batch, counted in .stats' '
	key=$(printf "%0300d" 7) &&
	echo "put $key cf:q hidden" >"$MNT/c/.batch" &&
	before=$(stat_of names_unlisted_total) &&
	ls "$MNT/c/@" >out &&
	! grep -x "$key" out && grep -x "$(printf "%0255d" 0)" out &&
	test $(stat_of names_unlisted_total) -gt $before &&
	grep "^put $key cf:q@[0-9]* hidden\$" "$MNT/c/.batch"
'

test_expect_success 'fsync of a cell makes the WAL durable' '
	syncs=$(stat_of wal_syncs_total) &&
	python3 -c "
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b\"durable\")
os.fsync(fd)
os.close(fd)
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.close(fd)" "$MNT/c/r/cf:f" &&
	test $(stat_of wal_syncs_total) -gt $syncs &&
	cat "$MNT/c/r/cf:f" >out && printf durable >expect && test_cmp expect out
'

test_expect_success 'staging memory is bounded: ENOSPC, and nothing half-written' '
	cat >stage.py <<-\EOF &&
	import errno, os, sys
	def stage(path, mib):
	    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
	    block = b"x" * (1 << 20)
	    try:
	        for _ in range(mib):
	            os.write(fd, block)
	    except OSError as e:
	        os.close(fd)
	        return errno.errorcode[e.errno]
	    try:
	        os.close(fd)
	    except OSError as e:
	        return errno.errorcode[e.errno]
	    return "OK"
	for a in sys.argv[1:]:
	    path, mib = a.split("=")
	    print(stage(path, int(mib)))
	EOF
	python3 stage.py "$MNT/c/r/.s1=100" "$MNT/c/r/.s2=100" \
		"$MNT/c/r/.s3=100" >out &&
	printf "OK\nOK\nENOSPC\n" >expect && test_cmp expect out &&
	grep "staged files over their memory bound" "$MNT/.log" >/dev/null &&
	test $(stat -c %s "$MNT/c/r/.s1") -eq 104857600 &&
	test $(stat -c %s "$MNT/c/r/.s3") -eq 0 &&
	rm "$MNT/c/r/.s1" "$MNT/c/r/.s3" &&
	python3 stage.py "$MNT/c/r/.s3=100" >out &&
	echo OK >expect && test_cmp expect out &&
	mv "$MNT/c/r/.s3" "$MNT/c/r/cf:big" &&
	test $(stat -c %s "$MNT/c/r/cf:big") -eq 104857600 &&
	rm "$MNT/c/r/.s2"
'

# find_plus: find stats the 10000 cells of f and their rows asking the
# daemon for under 100 of them one by one
find_plus() {
	lookups=$(stat_of fuse_lookups_total) &&
	find "$MNT/f/@" -type f -size -10c >out &&
	test $(wc -l <out) -eq 10000 &&
	more=$(( $(stat_of fuse_lookups_total) - lookups )) &&
	echo "lookups: $more" &&
	test $more -lt 100
}
remount_plus() {
	remount readdirplus=always,cache_timeout=3600
}

test_expect_success 'with readdirplus=always, find stats 10000 cells and rows with no lookup' '
	cellfs_umount && cellfs_mount readdirplus=always,cache_timeout=3600 &&
	mkdir "$MNT/f" &&
	awk "BEGIN { for (i = 0; i < 10000; i++)
		printf \"put r%05d cf:q %d\\n\", i, i }" >"$MNT/f/.batch" &&
	cellfs_undisturbed 10 remount_plus find_plus
'

# The kernel's inodes for those rows and cells are the daemon's nodes
# (cellfs_fuse_inodes); when the kernel drops them (drop_caches, root
# only) it sends FORGETs, and the daemon frees the nodes (waited for up
# to 60 s, asking for the drop again every 5 s: an ASan daemon on a
# loaded machine takes its time over 20,000).
if test -w /proc/sys/vm/drop_caches; then
	test_set_prereq DROP_CACHES
fi
# nodes_held: f's cells and rows found again (what the kernel may have
# forgotten since comes back), the daemon holding a node for each
nodes_held() {
	find "$MNT/f/@" -type f -size -10c >out &&
	test $(wc -l <out) -eq 10000 &&
	held=$(stat_of fuse_inodes) &&
	echo "nodes held: $held" &&
	test $held -ge 20000
}
test_expect_success DROP_CACHES 'the kernel forgetting its inodes frees the daemon'"'"'s nodes' '
	cellfs_undisturbed 0 : nodes_held &&
	sync && echo 2 >/proc/sys/vm/drop_caches &&
	i=0 &&
	while test $(stat_of fuse_inodes) -gt $((held / 10)) &&
	      test $i -lt 600; do
		i=$((i + 1)); sleep 0.1
		# a drop skips what was in use at that moment (the reads
		# of this test, other work on a busy machine): ask again
		test $((i % 50)) -ne 0 || echo 2 >/proc/sys/vm/drop_caches
	done &&
	left=$(stat_of fuse_inodes) &&
	echo "nodes left: $left" &&
	test $left -le $((held / 10)) &&
	find "$MNT/f/@" -type f -size -10c >again &&
	test_cmp out again &&
	printf 9999 >expect && test_cmp expect "$MNT/f/r09999/cf:q" &&
	test $(stat_of fuse_inodes) -ge 20000
'

# asked_by CMD...: the lookups and getattrs the daemon served while CMD
# ran, less those of reading .stats itself (counted once without CMD)
asked_by() {
	l0=$(stat_of fuse_lookups_total) && g0=$(stat_of fuse_getattrs_total) &&
	l1=$(stat_of fuse_lookups_total) && g1=$(stat_of fuse_getattrs_total) &&
	"$@" >/dev/null &&
	l2=$(stat_of fuse_lookups_total) && g2=$(stat_of fuse_getattrs_total) &&
	echo "lookups $(( (l2 - l1) - (l1 - l0) )) getattrs $(( (g2 - g1) - (g1 - g0) ))"
}

test_expect_success 'cache_timeout=0: the kernel asks again at every path walk' '
	cellfs_umount && cellfs_mount cache_timeout=0 &&
	mkdir "$MNT/ct" "$MNT/ct/r" && echo v >"$MNT/ct/r/cf:q" &&
	stat "$MNT/ct/r/cf:q" >/dev/null &&
	asked_by stat "$MNT/ct/r/cf:q" >out &&
	cat out && read x lookups y getattrs <out &&
	test $lookups -ge 3
'

# walk_twice: a path walk, then another, which asks what expect says
walk_twice() {
	stat "$MNT/ct/r/cf:q" >/dev/null &&
	asked_by stat "$MNT/ct/r/cf:q" >out &&
	test_cmp expect out
}

test_expect_success 'cache_timeout=3600: a second path walk asks nothing' '
	cellfs_umount && cellfs_mount cache_timeout=3600 &&
	echo "lookups 0 getattrs 0" >expect &&
	cellfs_undisturbed 0 : walk_twice
'

test_expect_success 'a bad cache_timeout refuses the mount and says why' '
	cellfs_umount &&
	for v in -1 abc 10s 5K 86401 ""; do
		test_must_fail "$CELLFS" -f -o "cache_timeout=$v" "$DATA" "$MNT" \
			2>err &&
		echo "cellfs: bad value for cache_timeout: '"'"'$v'"'"' (seconds, 0 to 86400)" >expect &&
		test_cmp expect err &&
		! cellfs_is_mounted || return 1
	done
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
