#!/bin/sh

test_description='cellfs: cp -a and tar round trips, and mounting through mount.fuse3 (the /etc/fstab path)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

test_expect_success 'mount and fill a table' '
	cellfs_mount &&
	mkdir "$MNT/src" &&
	printf "cf\nold VERSIONS=2\n" >"$MNT/src/.schema" &&
	for r in alpha beta gamma %00bin%FF; do
		mkdir "$MNT/src/$r" &&
		echo "v-$r" >"$MNT/src/$r/cf:x" &&
		printf "%s" "$r" >"$MNT/src/$r/old:%2Fslash" || return 1
	done &&
	mkdir "$MNT/src/@beta"
'

test_expect_success 'cp -a out and into a new table compares equal' '
	cp -a "$MNT/src" cpout &&
	mkdir "$MNT/cpdst" &&
	cp "$MNT/src/.schema" "$MNT/cpdst/.schema" &&
	cp -a cpout/@* "$MNT/cpdst/" &&
	diff -r "$MNT/src" "$MNT/cpdst" &&
	cat "$MNT/cpdst/alpha/cf:x" >actual &&
	echo v-alpha >expect &&
	test_cmp expect actual
'

test_expect_success 'cp -a keeps the version timestamps as mtimes' '
	stat -c %Y "$MNT/src/gamma/cf:x" >expect &&
	stat -c %Y "$MNT/cpdst/gamma/cf:x" >actual &&
	test_cmp expect actual
'

test_expect_success 'tar out and back into a new table compares equal' '
	(cd "$MNT/src" && tar cf - .schema @*) >t.tar &&
	tar tf t.tar | LC_ALL=C sort >list &&
	grep -q "^@beta/gamma/cf:x$" list &&
	mkdir "$MNT/tardst" &&
	tar xOf t.tar .schema >"$MNT/tardst/.schema" &&
	(cd "$MNT/tardst" && tar xf - --exclude=.schema) <t.tar &&
	diff -r "$MNT/src" "$MNT/tardst"
'

test_expect_success 'find lists every cell with its size' '
	(cd "$MNT/src" && find @* -type f -printf "%p %s\n" | LC_ALL=C sort) >actual &&
	cat >expect <<-\EOF &&
	@/%00bin%FF/cf:x 12
	@/%00bin%FF/old:%2Fslash 9
	@/alpha/cf:x 8
	@/alpha/old:%2Fslash 5
	@beta/beta/cf:x 7
	@beta/beta/old:%2Fslash 4
	@beta/gamma/cf:x 8
	@beta/gamma/old:%2Fslash 5
	EOF
	test_cmp expect actual
'

test_expect_success 'unmount' '
	cellfs_umount
'

# mount(8) with type fuse runs mount.fuse3, which runs `cellfs DATADIR
# MOUNTPOINT -o OPTS`: the /etc/fstab line "DATADIR MOUNTPOINT fuse.cellfs
# defaults 0 0" takes the same path once cellfs is installed on the
# system PATH (mount sanitizes PATH, so the test names the binary with
# mount.fuse's PROGRAM#SOURCE form instead of installing it).
test_expect_success 'mount through mount.fuse3 (as from /etc/fstab) serves the data' '
	command -v mount.fuse3 >/dev/null &&
	mount -t fuse -o sync=none "$CELLFS#$DATA" "$MNT" &&
	cellfs_is_mounted &&
	cat "$MNT/src/alpha/cf:x" >actual &&
	echo v-alpha >expect &&
	test_cmp expect actual &&
	fusermount3 -u "$MNT" &&
	! cellfs_is_mounted
'

test_done
