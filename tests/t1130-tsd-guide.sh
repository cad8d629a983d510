#!/bin/sh

test_description='cellfs: the session and the examples of docs/timeseries.md run as shown'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

TOP=${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}
DOC=$TOP/docs/timeseries.md

test_expect_success 'extract the session and the example commands' '
	doc_session "$DOC" >session &&
	test -s session &&
	grep -E "^    (echo|printf|cat|cp) .*MNT/" "$DOC" |
		sed "s/^    //; s|/tmp/net.png|net.png|" >examples &&
	test $(wc -l <examples) -ge 8
'

test_expect_success 'mount' '
	cellfs_mount
'

# As t1050: each "$ " line runs in the mount point (HOME is the trash
# directory, so ~/points stays in it); the other lines are its output.
test_expect_success 'every command of the session gives the output shown' '
	run_session session expect actual
'

test_expect_success 'every example command of the guide works (after a round of the collectors)' '
	"$TOP/contrib/tcollector-run.sh" -1 "$MNT" &&
	while IFS= read -r cmd; do
		cmd=$(printf "%s\n" "$cmd" |
			sed -e "s|'"'"'MNT/|\"\$MNT\"'"'"'/|g" \
			    -e "s| MNT/| \"\$MNT\"/|g") &&
		eval "$cmd" >out 2>err &&
		test_must_be_empty err || {
			echo "FAILED: $cmd" && cat err && return 1
		}
	done <examples &&
	od -An -tx1 -N8 net.png >out &&
	echo " 89 50 4e 47 0d 0a 1a 0a" >expect && test_cmp expect out &&
	cat "$MNT/tsd/q/start=10m-ago&m=avg:proc.loadavg.1min&m=avg:proc.loadavg.5min&ms" >out &&
	test $(wc -l <out) = 2 &&
	grep "^proc.loadavg.1min [0-9]\{13\} " out &&
	grep "^proc.loadavg.5min [0-9]\{13\} " out
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
