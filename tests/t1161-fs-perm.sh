#!/bin/sh

test_description='cellfs: who may do what: allow_other implies kernel permission checks, tables carry a mode and owner set by chmod and chown (kept in the catalog), control files are the owner'"'"'s, the data directory is private'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# Acting as another user needs root (setpriv from util-linux).
test "$(id -u)" = 0 && command -v setpriv >/dev/null &&
	id nobody >/dev/null 2>&1 && test_set_prereq ROOT

# as_nobody CMD ARG...: runs CMD as nobody:nogroup, no other groups
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# errno_nobody OP PATH [ARG]: helper-errno's answer, run as nobody
errno_nobody() {
	as_nobody "$HELPER_ERRNO" "$@"
}

# owner_mode PATH: "USER:GROUP MODE" as ls -l would show them
owner_mode() {
	stat -c "%U:%G %a" "$1"
}

T="$MNT/t"
R="$T/r"
PUTLINE="sys.cpu 1700000000 1 host=a"

test_expect_success ROOT 'an allow_other mount: the tree is the mounting user'"'"'s' '
	cellfs_mount allow_other &&
	mkdir "$T" "$R" "$MNT/t2" &&
	echo v >"$R/cf:a" &&
	echo "put r cf:a w" >"$MNT/t2/.batch" &&
	test "$(owner_mode "$MNT")" = "root:root 755" &&
	test "$(owner_mode "$T")" = "root:root 755" &&
	test "$(owner_mode "$R")" = "root:root 755" &&
	test "$(owner_mode "$R/cf:a")" = "root:root 644" &&
	test "$(owner_mode "$T/.batch")" = "root:root 644" &&
	test "$(owner_mode "$T/.ctl")" = "root:root 644" &&
	test "$(owner_mode "$T/.schema")" = "root:root 644" &&
	test "$(owner_mode "$T/.stats")" = "root:root 444" &&
	test "$(owner_mode "$MNT/.ctl")" = "root:root 644" &&
	test "$(owner_mode "$MNT/.log")" = "root:root 444" &&
	test "$(owner_mode "$MNT/tsd/put")" = "root:root 644" &&
	grep -q "default_permissions" /proc/mounts
'

test_expect_success ROOT 'another user reads' '
	test "$(as_nobody cat "$R/cf:a")" = v &&
	as_nobody ls "$R" >actual &&
	echo cf:a >expect &&
	test_cmp expect actual
'

test_expect_success ROOT 'another user cannot create, overwrite, delete, drop or put' '
	test "$(errno_nobody write "$R/cf:new" x)" = EACCES &&
	test "$(errno_nobody write "$R/cf:a" x)" = EACCES &&
	test "$(errno_nobody unlink "$R/cf:a")" = EACCES &&
	test "$(errno_nobody mkdir "$T/r2")" = EACCES &&
	test "$(errno_nobody mkdir "$MNT/t3")" = EACCES &&
	test "$(errno_nobody write "$T/.batch" "put r cf:a x
")" = EACCES &&
	test "$(errno_nobody write "$T/.ctl" "drop
")" = EACCES &&
	test "$(errno_nobody write "$MNT/.ctl" "flush
")" = EACCES &&
	test "$(errno_nobody write "$T/.schema" "cf
")" = EACCES &&
	test "$(errno_nobody write "$MNT/tsd/put" "$PUTLINE
")" = EACCES &&
	test_must_fail as_nobody chmod 777 "$T" 2>/dev/null &&
	test_must_fail as_nobody chown nobody "$T" 2>/dev/null &&
	test "$(cat "$R/cf:a")" = v &&
	test "$(cat "$T/.schema" | wc -l)" = 1 &&
	test ! -e "$MNT/t3"
'

