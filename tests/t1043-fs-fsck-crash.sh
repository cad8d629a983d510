#!/bin/sh

test_description='cellfs-fsck: the debris of an unclean stop (exit 0) against damage to committed data (exit 1)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

FSCK="$CELLFS_BUILD/cellfs-fsck"

test_expect_success 'setup: a flushed table, a clean unmount, nothing found' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	for i in 1 2 3 4 5 6 7 8; do
		mkdir "$MNT/t/row$i" &&
		echo "v$i" >"$MNT/t/row$i/cf:q" || return 1
	done &&
	echo flush >"$MNT/t/.ctl" &&
	cellfs_umount &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

# What a kill during a flush, compaction, split, create or drop leaves,
# made by hand so that every kind is there: store files the catalog does
# not name (whole, and torn), a region and a table directory it does not
# name, and a torn record at the end of the newest WAL segment.
test_expect_success 'debris is reported as such, exit 0' '
	reg=$(ls "$DATA/data/t" | head -n 1) &&
	fam="$DATA/data/t/$reg/cf" &&
	sst=$(ls "$fam" | head -n 1) &&
	cp "$fam/$sst" "$fam/00000000000fff01.sst" &&
	head -c 100 "$fam/$sst" >"$fam/00000000000fff02.sst" &&
	mkdir -p "$DATA/data/t/00000000000fff03/cf" &&
	mkdir -p "$DATA/data/gone/0000000000000001/cf" &&
	seg="$DATA/wal/$(ls "$DATA/wal" | tail -n 1)" &&
	size=$(stat -c %s "$seg") &&
	printf torn >>"$seg" &&
	"$FSCK" "$DATA" >out 2>&1 &&
	cat >expect <<-EOF &&
	$fam/00000000000fff01.sst: debris: not in the catalog, removed by the next mount
	$fam/00000000000fff02.sst: debris: not in the catalog, checksum mismatch at offset 36, removed by the next mount
	$DATA/data/t/00000000000fff03: debris: a region directory not in the catalog, removed by the next mount
	$DATA/data/gone: debris: a table directory not in the catalog, removed by the next mount
	$seg: debris: a torn record after offset $size in the newest segment, cut there by the next mount
	5 items of debris from an unclean stop
	EOF
	sort expect >expect.sorted && sort out >out.sorted &&
	test_cmp expect.sorted out.sorted
'

test_expect_success '--repair removes the debris as a mount would, exit 0; then nothing is found' '
	"$FSCK" --repair "$DATA" >out 2>&1 &&
	sed "s/^5 items of debris from an unclean stop\$/& removed/" \
		expect >expect.repair &&
	sort expect.repair >expect.sorted && sort out >out.sorted &&
	test_cmp expect.sorted out.sorted &&
	! test -e "$fam/00000000000fff01.sst" &&
	! test -e "$fam/00000000000fff02.sst" &&
	! test -e "$DATA/data/t/00000000000fff03" &&
	! test -e "$DATA/data/gone" &&
	! test -e "$DATA/lost+found" &&
	test $(stat -c %s "$seg") = $size &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

test_expect_success 'the next mount removes the same debris (and says so in .log)' '
	cp "$fam/$sst" "$fam/00000000000fff01.sst" &&
	mkdir -p "$DATA/data/t/00000000000fff03/cf" &&
	cellfs_mount &&
	grep -F "info removing $fam/00000000000fff01.sst: not in the catalog" "$MNT/.log" &&
	grep -F "info removing $DATA/data/t/00000000000fff03: not in the catalog" "$MNT/.log" &&
	echo v3 >expect && test_cmp expect "$MNT/t/row3/cf:q" &&
	cellfs_umount &&
	! test -e "$fam/00000000000fff01.sst" &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

