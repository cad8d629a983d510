#!/bin/sh

test_description='cellfs: fstat of a cell open for writing shows what was written through the fd so far; a stat after the close shows the committed value'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

# fstat_writes FILE FLAGS WORD...: opens FILE with FLAGS (python os.O_*
# names joined by |), writes each WORD in turn and prints the fstat size
# after each, one a line; "-" as a WORD prints the size without writing.
# The last line is the size stat(2) of the path shows before the close,
# made 10 ms later than the last fstat (so a version put at the close is
# not the time an fstat showed).
fstat_writes() {
	python3 - "$@" <<-\PY
	import os, sys, time
	path, flags = sys.argv[1], sys.argv[2]
	fl = 0
	for f in flags.split("|"):
	    fl |= getattr(os, f)
	fd = os.open(path, fl, 0o644)
	for w in sys.argv[3:]:
	    if w != "-":
	        os.write(fd, w.encode())
	    print(os.fstat(fd).st_size)
	print(os.stat(path).st_size)
	time.sleep(0.01)
	os.close(fd)
	PY
}

# version FILE: the version (ms) of the one version of FILE, from .versions
version() {
	ls "$R/.versions" | sed -n "s/^$1@//p"
}

# mtime FILE: its modification time in milliseconds
mtime() {
	stat -c %.3Y "$1" | tr -d .
}

test_expect_success 'mount, a table with one version a cell, a row' '
	cellfs_mount max_value=100 &&
	mkdir "$MNT/t" "$R" &&
	printf 0123456789abcdef >"$R/cf:a" &&
	test "$(stat -c %s "$R/cf:a")" = 16
'

test_expect_success 'O_TRUNC of an existing cell: fstat follows the writes' '
	fstat_writes "$R/cf:a" "O_WRONLY|O_TRUNC" - ab cdef >out &&
	printf "0\n2\n6\n6\n" >expect &&
	test_cmp expect out &&
	test "$(stat -c %s "$R/cf:a")" = 6 &&
	test "$(cat "$R/cf:a")" = abcdef
'

test_expect_success 'a stat right after the close shows the committed version' '
	fstat_writes "$R/cf:a" "O_WRONLY|O_TRUNC" 12345678 >out &&
	printf "8\n8\n" >expect &&
	test_cmp expect out &&
	test "$(stat -c %s "$R/cf:a")" = 8 &&
	test "$(mtime "$R/cf:a")" = "$(version cf:a)" &&
	fstat_writes "$R/cf:a" "O_WRONLY|O_TRUNC" x >out &&
	printf "1\n1\n" >expect &&
	test_cmp expect out &&
	test "$(stat -c %s "$R/cf:a")" = 1 &&
	test "$(mtime "$R/cf:a")" = "$(version cf:a)"
'

test_expect_success 'without O_TRUNC: writes over the old value, past its end' '
	printf 0123456789 >"$R/cf:b" &&
	fstat_writes "$R/cf:b" "O_WRONLY" ab - >out &&
	printf "10\n10\n10\n" >expect &&
	test_cmp expect out &&
	test "$(cat "$R/cf:b")" = ab23456789 &&
	python3 -c "
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b\"xyz\", 12)
print(os.fstat(fd).st_size)
os.close(fd)
" "$R/cf:b" >out &&
	echo 15 >expect &&
	test_cmp expect out &&
	test "$(stat -c %s "$R/cf:b")" = 15
'

test_expect_success 'O_APPEND: the value with the appended bytes after it' '
	printf abc >"$R/cf:c" &&
	fstat_writes "$R/cf:c" "O_WRONLY|O_APPEND" de fgh >out &&
	printf "5\n8\n8\n" >expect &&
	test_cmp expect out &&
	test "$(cat "$R/cf:c")" = abcdefgh
'

test_expect_success 'a time set on the fd (cp -p) shows before the close' '
	python3 -c "
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b\"timed\")
os.utime(fd, ns=(1700000000123000000, 1700000000123000000))
st = os.fstat(fd)
print(st.st_size, st.st_mtime_ns // 1000000)
os.close(fd)
" "$R/cf:d" >out &&
	echo "5 1700000000123" >expect &&
	test_cmp expect out &&
	test "$(mtime "$R/cf:d")" = 1700000000123 &&
	test "$(stat -c %s "$R/cf:d")" = 5
'

test_expect_success 'a refused write: fstat and stat show the committed value' '
	python3 -c "
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b\"ab\")
try:
    os.write(fd, b\"x\" * 200)
except OSError as e:
    print(e.errno == 27)
print(os.fstat(fd).st_size)
try:
    os.close(fd)
except OSError as e:
    print(e.errno == 27)
" "$R/cf:a" >out &&
	printf "True\n1\nTrue\n" >expect &&
	test_cmp expect out &&
	test "$(cat "$R/cf:a")" = x
'

test_done
