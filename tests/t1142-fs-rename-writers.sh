#!/bin/sh

test_description='cellfs: mv onto a cell open for writing, and of a cell open for writing, as rename(2) treats inodes: the open file follows the cell moved; the one replaced writes to no name'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

R="$MNT/t/r"

# scenario NAME: runs the python scenario NAME against the row $R; it
# prints what it sees, one fact a line
scenario() {
	python3 - "$R" "$1" <<-\PY
	import os, sys
	R, name = sys.argv[1] + "/", sys.argv[2]
	def put(c, v):
	    with open(R + c, "w") as f:
	        f.write(v)
	def see(c):
	    try:
	        with open(R + c) as f:
	            v = f.read()
	        return "%s=%s size %d" % (c, v, os.stat(R + c).st_size)
	    except OSError as e:
	        return "%s %s" % (c, os.strerror(e.errno))
	def writer(c, v, flags=os.O_TRUNC):
	    fd = os.open(R + c, os.O_WRONLY | flags, 0o644)
	    os.write(fd, v.encode())
	    return fd
	if name == "onto":
	    put("cf:a", "AAA")
	    put("cf:b", "BBBBB")
	    fd = writer("cf:b", "writer")
	    os.rename(R + "cf:a", R + "cf:b")
	    print(see("cf:b"), "|", see("cf:a"))
	    st = os.fstat(fd)
	    print("fstat", st.st_size, st.st_nlink)
	    os.write(fd, b"+more")
	    os.close(fd)
	    print(see("cf:b"), "|", see("cf:a"))
	elif name == "of":
	    put("cf:c", "CCC")
	    fd = writer("cf:c", "writer")
	    os.rename(R + "cf:c", R + "cf:d")
	    print(see("cf:c"), "|", os.stat(R + "cf:d").st_size)
	    os.write(fd, b"+more")
	    os.close(fd)
	    print(see("cf:d"), "|", see("cf:c"))
	elif name == "created":
	    put("cf:f", "FFFF")
	    fd = writer("cf:e", "new", os.O_CREAT | os.O_TRUNC)
	    os.rename(R + "cf:e", R + "cf:f")
	    print(see("cf:e"), "|", os.stat(R + "cf:f").st_size)
	    os.write(fd, b"er")
	    os.close(fd)
	    print(see("cf:f"), "|", see("cf:e"))
	elif name == "staged":
	    put("cf:g", "GG")
	    fd = writer("cf:g", "writer")
	    put(".tmp", "staged!")
	    os.rename(R + ".tmp", R + "cf:g")
	    print(see("cf:g"))
	    os.write(fd, b"+more")
	    os.close(fd)
	    print(see("cf:g"), "|", see(".tmp"))
	elif name == "both":
	    fh = writer("cf:h", "h-writer", os.O_CREAT | os.O_TRUNC)
	    fi = writer("cf:i", "i-writer", os.O_CREAT | os.O_TRUNC)
	    os.rename(R + "cf:h", R + "cf:i")
	    os.close(fi)
	    os.close(fh)
	    print(see("cf:i"), "|", see("cf:h"))
	PY
}

test_expect_success 'mount, a table, a row' '
	cellfs_mount &&
	mkdir "$MNT/t" "$R"
'

test_expect_success 'mv onto a cell open for writing: its writes go nowhere' '
	scenario onto >out &&
	cat >expect <<-\EOF &&
	cf:b=AAA size 3 | cf:a No such file or directory
	fstat 6 0
	cf:b=AAA size 3 | cf:a No such file or directory
	EOF
	test_cmp expect out
'

test_expect_success 'mv of a cell open for writing: the close puts at the new name' '
	scenario of >out &&
	cat >expect <<-\EOF &&
	cf:c No such file or directory | 6
	cf:d=writer+more size 11 | cf:c No such file or directory
	EOF
	test_cmp expect out
'

test_expect_success 'mv of a cell created and not closed yet: it moves, then is put' '
	scenario created >out &&
	cat >expect <<-\EOF &&
	cf:e No such file or directory | 3
	cf:f=newer size 5 | cf:e No such file or directory
	EOF
	test_cmp expect out
'

test_expect_success 'mv of a staged file onto a cell open for writing (rsync)' '
	scenario staged >out &&
	cat >expect <<-\EOF &&
	cf:g=staged! size 7
	cf:g=staged! size 7 | .tmp No such file or directory
	EOF
	test_cmp expect out
'

test_expect_success 'both open for writing: the moved one wins, at the new name' '
	scenario both >out &&
	cat >expect <<-\EOF &&
	cf:i=h-writer size 8 | cf:h No such file or directory
	EOF
	test_cmp expect out
'

test_expect_success 'the row lists only the names left, and keeps them across a remount' '
	printf "%s\n" cf:b cf:d cf:f cf:g cf:i >expect &&
	ls "$R" >out &&
	test_cmp expect out &&
	cellfs_umount &&
	cellfs_mount &&
	ls "$R" >out &&
	test_cmp expect out &&
	for c in b d f g i; do cat "$R/cf:$c" && echo; done >out &&
	printf "%s\n" AAA writer+more newer staged! h-writer >expect &&
	test_cmp expect out
'

test_done
