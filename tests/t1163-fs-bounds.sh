#!/bin/sh

test_description='cellfs: files open for writing hold at most write_buffers bytes together: 50 writers of a cell near max_value get ENOSPC past it, and the daemon'"'"'s peak memory (VmHWM) shows it'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"
MiB=1048576

# hwm_kb: the daemon's peak resident memory (kB)
hwm_kb() {
	sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p" /proc/$CELLFS_PID/status
}

# stat_of NAME: the value of counter NAME in MNT/.stats
stat_of() {
	sed -n "s/^$1 //p" "$MNT/.stats"
}

# The writers wait for "go" whatever happens, so none outlives the test.
release_writers() {
	touch "$SHARNESS_TRASH_DIRECTORY/go" 2>/dev/null || :
}
final_cleanup="release_writers; $final_cleanup"
trap 'release_writers; cellfs_umount; die' EXIT

test_expect_success 'mount with max_value=4M, write_buffers=16M' '
	cellfs_mount max_value=4M,write_buffers=16M &&
	mkdir "$MNT/t" "$R" &&
	echo small >"$R/cf:big" &&
	test "$(stat_of cellfs_write_buffer_limit_bytes)" = $((16 * MiB)) &&
	test "$(stat_of cellfs_write_buffer_bytes)" = 0 &&
	hwm_kb >base &&
	test -s base
'

# Each writer writes 4 MiB and keeps its file open until all have
# written: without the bound the daemon would hold 50 x 4 MiB at once.
test_expect_success '50 writers of one cell near max_value at once' '
	mkdir st &&
	for w in $(seq 50); do
		(
			head -c $((4 * MiB)) /dev/zero | tr "\0" x >&3 2>/dev/null
			echo $? >st/$w.tmp && mv st/$w.tmp st/$w
			while ! test -e "$SHARNESS_TRASH_DIRECTORY/go"; do
				sleep 0.1
			done
		) 3>"$R/cf:big" &
	done &&
	{ cellfs_wait_files 50 "st/*[0-9]" || echo timeout >fail; } &&
	held=$(stat_of cellfs_write_buffer_bytes) &&
	hwm_kb >peak &&
	release_writers &&
	test ! -e fail &&
	test "$held" -le $((16 * MiB)) &&
	cat st/[0-9]* | sed -n "/^0$/p" | wc -l >ok &&
	test "$(cat ok)" -le 4 &&
	test "$(stat_of cellfs_write_buffer_refused_total)" -ge 46 &&
	grep -a "write cf:big: files open for writing hold write_buffers bytes: No space left on device" "$MNT/.log"
'

# 50 values are 200 MiB: +264 MiB without the bound.  With it: +17 MiB,
# +40 MiB under ASan, +85 MiB under TSan (its shadow of what is held).
test_expect_success 'the peak stayed within the bound (not 50 values)' '
	test -s peak &&
	echo "VmHWM $(cat base) kB before, $(cat peak) kB with 50 writers" &&
	test $(( $(cat peak) - $(cat base) )) -lt $((128 * 1024))
'

# The writers grow their values side by side, so often none of them
# reaches 4 MiB within the 16: each refused writer commits nothing.
test_expect_success 'every writer closed: nothing held, no torn value' '
	wait_for_release() {
		i=0
		while test "$(stat_of cellfs_write_buffer_bytes)" != 0; do
			i=$((i + 1))
			test $i -lt 600 || return 1
			sleep 0.1
		done
	} &&
	wait_for_release &&
	if test "$(cat ok)" = 0; then
		test "$(cat "$R/cf:big")" = small
	else
		test "$(stat -c %s "$R/cf:big")" = $((4 * MiB)) &&
		test "$(tr -d x <"$R/cf:big" | wc -c)" = 0
	fi
'

test_expect_success 'writers within the bound are not refused' '
	for w in 1 2 3; do
		head -c $((4 * MiB)) /dev/zero >"$R/cf:w$w" || return 1
	done &&
	test "$(stat -c %s "$R/cf:w3")" = $((4 * MiB))
'

test_expect_success 'a .batch dump is made while read: past write_buffers it reads whole, nothing charged' '
	cellfs_umount &&
	cellfs_mount write_buffers=1M &&
	mkdir "$MNT/d" "$MNT/e" &&
	v=$(head -c 4000 /dev/zero | tr "\0" v) &&
	for i in $(seq 400); do echo "put r$i cf:a $v"; done >all &&
	cat all >"$MNT/d/.batch" &&
	sed "s/@[0-9]*//" "$MNT/d/.batch" | sort >dump &&
	sort all >expect &&
	test_cmp expect dump &&
	test $(wc -c <dump) -gt $((MiB + MiB / 2)) &&
	: a dump held open, partly read, holds none of the budget &&
	exec 7<"$MNT/d/.batch" &&
	head -c 100 <&7 >part &&
	test "$(stat_of cellfs_write_buffer_bytes)" = 0 &&
	exec 7<&- &&
	grep "^put r1 cf:a@" part &&
	: the dump of one table copied into another &&
	cat "$MNT/d/.batch" >"$MNT/e/.batch" &&
	sed "s/@[0-9]*//" "$MNT/e/.batch" | sort >dump &&
	test_cmp expect dump &&
	test "$(cat "$MNT/e/r400/cf:a")" = "$v" &&
	test "$(stat_of cellfs_write_buffer_bytes)" = 0
'

test_expect_success 'a .batch opened to read and write: reads see the dump, writes apply' '
	exec 8<>"$MNT/e/.batch" &&
	head -c 6 <&8 >part &&
	echo "put zz cf:a one" >&8 &&
	exec 8>&- &&
	printf "put r1" >expect &&
	test_cmp expect part &&
	test "$(cat "$MNT/e/zz/cf:a")" = one
'

test_expect_success 'a table dropped while its dump is read: the next read fails, logged' '
	mkdir "$MNT/g" &&
	v=$(head -c 4000 /dev/zero | tr "\0" v) &&
	for i in $(seq 400); do echo "put r$i cf:a $v"; done >"$MNT/g/.batch" &&
	exec 7<"$MNT/g/.batch" &&
	head -c 100 <&7 >part &&
	grep "^put r1 cf:a@" part &&
	echo drop >"$MNT/g/.ctl" &&
	: reading on from the open file, past the lines made before the drop &&
	python3 -c "import errno, os
try:
    while os.read(7, 1 << 17):
        pass
    print(\"EOF\")
except OSError as e:
    print(errno.errorcode[e.errno])" >result &&
	exec 7<&- &&
	echo ENOENT >expect &&
	test_cmp expect result &&
	test ! -e "$MNT/g" &&
	grep -a -E "read (.batch|scan file): scan: closed or dropped" "$MNT/.log"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
