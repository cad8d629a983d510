#!/bin/sh

test_description='cellfs: ls of a row of a million columns and of .versions of a cell of a million versions stream page by page: complete, in order, and the daemon'"'"'s peak memory (VmHWM) rises by a page, not the row'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# CELLFS_HUGE_N: columns and versions (default a million; a smaller
# count for slow builds)
N=${CELLFS_HUGE_N:-1000000}
# CELLFS_HUGE_HWM_MB: the rise allowed (sanitizers' allocators add their
# own: about 31 MiB at 200,000 under ASan)
HWM_MB=${CELLFS_HUGE_HWM_MB:-32}
T="$MNT/t"
# Under ASan, freed memory waits in a quarantine (256 MiB by default)
# before reuse, so a listing's churn of pages would show as growth.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
export ASAN_OPTIONS

# hwm_kb: the daemon's peak resident memory (kB)
hwm_kb() {
	sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p" /proc/$CELLFS_PID/status
}

test_expect_success "a row of $N columns and a cell of $N versions, through .batch" '
	cellfs_mount block_cache=8M &&
	mkdir "$T" &&
	echo "cf VERSIONS=2147483647" >"$T/.schema" &&
	awk -v n=$N "BEGIN { for (i = 1; i <= n; i++)
		printf \"put wide cf:q%08d x\n\", i }" >wide.batch &&
	cat wide.batch >"$T/.batch" &&
	awk -v n=$N "BEGIN { for (i = 1; i <= n; i++)
		printf \"put deep cf:c@%d v\n\", i }" >deep.batch &&
	cat deep.batch >"$T/.batch" &&
	rm wide.batch deep.batch &&
	echo major_compact >"$T/.ctl" &&
	cellfs_umount &&
	cellfs_mount block_cache=8M &&
	awk -v n=$N "BEGIN { for (i = 1; i <= n; i++)
		printf \"cf:q%08d\n\", i }" >wide.expect &&
	awk -v n=$N "BEGIN { for (i = n; i >= 1; i--)
		printf \"cf:c@%d\n\", i }" >deep.expect &&
	hwm_kb >base &&
	test -s base
'

test_expect_success 'ls ROW/ lists every column once, in key order' '
	ls -U "$T/wide" >wide.out &&
	test $(wc -l <wide.out) = $N &&
	cksum <wide.expect >expect &&
	cksum <wide.out >actual &&
	test_cmp expect actual &&
	hwm_kb >after-wide
'

test_expect_success 'ls ROW/.versions/ lists every version once, newest first' '
	ls -U "$T/deep/.versions" >deep.out &&
	test $(wc -l <deep.out) = $N &&
	cksum <deep.expect >expect &&
	cksum <deep.out >actual &&
	test_cmp expect actual &&
	hwm_kb >after-deep
'

test_expect_success 'ls -l ROW/ (readdirplus, the attributes with the names)' '
	ls -l "$T/wide" | sed 1d >wide-l.out &&
	test $(wc -l <wide-l.out) = $N &&
	sed -n "\$s/.* 1 .* \(cf:q[0-9]*\)\$/\1/p" wide-l.out >last &&
	printf "cf:q%08d\n" $N >expect &&
	test_cmp expect last
'

# A million entries held whole were about 280 MiB (the row's keys read
# by one Get, for the row's stat and again for its listing, and the
# listing's entries).  Paged, measured on a fresh mount after a major
# compaction (no flush nor compaction runs meanwhile: a compaction
# gathers a row whole, and reads over several files ask for one) with a
# small block cache: the peak rose by 15 MiB over the row listing (8 of
# them the block cache) and by 21 MiB over both.
test_expect_success 'the peak rose by a page or so, not by the row' '
	echo "VmHWM $(cat base) kB after the writes, $(cat after-wide) kB after ls of the row, $(cat after-deep) kB after ls of .versions" &&
	test $(( $(cat after-deep) - $(cat base) )) -lt $((HWM_MB * 1024))
'

test_expect_success 'the listing of a row written meanwhile has no name twice' '
	( for i in $(seq 20); do
		echo x >"$T/wide/cf:q0$((i * 40000))x" || exit 1
	  done ) &
	w=$! &&
	ls -U "$T/wide" >during.out &&
	wait $w &&
	sort during.out | uniq -d >dups &&
	test_must_be_empty dups &&
	grep -v x\$ during.out >orig &&
	test_cmp wide.expect orig &&
	test $(ls -U "$T/wide" | wc -l) = $((N + 20))
'

test_expect_success 'a small row lists as before' '
	mkdir "$T/small" &&
	echo 1 >"$T/small/cf:b" &&
	echo 2 >"$T/small/cf:a" &&
	echo 3 >"$T/small/cf:a@5" &&
	ls -U "$T/small" >out &&
	printf "cf:a\ncf:b\n" >expect &&
	test_cmp expect out &&
	ls -U "$T/small/.versions" | sed "s/@[0-9]\{13\}$/@NOW/" >out &&
	printf "cf:a@NOW\ncf:a@5\ncf:b@NOW\n" >expect &&
	test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
