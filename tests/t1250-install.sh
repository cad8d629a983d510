#!/bin/sh

test_description='make install into an empty DESTDIR, make uninstall; the
installed daemon mounted from an fstab line (mount -T FSTAB MNT, type
fuse.cellfs through mount.fuse3) and as cellfs#DATADIR; the installed
units pass systemd-analyze verify'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

TOP=${CELLFS_TOP:-$SHARNESS_TEST_DIRECTORY/..}
STAGE="$SHARNESS_TRASH_DIRECTORY/stage"

# The files make install puts under PREFIX, sorted.
installed_list() {
	{
		printf "%s\n" bin/cellfs bin/cellfs-fsck \
			share/man/man5/cellfs.5 share/man/man8/cellfs.8 \
			share/man/man8/cellfs-fsck.8 share/doc/cellfs/README.md \
			lib/cellfs/tcollector-run.sh lib/cellfs/cellfs-textfile.sh \
			lib/systemd/system/cellfs@.service \
			lib/systemd/system/cellfs-collector.service \
			lib/systemd/system/cellfs-textfile.service &&
		(cd "$TOP/docs" && ls *.md | sed "s|^|share/doc/cellfs/|") &&
		(cd "$TOP/contrib" && ls collectors/*/*.sh |
			sed "s|^|lib/cellfs/|")
	} | sort
}

test_expect_success 'make install DESTDIR=STAGE puts every file under PREFIX' '
	make -s -C "$TOP" install DESTDIR="$STAGE" B="$CELLFS_BUILD" \
		>make.out 2>&1 &&
	(cd "$STAGE/usr/local" && find . ! -type d | sed "s|^\./||" | sort) >out &&
	installed_list >expect &&
	test $(wc -l <expect) -ge 25 &&
	test_cmp expect out &&
	(cd "$STAGE" && find . -path ./usr -prune -o -print) >out &&
	echo . >expect && test_cmp expect out
'

test_expect_success 'modes: programs and scripts 755, the rest 644' '
	(cd "$STAGE/usr/local" && find . -type f -perm 755 | sort) >out &&
	grep -x ./bin/cellfs out && grep -x ./bin/cellfs-fsck out &&
	grep -x ./lib/cellfs/collectors/15/cpu.sh out &&
	grep -x ./lib/cellfs/cellfs-textfile.sh out &&
	(cd "$STAGE/usr/local" && find . -type f ! -perm 755 ! -perm 644) >out &&
	test_must_be_empty out &&
	(cd "$STAGE/usr/local" && find share lib/systemd -type f -perm 755) >out &&
	test_must_be_empty out
'

test_expect_success 'the installed programs run' '
	"$STAGE/usr/local/bin/cellfs" --version >out &&
	grep "^cellfs " out &&
	test_expect_code 2 "$STAGE/usr/local/bin/cellfs-fsck"
'

test_expect_success 'make uninstall removes every file and cellfs own directories' '
	make -s -C "$TOP" uninstall DESTDIR="$STAGE" B="$CELLFS_BUILD" &&
	(cd "$STAGE" && find . ! -type d) >out &&
	test_must_be_empty out &&
	(cd "$STAGE/usr/local" && find . -type d | sort) >out &&
	printf "%s\n" . ./bin ./lib ./lib/systemd ./lib/systemd/system \
		./share ./share/doc ./share/man ./share/man/man5 \
		./share/man/man8 >expect &&
	test_cmp expect out
'

test_expect_success 'PREFIX=/opt/cellfs: paths in units and man pages follow' '
	make -s -C "$TOP" install DESTDIR="$PWD/opt-stage" PREFIX=/opt/cellfs \
		B="$CELLFS_BUILD" &&
	P="$PWD/opt-stage/opt/cellfs" &&
	grep -x "ExecStart=/opt/cellfs/bin/cellfs -f \$CELLFS_OPTIONS \${CELLFS_DATA} %f" \
		"$P/lib/systemd/system/cellfs@.service" &&
	grep "^ExecStart=/opt/cellfs/lib/cellfs/tcollector-run.sh" \
		"$P/lib/systemd/system/cellfs-collector.service" &&
	grep -x ".I /opt/cellfs/lib/systemd/system/cellfs@.service" \
		"$P/share/man/man8/cellfs.8" &&
	! grep -r /usr/local "$P/lib/systemd" "$P/share/man" &&
	make -s -C "$TOP" uninstall DESTDIR="$PWD/opt-stage" \
		PREFIX=/opt/cellfs B="$CELLFS_BUILD" &&
	(cd opt-stage && find . ! -type d) >out && test_must_be_empty out
'

# The rest runs the installed tree where it belongs: in a private mount
# namespace, STAGE/usr/local is bind-mounted over /usr/local, so mount(8)
# (which runs helpers with a fixed PATH), mount.fuse3, man and systemd
# find what make install put, and nothing outside changes.  Needs root.
test "$(id -u)" = 0 && command -v unshare >/dev/null &&
	command -v mount.fuse3 >/dev/null &&
	unshare -m --propagation private true 2>/dev/null &&
	test_set_prereq NS

cat >ns.sh <<'EOS'
# ns.sh STAGE DATA MNT: inside the namespace.  Prints what it checks; a
# failure exits non-zero.  Never leaves the mount behind.
set -e
STAGE=$1 DATA=$2 MNT=$3
trap 'umount -l "$MNT" 2>/dev/null || :' EXIT
mount --bind "$STAGE/usr/local" /usr/local
mntline() {	# the mountinfo fields: type source options of MNT
	M="$MNT" awk '{ p = $5; gsub(/\\040/, " ", p) }
		p == ENVIRON["M"] {
			for (i = 7; $i != "-"; i++);
			print $(i+1), $(i+2), $6
		}' /proc/self/mountinfo
}
waitgone() {	# until no daemon has DATA open (cellfs-fsck exit 2: busy)
	i=0
	while :; do
		rc=0; cellfs-fsck "$DATA" >/dev/null 2>&1 || rc=$?
		test $rc != 2 && return $rc
		i=$((i + 1)); test $i -lt 100 || return 1
		sleep 0.1
	done
}
printf "%s %s fuse.cellfs rw,nosuid,nodev,noatime,_netdev,nofail,sync=batch,flush_size=1M,x-systemd.requires=local-fs.target 0 0\n" \
	"$(printf %s "$DATA" | sed "s/ /\\\\040/g")" \
	"$(printf %s "$MNT" | sed "s/ /\\\\040/g")" >fstab
echo "== mount -T fstab MNT"
mount -T fstab "$MNT"
mntline
mkdir "$MNT/t" "$MNT/t/r"
echo hello >"$MNT/t/r/cf:a"
cat "$MNT/t/r/cf:a"
echo "== mount -a: mounted already"
mount -T fstab -a
mntline | wc -l
echo "== umount"
umount "$MNT"
waitgone
mntline | wc -l
echo "== mount.fuse3 cellfs#DATA MNT"
mount.fuse3 "cellfs#$DATA" "$MNT" -o dev,suid,defaults,relatime
mntline
cat "$MNT/t/r/cf:a"
umount "$MNT"
waitgone
echo "== man"
man -w cellfs cellfs-fsck
man -w 5 cellfs
EOS

test_expect_success NS 'the installed daemon from an fstab line and as cellfs#DATADIR' '
	make -s -C "$TOP" install DESTDIR="$STAGE" B="$CELLFS_BUILD" &&
	mkdir -p "$MNT" &&
	unshare -m --propagation private sh ns.sh "$STAGE" "$DATA" "$MNT" \
		>out 2>err &&
	cat >expect <<-EOF &&
	== mount -T fstab MNT
	fuse.cellfs $DATA rw,nosuid,nodev,noatime
	hello
	== mount -a: mounted already
	1
	== umount
	0
	== mount.fuse3 cellfs#DATA MNT
	fuse.cellfs $DATA rw,relatime
	hello
	== man
	/usr/local/share/man/man8/cellfs.8
	/usr/local/share/man/man8/cellfs-fsck.8
	/usr/local/share/man/man5/cellfs.5
	EOF
	sed "s/\\\\040/ /g" out >out.plain &&
	test_cmp expect out.plain
'

command -v systemd-analyze >/dev/null && test_set_prereq SYSTEMD_ANALYZE

test_expect_success NS,SYSTEMD_ANALYZE 'systemd-analyze verify: the installed units, and a bad one fails' '
	cp "$STAGE/usr/local/lib/systemd/system/cellfs@.service" bad@.service &&
	sed -i "s|^ExecStart=.*|ExecStart=/usr/local/bin/nosuch -f|" bad@.service &&
	cat >verify.sh <<-\EOS &&
	set -e
	mount --bind "$1/usr/local" /usr/local
	U=/usr/local/lib/systemd/system
	systemd-analyze verify $U/cellfs@mnt-cellfs.service \
		$U/cellfs-collector.service $U/cellfs-textfile.service
	echo verified
	! systemd-analyze verify "$2/bad@x.service" 2>&1
	EOS
	unshare -m --propagation private sh verify.sh "$STAGE" "$PWD" \
		>out 2>&1 &&
	grep -x verified out &&
	grep "nosuch" out
'

test_expect_success 'uninstall the staged tree' '
	make -s -C "$TOP" uninstall DESTDIR="$STAGE" B="$CELLFS_BUILD" &&
	(cd "$STAGE" && find . ! -type d) >out && test_must_be_empty out
'

test_done
