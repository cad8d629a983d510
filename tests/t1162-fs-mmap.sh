#!/bin/sh

test_description='cellfs: mmap of a cell: MAP_PRIVATE reads the value, MAP_SHARED is refused with ENODEV (cells are direct_io; libfuse 3.14 cannot offer FUSE_DIRECT_IO_ALLOW_MMAP)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

test_expect_success 'mount, a cell' '
	cellfs_mount &&
	mkdir "$MNT/t" "$R" &&
	printf hello >"$R/cf:a"
'

test_expect_success 'MAP_PRIVATE maps the value' '
	printf "hello\nOK\n" >expect &&
	errno_of mmap "$R/cf:a" private >actual &&
	test_cmp expect actual &&
	test "$(cat "$R/cf:a")" = hello
'

test_expect_success 'MAP_SHARED fails with ENODEV, the cell unchanged' '
	test "$(errno_of mmap "$R/cf:a" shared)" = ENODEV &&
	test "$(cat "$R/cf:a")" = hello
'

test_expect_success 'a private mapping after a write sees the new value' '
	printf world >"$R/cf:a" &&
	printf "world\nOK\n" >expect &&
	errno_of mmap "$R/cf:a" private >actual &&
	test_cmp expect actual
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
