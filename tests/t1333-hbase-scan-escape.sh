#!/bin/sh

test_description='cellfs: the scan file escapes as names are, at every position of every length (around the 4-, 8- and 16-byte steps of the fast path), binary values, empty qualifiers and values, long keys and values, a row longer than a chunk'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# The bytes tried at each position, and the escaped form of a name made
# of byte values (SPEC section 2: A-Z a-z 0-9 - _ . , = + ~ stand for
# themselves but a leading '.'; anything else is %XX).  The batch takes
# names escaped, so in.batch and the expected lines are made from the
# same text, and the daemon's unescaping, the engine and the scan's
# escaping stand between them.
AWK_ESC='
function esc(b, n,   i, c, o) {
	o = "";
	for (i = 0; i < n; i++) {
		c = b[i];
		if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) ||
		    (c >= 48 && c <= 57) || c == 45 || c == 95 || c == 44 ||
		    c == 61 || c == 43 || c == 126 || (c == 46 && i > 0))
			o = o sprintf("%c", c);
		else
			o = o sprintf("%%%02X", c);
	}
	return n ? o : sprintf("%c%c", 39, 39);
}
BEGIN {
	ns = split("32 37 47 58 64 0 255 10 46 126 128 127 43 96 123 44 " \
		   "65 90 97 122 48 57 91 94 47 59 60 62 63 92 124 125", sp, " ");
	nl = split("1 2 3 4 5 7 8 9 12 15 16 17 24 31 32 33 47 48 64 100",
		   lens, " ");
	npl = split("65 90 97 122 48 57 45 95 46 44 61 43 126 109 55 81",
		    pl, " ");
}'

test_expect_success 'mount; a table of columns and values with a byte to escape at each position' '
	cellfs_mount &&
	mkdir "$MNT/t" &&
	printf "f VERSIONS=3\n" >"$MNT/t/.schema" &&
	LC_ALL=C awk "$AWK_ESC"'"'"'
	END {
		r = 0;
		for (li = 1; li <= nl; li++) {
			n = lens[li];
			# p == n: nothing to escape, the plain set throughout
			for (p = 0; p <= n; p++) {
				for (i = 0; i < n; i++) {
					q[i] = 97 + (i + p) % 26;
					v[i] = 65 + (i * 7 + p) % 26;
				}
				if (p == n)
					for (i = 0; i < n; i++) {
						q[i] = pl[(i + li) % npl + 1];
						v[i] = pl[(i * 5 + li) % npl + 1];
					}
				else {
					q[p] = sp[(p + li) % ns + 1];
					v[p] = sp[(p + li + 5) % ns + 1];
				}
				row = sprintf("r%05d", r++);
				ts = 1000 + p;
				printf "put %s f:%s@%d %s\n", row, esc(q, n), ts,
				       esc(v, n) >"in.batch";
				printf "%s f:%s %d %s\n", row, esc(q, n), ts,
				       esc(v, n) >"expect";
			}
		}
	}'"'"' </dev/null &&
	cat in.batch >"$MNT/t/.batch" &&
	wc -l <expect >count && echo 498 >count.want && test_cmp count.want count
'

# check DIR: DIR/.scan/all is expect, in the memstore, after flush and
# after major_compact (the engine's blocks)
check() {
	cat "$MNT/$1/.scan/all" >out && test_cmp expect out &&
	echo flush >"$MNT/$1/.ctl" &&
	cat "$MNT/$1/.scan/all" >out && test_cmp expect out &&
	echo major_compact >"$MNT/$1/.ctl" &&
	cat "$MNT/$1/.scan/all" >out && test_cmp expect out
}

test_expect_success 'qualifiers and values: every byte, every position, every length' '
	check t
'