test_expect_success ROOT 'another user cannot delete time series, rename their names or change their meta data' '
	echo "$PUTLINE" >>"$MNT/tsd/put" &&
	Q="$MNT/tsd/q/start=1700000000&end=1700000060&m=sum:sys.cpu" &&
	test "$(errno_nobody unlink "$Q")" = EACCES &&
	test "$(errno_nobody rename "$MNT/tsd/metrics/sys.cpu" "$MNT/tsd/metrics/sys.x")" = EACCES &&
	test "$(errno_nobody write "$MNT/tsd/uidmeta/type=metric&name=sys.cpu" "{\"notes\":\"x\"}
")" = EACCES &&
	test "$(errno_nobody unlink "$MNT/tsd/uidmeta/type=metric&name=sys.cpu")" = EACCES &&
	test "$(cat "$Q")" = "sys.cpu 1700000000 1 host=a" &&
	grep -q "\"notes\":\"\"" "$MNT/tsd/uidmeta/type=metric&name=sys.cpu" &&
	S="$MNT/tsd/tsmeta/m=sys.cpu{host=a}" &&
	echo "{}" >>"$S&create=true" &&
	test "$(errno_nobody write "$S" "{\"notes\":\"x\"}
")" = EACCES &&
	test "$(errno_nobody unlink "$S")" = EACCES &&
	grep -q "\"notes\":\"\"" "$S"
'

test_expect_success ROOT 'chmod of the table lets others write its data, not its control files' '
	chmod 0777 "$T" &&
	test "$(owner_mode "$T")" = "root:root 777" &&
	test "$(owner_mode "$R")" = "root:root 777" &&
	test "$(owner_mode "$R/cf:a")" = "root:root 666" &&
	test "$(owner_mode "$T/.batch")" = "root:root 666" &&
	test "$(owner_mode "$T/.ctl")" = "root:root 644" &&
	test "$(errno_nobody write "$R/cf:new" x)" = OK &&
	test "$(errno_nobody write "$R/cf:a" y)" = OK &&
	test "$(errno_nobody mkdir "$T/r2")" = OK &&
	test "$(errno_nobody write "$T/.batch" "put r3 cf:a z
")" = OK &&
	test "$(cat "$R/cf:new" "$R/cf:a" "$T/r3/cf:a")" = "xyz" &&
	test "$(errno_nobody unlink "$R/cf:new")" = OK &&
	test ! -e "$R/cf:new" &&
	test "$(errno_nobody write "$T/.ctl" "drop
")" = EACCES &&
	test "$(errno_nobody write "$T/.schema" "cf
")" = EACCES &&
	test "$(errno_nobody write "$MNT/t2/.batch" "put r cf:a x
")" = EACCES &&
	grep "t: mode 0777, owner 0:0" "$MNT/.log"
'

test_expect_success ROOT 'chown of tsd/ gives a collector tsd/put and nothing else' '
	chown nobody:nogroup "$MNT/tsd" &&
	test "$(owner_mode "$MNT/tsd/put")" = "nobody:nogroup 644" &&
	test "$(errno_nobody write "$MNT/tsd/put" "$PUTLINE
")" = OK &&
	grep -x "sys.cpu 1700000000 1 host=a" "$MNT/tsd/metrics/sys.cpu" &&
	test "$(errno_nobody write "$MNT/t2/.batch" "put r cf:a x
")" = EACCES &&
	test "$(errno_nobody mkdir "$MNT/t3")" = EACCES &&
	test "$(errno_nobody write "$MNT/tsdb/.ctl" "drop
")" = EACCES
'

test_expect_success ROOT 'chown of a table: ls -l shows the owner, who may use its .ctl' '
	chown nobody:nogroup "$MNT/t2" &&
	test "$(owner_mode "$MNT/t2")" = "nobody:nogroup 755" &&
	test "$(owner_mode "$MNT/t2/r/cf:a")" = "nobody:nogroup 644" &&
	test "$(owner_mode "$MNT/t2/.ctl")" = "nobody:nogroup 644" &&
	ls -l "$MNT/t2/r" >actual &&
	grep " nobody nogroup .* cf:a$" actual &&
	test "$(errno_nobody write "$MNT/t2/r/cf:b" q)" = OK &&
	test "$(errno_nobody write "$MNT/t2/.ctl" "flush
")" = OK &&
	as_nobody chmod 0700 "$MNT/t2" &&
	test "$(owner_mode "$MNT/t2")" = "nobody:nogroup 700" &&
	test "$(owner_mode "$T")" = "root:root 777"
'

test_expect_success ROOT 'modes and owners are kept across a remount' '
	cellfs_umount &&
	cellfs_mount allow_other &&
	test "$(owner_mode "$T")" = "root:root 777" &&
	test "$(owner_mode "$MNT/t2")" = "nobody:nogroup 700" &&
	test "$(owner_mode "$MNT/tsd/put")" = "nobody:nogroup 644" &&
	test "$(errno_nobody write "$R/cf:c" x)" = OK
'

test_expect_success ROOT 'a dropped table made again starts with the defaults' '
	echo drop >"$T/.ctl" &&
	mkdir "$T" &&
	test "$(owner_mode "$T")" = "root:root 755" &&
	test "$(errno_nobody mkdir "$T/r")" = EACCES &&
	cellfs_umount &&
	cellfs_mount allow_other &&
	test "$(owner_mode "$T")" = "root:root 755"
'

test_expect_success ROOT 'without allow_other, other users see nothing' '
	cellfs_umount &&
	cellfs_mount &&
	test "$(errno_nobody stat "$R")" = EACCES &&
	! grep -q "default_permissions" /proc/mounts
'

test_expect_success ROOT 'uid=, gid=, umask= set the defaults' '
	cellfs_umount &&
	cellfs_mount allow_other,uid=65534,gid=65534,umask=027 &&
	test "$(owner_mode "$MNT")" = "nobody:nogroup 750" &&
	test "$(owner_mode "$MNT/t2")" = "nobody:nogroup 700" &&
	test "$(owner_mode "$T")" = "nobody:nogroup 750" &&
	test "$(owner_mode "$T/.ctl")" = "nobody:nogroup 640" &&
	test "$(owner_mode "$T/.stats")" = "nobody:nogroup 440" &&
	test "$(errno_nobody mkdir "$T/r9")" = OK &&
	test "$(errno_nobody write "$T/r9/cf:a" x)" = OK &&
	test "$(owner_mode "$T/r9/cf:a")" = "nobody:nogroup 640"
'

test_expect_success 'bad uid=, umask= values are refused' '
	cellfs_umount &&
	test_must_fail "$CELLFS" -f -o umask=999 "$DATA" "$MNT" 2>err &&
	grep "bad value for umask" err &&
	test_must_fail "$CELLFS" -f -o uid=x "$DATA" "$MNT" 2>err &&
	grep "bad value for uid" err
'

test_expect_success 'the data directory and everything in it is private' '
	cellfs_mount flush_size=4K &&
	mkdir -p "$MNT/p/r" &&
	for i in $(seq 50); do echo "put r$i cf:a value$i"; done >"$MNT/p/.batch" &&
	echo flush >"$MNT/.ctl" &&
	echo sync >"$MNT/.ctl" &&
	test "$(stat -c %a "$DATA")" = 700 &&
	test "$(stat -c %a "$DATA/catalog.db")" = 600 &&
	find "$DATA" -name "*.sst" >ssts &&
	test -s ssts &&
	find "$DATA/wal" -type f >wals &&
	test -s wals &&
	find "$DATA" -perm /077 >open &&
	test_must_be_empty open
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
