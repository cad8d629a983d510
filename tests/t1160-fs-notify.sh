#!/bin/sh

test_description='cellfs: cache invalidations name live directories while the kernel forgets nodes (no "fuse: writing device: Not a directory")'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# The kernel forgets inodes on drop_caches; only root may ask for it.
test -w /proc/sys/vm/drop_caches && test_set_prereq DROP_CACHES

ERR="$SHARNESS_TRASH_DIRECTORY/cellfs.err"
STOP="$SHARNESS_TRASH_DIRECTORY/stop"

# stat_of NAME: the value of counter NAME in MNT/.stats
stat_of() {
	sed -n "s/^$1 //p" "$MNT/.stats"
}

test_expect_success 'mount, a table of 300 rows' '
	cellfs_mount flush_size=256K &&
	mkdir "$MNT/t" &&
	for r in $(seq 300); do
		echo "put r$r cf:a v$r" && echo "put r$r cf:b w$r" || return 1
	done >batch &&
	cat batch >"$MNT/t/.batch" &&
	test "$(ls "$MNT/t/@" | wc -l)" = 300 &&
	grep "^# HELP cellfs_fuse_notify_refused_total " "$MNT/.stats" &&
	test "$(stat_of cellfs_fuse_notify_refused_total)" = 0
'

# Every .batch write queues an entry invalidation of each cached row and
# cell; listings and reads make new nodes while drop_caches has the kernel
# forget the old ones, and flushes and splits run beside.  Before the
# parents of queued names were pinned, a freed row's address came back as
# a cell's inode and the kernel refused the invalidation with ENOTDIR
# (about 25 a second here).
test_expect_success DROP_CACHES 'batches, listings, reads, flushes, splits while the kernel forgets' '
	rm -f "$STOP" &&
	(while ! test -e "$STOP"; do ls -lR "$MNT/t" >/dev/null 2>&1; done) &
	p1=$! &&
	(while ! test -e "$STOP"; do
		find "$MNT/t" -type f -exec cat {} + >/dev/null 2>&1; done) &
	p2=$! &&
	(while ! test -e "$STOP"; do	# paced: the caches are shared
		echo 2 >/proc/sys/vm/drop_caches && sleep 0.02; done) &
	p3=$! &&
	i=0 &&
	while test $i -lt 60; do
		cat batch >"$MNT/t/.batch" &&
		echo flush >"$MNT/t/.ctl" &&
		if test $((i % 10)) = 5; then
			echo "split r$((i * 4 + 10))" >"$MNT/t/.ctl"
		fi &&
		i=$((i + 1)) || break
	done &&
	touch "$STOP" &&
	wait $p1 $p2 $p3 &&
	test $i = 60 &&
	test "$(ls "$MNT/t" | wc -l)" -gt 1 &&
	test "$(ls "$MNT/t"/@* | grep -c "^r")" = 300 &&
	test "$(cat "$MNT/t/r77/cf:a")" = v77
'

test_expect_success DROP_CACHES 'no notification was refused' '
	test "$(stat_of cellfs_fuse_notify_refused_total)" = 0 &&
	! grep "writing device" "$ERR"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
