#!/bin/sh

test_description='cellfs: readdirplus pages of a region listing (made ahead, re-asked from inside, sent after writes), ls -l attributes'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# stat_of NAME: the value of an unlabelled counter of MNT/.stats
stat_of() {
	sed -n "s/^cellfs_$1 //p" "$MNT/.stats"
}

# getdents.py DIR BUFSIZE [stat] [rewind]: the names of DIR (not . and
# ..) read with getdents64 into a buffer of BUFSIZE bytes, in the order
# read; with stat, each lstat'ed as read ("NAME ok" or "NAME ENOENT"):
# what ls -l does, and the kernel then asks readdirplus; with rewind, the
# first three reads are followed by a seek back to 0 (rewinddir).
cat >getdents.py <<\EOF
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_getdents64 = 217
d, size = sys.argv[1], int(sys.argv[2])
st, rewind = "stat" in sys.argv[3:], "rewind" in sys.argv[3:]
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
buf = ctypes.create_string_buffer(size)
out, reads = [], 0
while True:
    n = libc.syscall(SYS_getdents64, fd, buf, size)
    if n < 0:
        sys.exit("getdents64: " + os.strerror(ctypes.get_errno()))
    if n == 0:
        break
    reads += 1
    raw, pos = buf.raw[:n], 0
    while pos < n:
        reclen = struct.unpack_from("<H", raw, pos + 16)[0]
        name = raw[pos + 19:pos + reclen].split(b"\0", 1)[0].decode()
        pos += reclen
        if name in (".", ".."):
            continue
        if not st:
            out.append(name)
            continue
        try:
            os.lstat(os.path.join(d, name))
            out.append(name + " ok")
        except FileNotFoundError:
            out.append(name + " ENOENT")
    if rewind and reads == 3:
        os.lseek(fd, 0, os.SEEK_SET)
        out.append("--")
os.close(fd)
print("\n".join(out))
EOF

# deleting.py REGION BATCH: lists REGION as ls -l does; after the first
# read (and the lstat that makes the kernel ask readdirplus next), deletes
# rows r00150..r02999 through BATCH, lists on, then lstats every name
# listed: "NAME ok" or "NAME ENOENT".
cat >deleting.py <<\EOF
import os, sys
d, batch = sys.argv[1], sys.argv[2]
it = os.scandir(d)
names = [next(it).name]
os.lstat(os.path.join(d, names[0]))
with open(batch, "w") as f:
    f.write("".join("delete r%05d\n" % i for i in range(150, 3000)))
names += [e.name for e in it]
for n in names:
    try:
        os.lstat(os.path.join(d, n))
        print(n, "ok")
    except FileNotFoundError:
        print(n, "ENOENT")
EOF

rows() {
	awk -v from=$1 -v to=$2 -v p=${3:-r} \
		"BEGIN { for (i = from; i < to; i++) printf \"%s%05d\\n\", p, i }"
}

test_expect_success 'mount, 3000 rows' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	rows 0 3000 | sed "s/.*/put & cf:q v/" >"$MNT/t/.batch" &&
	rows 0 3000 >all
'

test_expect_success 'a reader taking a few entries a read lists every row once, from one scan' '
	scans=$(stat_of scans_total) &&
	python3 getdents.py "$MNT/t/@" 100 >out &&
	test_cmp all out &&
	test $(stat_of scans_total) -eq $((scans + 1)) &&
	python3 getdents.py "$MNT/t/@" 100 stat >out &&
	sed "s/\$/ ok/" all >expect && test_cmp expect out &&
	test $(stat_of scans_total) -eq $((scans + 2))
'

test_expect_success 'a seek back to 0 lists from the start again' '
	python3 getdents.py "$MNT/t/@" 4096 stat rewind >out &&
	sed -n "/^--\$/,\$p" out | sed 1d >again &&
	sed "s/\$/ ok/" all >expect && test_cmp expect again &&
	test $(sed -n "/^--\$/q;p" out | wc -l) -gt 0
'

