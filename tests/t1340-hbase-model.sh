#!/bin/sh

test_description='cellfs: random HBase operations through the mount (cell files, .batch verbs, counters, multi-column appends, flush, compaction; scans forward and reversed; a KEEP_DELETED_CELLS family read in time ranges around its deletes) agree with a model of the engine semantics (tests/hbase-model.py)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

MODEL="$SHARNESS_TEST_DIRECTORY/hbase-model.py"
: "${CELLFS_MODEL_OPS:=250}"

command -v python3 >/dev/null || {
	skip_all="no python3"
	test_done
}

test_expect_success 'mount' '
	cellfs_mount
'

for seed in 1 2 3 4; do
	test_expect_success "seed $seed: $CELLFS_MODEL_OPS operations agree with the model" '
		mkdir "$MNT/m$seed" &&
		python3 "$MODEL" "$MNT" "m$seed" 0 0 --schema >"$MNT/m$seed/.schema" &&
		python3 "$MODEL" "$MNT" "m$seed" $seed $CELLFS_MODEL_OPS
	'
done

test_expect_success 'seed 5 again after a remount: what was written reads the same' '
	mkdir "$MNT/m5" &&
	python3 "$MODEL" "$MNT" m5 0 0 --schema >"$MNT/m5/.schema" &&
	python3 "$MODEL" "$MNT" m5 5 150 &&
	cat "$MNT/m5/.scan/versions=9" >before &&
	cellfs_umount && cellfs_mount &&
	cat "$MNT/m5/.scan/versions=9" >after &&
	test_cmp before after
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
