# lib-hbase.sh: helpers of the tests that run HBase's client-test
# scenarios through the mount (t1350-t1352), sourced after lib-cellfs.sh.

# table NAME SCHEMA: makes table NAME with the schema lines SCHEMA
table() {
	mkdir "$MNT/$1" &&
	printf "$2" >"$MNT/$1/.schema"
}

# batch TABLE LINES: one write(2) of LINES (printf format) to TABLE/.batch
batch() {
	printf "$2" >"$MNT/$1/.batch"
}

# ctl TABLE WORD: flush, major_compact ...
ctl() {
	echo "$2" >"$MNT/$1/.ctl"
}

# has PATH VALUE: the cell PATH reads VALUE exactly (file "expect" is
# left alone)
has() {
	printf "%s" "$2" >expect.one &&
	cat "$1" >out.one &&
	test_cmp expect.one out.one
}

# missing PATH: a read of PATH is ENOENT
missing() {
	echo ENOENT >expect.one &&
	errno_of read "$1" >out.one &&
	test_cmp expect.one out.one
}

# lines CMD...: CMD's output equals the lines of file "expect"
lines() {
	"$@" >out &&
	test_cmp expect out
}

# scan TABLE QUERY
scan() {
	cat "$MNT/$1/.scan/$2"
}
