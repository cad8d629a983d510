#!/bin/sh

test_description='cellfs: the session in docs/usage.md runs as shown'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

DOC="${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}/docs/usage.md"

test_expect_success 'extract the session' '
	doc_session "$DOC" >session &&
	test -s session
'

test_expect_success 'mount' '
	cellfs_mount
'

test_expect_success 'every command gives the output shown' '
	run_session session expect actual
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
