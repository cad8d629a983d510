#!/bin/sh

test_description='cellfs: the scan file streamed over many reads: odd read sizes, the bytes produced ahead of the reads, reversed, limit, early close, readers going back and reading at once, byte-exact against lines made from the loaded batch'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

S="$MNT/t/.scan"

# 12000 rows (some of two cells) whose keys, qualifiers and values need
# every kind of escape at many positions: in.batch loads them, expect is
# the scan's forward lines and expect.rev its reversed ones (rows last to
# first, each row's cells as forward), both made here from the same
# (canonical, escaped) text.
test_expect_success 'mount; a table of 12000 rows needing escapes' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f\n" >"$MNT/t/.schema" &&
	awk "BEGIN {
		nr = split(\"|-a.b|%20x|%25|%FF%00|_~,=+|.z\", rs, \"|\");
		nq = split(\"q|%2Eq|q.x|%3Aq|%40\", qs, \"|\");
		ne = split(\"%20 %2F %C3 %25 %40 . %0A\", es, \" \");
		al = \"abcdefghijklmnopqrstuvwxyz0123456789\";
		for (i = 0; i < 12000; i++) {
			row = sprintf(\"r%05d\", i) rs[i % nr + 1];
			nc = i % 5 == 0 ? 2 : 1;
			line = \"\";
			for (c = 0; c < nc; c++) {
				q = nc == 2 ? (c ? \"b\" : \"a\") : qs[i % nq + 1];
				l = (i + c) % 41;
				v = i % 17 == 0 ? \"%2E\" : \"\";
				for (k = 0; k < l; k++) {
					e = es[i % ne + 1];
					if (e == \".\" && v == \"\")
						e = \"%2E\";
					v = v (k == i % 13 ? e : \
					    substr(al, (i + k) % 36 + 1, 1));
				}
				if (v == \"\")
					v = sprintf(\"%c%c\", 39, 39);
				ts = 1000 + i % 7;
				printf \"put %s f:%s@%d %s\\n\", row, q, ts, v \
					>\"in.batch\";
				printf \"%s f:%s %d %s\\n\", row, q, ts, v \
					>\"expect\";
				line = line row \" f:\" q \" \" ts \" \" v \"\\n\";
			}
			rev[i] = line;
		}
		for (i = 11999; i >= 0; i--)
			printf \"%s\", rev[i] >\"expect.rev\";
	}" &&
	test $(wc -l <expect) = 14400 &&
	cat in.batch >"$MNT/t/.batch" &&
	cat "$S/all" >out && test_cmp expect out
'

# read_sizes FILE EXPECT SIZE...: reads FILE to its end with reads of the
# sizes given, in turn, and compares the bytes with EXPECT.
read_sizes() {
	python3 - "$@" <<-\EOF
	import os, sys
	path, expect, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
	want = open(expect, "rb").read()
	fd = os.open(path, os.O_RDONLY)
	got, i = [], 0
	while True:
	    b = os.read(fd, sizes[i % len(sizes)])
	    i += 1
	    if not b:
	        break
	    got.append(b)
	os.close(fd)
	got = b"".join(got)
	if got != want:
	    n = next((k for k in range(min(len(got), len(want)))
	          if got[k] != want[k]), min(len(got), len(want)))
	    sys.exit("%s: %d bytes, want %d; first difference at %d: %r"
	         % (path, len(got), len(want), n, got[n - 40:n + 40]))
	EOF
}

test_expect_success 'odd read sizes, in the memstore and from a store file' '
	read_sizes "$S/all" expect 4099 &&
	read_sizes "$S/all" expect 1 7 65537 131072 3 1048576 333 &&
	echo flush >"$MNT/t/.ctl" &&
	read_sizes "$S/all" expect 4099 &&
	read_sizes "$S/all" expect 131072 &&
	read_sizes "$S/all" expect 1048576 1 131071 99999 &&
	cat "$S/all" >out && test_cmp expect out
'

test_expect_success 'reversed, with odd read sizes' '
	read_sizes "$S/reversed" expect.rev 131072 &&
	read_sizes "$S/reversed" expect.rev 4099 65537 1 &&
	cat "$S/reversed" >out && test_cmp expect.rev out
'

# first_rows N FILE: the lines of FILE's first N rows.
first_rows() {
	awk -v n="$1" "\$1 != prev { k++; prev = \$1 } k <= n" "$2"
}

test_expect_success 'limit= ends inside the bytes produced ahead' '
	first_rows 5000 expect >expect.lim &&
	test $(cut -d" " -f1 expect.lim | uniq | wc -l) = 5000 &&
	read_sizes "$S/limit=5000" expect.lim 4099 &&
	read_sizes "$S/limit=5000" expect.lim 131072 &&
	first_rows 5000 expect.rev >expect.rlim &&
	read_sizes "$S/limit=5000&reversed" expect.rlim 65537 1
'

rows() {
	sed -n "s/^cellfs_scan_rows_total{table=\"t\"} //p" "$MNT/t/.stats"
}

# A read of N bytes, then close: the scan produced that read and at most
# three more ahead (fs/scan.c's AHEAD; the last ending with the row that
# went past the end), and the bytes are the first N.
test_expect_success 'a reader that closes early: at most three reads are made ahead' '
	for n in 1 4096 65536 131072; do
		r0=$(rows) &&
		python3 - "$S/all" $n <<-\EOF &&
		import os, sys
		n = int(sys.argv[2])
		fd = os.open(sys.argv[1], os.O_RDONLY)
		b = os.read(fd, n)
		os.close(fd)
		assert b == open("expect", "rb").read()[:n], b[:80]
		EOF
		r1=$(rows) &&
		bound=$(head -c $((4 * n)) expect | cut -d" " -f1 | uniq |
			wc -l) &&
		echo "read $n: $((r1 - r0)) rows scanned, at most $((bound + 2))" &&
		test $((r1 - r0)) -le $((bound + 2)) || return 1
	done &&
	cat "$S/all" >out && test_cmp expect out
'

test_expect_success 'readers going back, and threads sharing one open file' '
	python3 - "$S/all" <<-\EOF
	import os, sys, threading
	want = open("expect", "rb").read()
	fd = os.open(sys.argv[1], os.O_RDONLY)
	# forward, back a little, back to the start, far ahead, back
	for off, n in ((0, 100000), (100000, 5000), (99000, 3000), (0, 10),
	           (300000, 131072), (200000, 7), (len(want) - 5, 100),
	           (len(want), 10), (5, 5)):
	    b = os.pread(fd, n, off)
	    assert b == want[off:off + n], (off, n, b[:80])
	errors = []
	def reader(start):
	    for k in range(40):
	        off = (start + k * 65536) % len(want)
	        b = os.pread(fd, 65536, off)
	        if b != want[off:off + 65536]:
	            errors.append((start, k))
	ts = [threading.Thread(target=reader, args=(s,))
	      for s in (0, 12345, 300000)]
	for t in ts:
	    t.start()
	for t in ts:
	    t.join()
	os.close(fd)
	assert not errors, errors
	EOF
'

test_expect_success 'two opens read at once' '
	{ cat "$S/all" >out1 & p1=$!; } &&
	{ cat "$S/reversed" >out2 & p2=$!; } &&
	cat "$S/all" >out3 &&
	wait $p1 && wait $p2 &&
	test_cmp expect out1 && test_cmp expect.rev out2 &&
	test_cmp expect out3
'

# 120000 rows of 40-byte lines (4.8 MB): more than the 2 MiB of chunks
# an open scan file holds, so a read far ahead makes the daemon drop
# chunks before it while it produces, and reads of 1 MiB (the kernel's
# most) and more are answered whole.
test_expect_success 'reads far ahead of the chunks held, and of 1 MiB' '
	mkdir "$MNT/w" &&
	printf "f\n" >"$MNT/w/.schema" &&
	awk "BEGIN { for (i = 0; i < 120000; i++) {
		printf \"put w%07d f:q@5 v%023d\\n\", i, i >\"w.batch\"
		printf \"w%07d f:q 5 v%023d\\n\", i, i >\"w.expect\" } }" &&
	test $(wc -c <w.expect) = 4800000 &&
	cat w.batch >"$MNT/w/.batch" &&
	python3 - "$MNT/w/.scan/all" <<-\EOF &&
	import os, sys
	want = open("w.expect", "rb").read()
	fd = os.open(sys.argv[1], os.O_RDONLY)
	for off, n in ((0, 1000), (3500000, 1048576), (3400000, 10),
	           (4700000, 1 << 20), (10, 2 << 20), (4799990, 100)):
	    b = os.pread(fd, n, off)
	    assert b == want[off:off + n], (off, n, len(b), b[:80])
	os.close(fd)
	EOF
	read_sizes "$MNT/w/.scan/all" w.expect 1048576 &&
	read_sizes "$MNT/w/.scan/all" w.expect 2097152 7 &&
	cat "$MNT/w/.scan/all" >out && test_cmp w.expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