test_expect_success 'ls -l of the region: every row once, a directory with 2 links' '
	readdirplus=$(stat_of fuse_readdirplus_entries_total) &&
	ls -l "$MNT/t/@" >out &&
	sed 1d out | awk "{ print \$1, \$2, \$5, \$NF }" >got &&
	rows 0 3000 | sed "s/^/drwxr-xr-x 2 0 /" >expect &&
	test_cmp expect got &&
	test $(stat_of fuse_readdirplus_entries_total) -ge $((readdirplus + 3000)) &&
	ls -l "$MNT/t/@" >again && test_cmp out again
'

test_expect_success 'after the region listing, ls -l of rows shows sizes and versions' '
	printf abcdef >"$MNT/t/r00007/cf:q" && touch -d @1000 "$MNT/t/r00007/cf:q" &&
	printf 12 >"$MNT/t/r02999/cf:p" && touch -d @2000 "$MNT/t/r02999/cf:p" &&
	ls -l "$MNT/t/@" >/dev/null &&
	ls -l --time-style=+%s "$MNT/t/@/r00007" "$MNT/t/@/r02999" >out &&
	grep cf: out | awk "{ print \$2, \$5, \$6, \$7 }" >got &&
	printf "1 6 1000 cf:q\n1 2 2000 cf:p\n1 1 %s cf:q\n" \
		$(stat -c %Y "$MNT/t/r02999/cf:q") >expect &&
	test_cmp expect got
'

test_expect_success 'rows deleted while a listing is under way are not given to the kernel' '
	python3 deleting.py "$MNT/t/@" "$MNT/t/.batch" >out &&
	rows 0 150 | sed "s/\$/ ok/" >expect &&
	grep " ok\$" out >got && test_cmp expect got &&
	listed=$(wc -l <out) && echo "listed: $listed" &&
	test $listed -ge 150 &&
	ls "$MNT/t/@" >got && rows 0 150 >expect && test_cmp expect got
'

test_expect_success 'a listing while rows are put and deleted: the others once each, in order' '
	rows 150 3000 | sed "s/.*/put & cf:q v/" >"$MNT/t/.batch" &&
	(
		i=0
		while test $i -lt 30; do
			rows 0 100 w | sed "s/.*/put & cf:q v/" >"$MNT/t/.batch" &&
			rows 0 100 w | sed "s/^/delete /" >"$MNT/t/.batch" ||
			exit 1
			i=$((i + 1))
		done
	) &
	writer=$! &&
	n=0 &&
	while test $n -lt 10; do
		python3 getdents.py "$MNT/t/@" 4096 stat >out &&
		grep "^r" out >got && sed "s/\$/ ok/" all >expect &&
		test_cmp expect got &&
		awk "{ print \$1 }" out >names && sort -u names >sorted &&
		test_cmp names sorted &&
		n=$((n + 1)) || break
	done &&
	wait $writer &&
	test $n -eq 10 &&
	python3 getdents.py "$MNT/t/@" 4096 stat >out &&
	sed "s/\$/ ok/" all >expect && test_cmp expect out &&
	for w in w00000 w00050 w00099; do
		echo ENOENT >expect &&
		errno_of stat "$MNT/t/@/$w" >got && test_cmp expect got ||
		return 1
	done
'

test_expect_success 'a store file damaged in the middle of a region: the listing fails, never ends early' '
	cellfs_umount &&
	rm -rf "$DATA" &&
	cellfs_mount &&
	mkdir "$MNT/t" &&
	awk "BEGIN { srand(7); for (i = 0; i < 3000; i++) {
		v = \"\"; for (j = 0; j < 20; j++) v = v int(rand() * 1e9)
		printf \"put r%05d cf:q %s\\n\", i, v } }" >"$MNT/t/.batch" &&
	echo flush >"$MNT/.ctl" &&
	cellfs_umount &&
	sst=$(ls "$DATA"/data/t/*/cf/*.sst) &&
	test $(echo "$sst" | wc -l) -eq 1 &&
	size=$(stat -c %s "$sst") && echo "store file: $size bytes" &&
	printf "\377\377\377\377" |
		dd of="$sst" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	cellfs_mount &&
	for how in 4096 "4096 stat"; do
		test_expect_code 1 python3 getdents.py "$MNT/t/@" $how \
			>out 2>err &&
		grep "Input/output error" err || return 1
	done &&
	test_expect_code 2 ls -l "$MNT/t/@" >out 2>err &&
	grep "Input/output error" err
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