test_expect_success 'row keys with a byte to escape at each position (order aside)' '
	mkdir "$MNT/k" &&
	printf "f\n" >"$MNT/k/.schema" &&
	LC_ALL=C awk "$AWK_ESC"'"'"'
	END {
		for (li = 1; li <= nl; li++) {
			n = lens[li];
			for (p = 0; p < n; p++) {
				for (i = 0; i < n; i++)
					k[i] = 120;
				k[p] = sp[(p * 3 + li) % ns + 1];
				printf "put %s f:q@7 v%d.%d\n", esc(k, n), n, p \
					>"in.batch";
				printf "%s f:q 7 v%d.%d\n", esc(k, n), n, p \
					>"expect";
			}
		}
	}'"'"' </dev/null &&
	cat in.batch >"$MNT/k/.batch" &&
	LC_ALL=C sort expect >expect.sorted &&
	cat "$MNT/k/.scan/all" >out && wc -l <out >count &&
	echo 478 >count.want && test_cmp count.want count &&
	LC_ALL=C sort out >out.sorted && test_cmp expect.sorted out.sorted
'

test_expect_success 'binary values: all 256 bytes, each alone, the empty value' '
	mkdir "$MNT/b" &&
	printf "f\n" >"$MNT/b/.schema" &&
	LC_ALL=C awk "$AWK_ESC"'"'"'
	END {
		for (i = 0; i < 256; i++)
			all[i] = i;
		for (i = 0; i < 256; i++)
			rev[i] = 255 - i;
		printf "put a f:all@5 %s\n", esc(all, 256) >"in.batch";
		printf "a f:all 5 %s\n", esc(all, 256) >"expect";
		printf "put a f:rev@5 %s\n", esc(rev, 256) >"in.batch";
		printf "a f:rev 5 %s\n", esc(rev, 256) >"expect";
		for (i = 0; i < 256; i++) {
			one[0] = i;
			printf "put b%03d f:x@5 %s\n", i, esc(one, 1) >"in.batch";
			printf "b%03d f:x 5 %s\n", i, esc(one, 1) >"expect";
		}
		printf "put c f:x@5 %c%c\n", 39, 39 >"in.batch";
		printf "c f:x 5 %c%c\n", 39, 39 >"expect";
	}'"'"' </dev/null &&
	cat in.batch >"$MNT/b/.batch" &&
	check b
'

test_expect_success 'empty qualifiers, alone and beside others' '
	mkdir "$MNT/e" &&
	printf "f\ng\n" >"$MNT/e/.schema" &&
	cat >in.batch <<-\EOF &&
	put r f:@10 empty
	put r f:a@10 a
	put r g:@10 %2E
	put s f:@10 '"''"'
	put %2E f:@10 %2Ex.y
	EOF
	cat in.batch >"$MNT/e/.batch" &&
	cat >expect <<-\EOF &&
	%2E f: 10 %2Ex.y
	r f: 10 empty
	r f:a 10 a
	r g: 10 %2E
	s f: 10 '"''"'
	EOF
	check e
'

test_expect_success 'a long key and a value longer than a chunk' '
	mkdir "$MNT/l" &&
	printf "f\n" >"$MNT/l/.schema" &&
	LC_ALL=C awk "$AWK_ESC"'"'"'
	END {
		for (i = 0; i < 3000; i++)
			k[i] = i % 97 == 0 ? sp[i % ns + 1] : 97 + i % 26;
		for (i = 0; i < 40000; i++)
			v[i] = i % 3 ? 97 + i % 26 : (i * 7) % 256;
		printf "put %s f:q@9 %s\n", esc(k, 3000), esc(v, 40000) \
			>"in.batch";
		printf "%s f:q 9 %s\n", esc(k, 3000), esc(v, 40000) >"expect";
	}'"'"' </dev/null &&
	cat in.batch >"$MNT/l/.batch" &&
	check l
'

test_expect_success 'a row of 6000 cells: its lines run over several chunks' '
	mkdir "$MNT/w" &&
	printf "f\n" >"$MNT/w/.schema" &&
	awk "BEGIN {
		for (i = 0; i < 6000; i++) {
			printf \"put wide%%2Frow f:q%05d@%d v%%20%d\\n\", i,
				1000 + i % 3, i >\"in.batch\";
			printf \"wide%%2Frow f:q%05d %d v%%20%d\\n\", i,
				1000 + i % 3, i >\"expect\";
		}
		printf \"put x f:q@1 last\\n\" >\"in.batch\";
		printf \"x f:q 1 last\\n\" >\"expect\";
	}" &&
	cat in.batch >"$MNT/w/.batch" &&
	check w
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