# Real kills: writes, flushes and splits running, the daemon killed at
# once; whatever fsck finds then is debris, never damage.
test_expect_success 'kill -9 under writes, flushes and splits: fsck finds debris only, exit 0' '
	for round in 1 2 3 4 5; do
		cellfs_mount sync=none,flush_size=65536,split_size=262144 ||
			return 1
		(
			i=0
			while test $i -lt 400; do
				mkdir -p "$MNT/t/k$round-$i" 2>/dev/null &&
				head -c 600 /dev/urandom >"$MNT/t/k$round-$i/cf:q" 2>/dev/null
				test $((i % 50)) = 0 &&
				echo flush >"$MNT/t/.ctl" 2>/dev/null
				i=$((i + 1))
			done
		) &
		writer=$!
		n=0 &&
		while test $(ls "$MNT/t" 2>/dev/null | wc -l) -lt $((round * 50)) &&
		      test $n -lt 300; do
			n=$((n + 1)) && sleep 0.05
		done &&
		cellfs_kill9 &&
		wait $writer
		"$FSCK" "$DATA" >out 2>&1 ||
		{ cat out; return 1; }
		grep -v -e ": debris: " -e "of debris from an unclean stop\$" out >damage
		test_must_be_empty damage || return 1
	done
'

test_expect_success 'damage to a committed store file: exit 1' '
	cellfs_mount && cellfs_umount &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out &&
	sst=$(ls "$DATA"/data/t/*/cf/*.sst | head -n 1) &&
	cp "$sst" saved.sst &&
	printf "\377\377\377\377" | dd of="$sst" bs=1 seek=40 conv=notrunc 2>/dev/null &&
	test_expect_code 1 "$FSCK" "$DATA" >out 2>&1 &&
	grep -x "$sst: checksum mismatch at offset [0-9]*" out &&
	tail -n 1 out >last && echo "1 problem found" >expect &&
	test_cmp expect last && test $(wc -l <out) = 2 &&
	cp saved.sst "$sst" &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

# Each segment is cut back and synced before the next is created, so a
# torn tail in a segment older than the newest is lost data.
test_expect_success 'a torn tail in an older WAL segment: damage, exit 1' '
	cellfs_mount sync=none &&
	mkdir "$MNT/t/a1" && echo one >"$MNT/t/a1/cf:q" &&
	cellfs_kill9 &&
	cellfs_mount sync=none &&
	mkdir "$MNT/t/a2" && echo two >"$MNT/t/a2/cf:q" &&
	cellfs_kill9 &&
	ls "$DATA/wal" >segs &&
	test $(wc -l <segs) -ge 2 &&
	old="$DATA/wal/$(tail -n 2 segs | head -n 1)" &&
	new="$DATA/wal/$(tail -n 1 segs)" &&
	oldsize=$(stat -c %s "$old") &&
	printf torn >>"$old" &&
	test_expect_code 1 "$FSCK" "$DATA" >out 2>&1 &&
	grep -x "$old: a torn record after offset $oldsize in a segment older than the newest: records after it are lost" out &&
	grep -x "$new: debris: zeros after offset [0-9]* in the newest segment, cut there by the next mount" out &&
	echo "1 item of debris from an unclean stop" >expect &&
	echo "1 problem found" >>expect &&
	tail -n 2 out >last && test_cmp expect last &&
	test $(wc -l <out) = 4
'

test_expect_success '--repair keeps a copy in lost+found and cuts the segment, exit 1; then clean' '
	test_expect_code 1 "$FSCK" --repair "$DATA" >out 2>&1 &&
	grep -x "$old: a torn record after offset $oldsize in a segment older than the newest: records after it are lost" out &&
	tail -n 1 out >last && echo "1 problem found and repaired" >expect &&
	test_cmp expect last &&
	test $(stat -c %s "$old") = $oldsize &&
	copy="$DATA/lost+found/wal-$(basename "$old")" &&
	test $(stat -c %s "$copy") = $((oldsize + 4)) &&
	"$FSCK" "$DATA" >out 2>&1 &&
	test_must_be_empty out
'

# The engine does not cut it either: it logs the loss as an error and
# replays the rest (the segment goes once its records are flushed, as
# any other).
test_expect_success 'the mount logs a torn older segment as an error and serves the rest' '
	printf torn >>"$old" &&
	cellfs_mount &&
	grep -F "error wal $old: a torn record after offset $oldsize in a segment older than the newest: records after it are lost (run cellfs-fsck)" "$MNT/.log" &&
	echo one >expect && test_cmp expect "$MNT/t/a1/cf:q" &&
	echo two >expect && test_cmp expect "$MNT/t/a2/cf:q" &&
	cellfs_umount
'

test_done
