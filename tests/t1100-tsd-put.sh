#!/bin/sh

test_description='cellfs: points written through MNT/tsd/ land in tsdb and tsdb-uid byte for byte as OpenTSDB stores them; each bad line is refused on its own (the put rule of OpenTSDB); concurrent writers; kill -9'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# hex FILE: the bytes of FILE as one string of lower-case hex digits
hex() {
	od -An -v -tx1 "$1" | tr -d " \n" && echo
}

# cells DIR: "NAME HEX" for every cell of a row directory, in scan order
cells() {
	for c in $(ls -U "$1"); do
		echo "$c $(hex "$1/$c")" || return 1
	done
}

# put_one FILE: FILE's lines appended to MNT/tsd/put in one write()
# (cat writes up to 128 KiB at once; bash's printf writes line by line)
put_one() {
	cat "$1" >>"$MNT/tsd/put"
}

test_expect_success 'mount; split.py writes each argument with one write()' '
	cat >split.py <<-\EOF &&
	import os, sys
	fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
	for chunk in sys.argv[2:]:
	    try:
	        os.write(fd, chunk.encode().decode("unicode_escape").encode())
	        print("OK")
	    except OSError as e:
	        print(os.strerror(e.errno))
	os.close(fd)
	EOF
	cellfs_mount
'

test_expect_success 'nothing is created before the first write' '
	ls "$MNT" >out && echo tsd >expect && test_cmp expect out &&
	ls "$MNT/tsd/metrics" >out && test_must_be_empty out
'

# Seed 000, figure 4: mysql.bytes_sent 476 at 1292148123 for host ubuntu.
# In a fresh store every UID is 1: metric 00 00 01, base hour 1292148000 =
# 4D 04 9D 20 (0x4D is "M"), host 00 00 01, ubuntu 00 00 01; qualifier
# 123 << 4 | 1 (two bytes of integer) = 07 B1; value 476 = 01 DC.
ROW="%00%00%01M%04%9D%20%00%00%01%00%00%01"

test_expect_success 'the seed example: row key, qualifier and value bytes' '
	echo "mysql.bytes_sent 1292148123 476 host=ubuntu" >>"$MNT/tsd/put" &&
	ls "$MNT/tsdb/@" >out && echo "$ROW" >expect && test_cmp expect out &&
	ls "$MNT/tsdb/$ROW" >out && echo "t:%07%B1" >expect &&
	test_cmp expect out &&
	echo 01dc >expect && hex "$MNT/tsdb/$ROW/t:%07%B1" >out &&
	test_cmp expect out &&
	cat "$MNT/tsd/metrics/mysql.bytes_sent" >out &&
	echo "mysql.bytes_sent 1292148123 476 host=ubuntu" >expect &&
	test_cmp expect out
'

test_expect_success 'the UID rows: forward, reverse and the counter row \x00' '
	ls "$MNT/tsdb-uid/@" >out &&
	cat >expect <<-\EOF &&
	%00
	%00%00%01
	host
	mysql.bytes_sent
	ubuntu
	EOF
	test_cmp expect out &&
	U=$MNT/tsdb-uid &&
	cells "$U/mysql.bytes_sent" >out &&
	echo "id:metrics 000001" >expect && test_cmp expect out &&
	cells "$U/host" >out &&
	echo "id:tagk 000001" >expect && test_cmp expect out &&
	cells "$U/ubuntu" >out &&
	echo "id:tagv 000001" >expect && test_cmp expect out &&
	cat >expect <<-\EOF &&
	name:metrics mysql.bytes_sent
	name:tagk host
	name:tagv ubuntu
	EOF
	for c in $(ls "$U/%00%00%01"); do
		echo "$c $(cat "$U/%00%00%01/$c")" || return 1
	done >out &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	id:metrics 0000000000000001
	id:tagk 0000000000000001
	id:tagv 0000000000000001
	EOF
	cells "$U/%00" >out && test_cmp expect out &&
	echo 000001 >expect && test_cmp expect "$MNT/tsd/tagk/host" &&
	test_cmp expect "$MNT/tsd/tagv/ubuntu"
'

test_expect_success 'a second metric takes the next UID; known tags keep theirs' '
	echo "mysql.bytes_received 1292148123 1 host=ubuntu" >>"$MNT/tsd/put" &&
	echo 000002 >expect && hex "$MNT/tsdb-uid/mysql.bytes_received/id:metrics" >out &&
	test_cmp expect out &&
	echo 0000000000000002 >expect && hex "$MNT/tsdb-uid/%00/id:metrics" >out &&
	test_cmp expect out &&
	echo 0000000000000001 >expect && hex "$MNT/tsdb-uid/%00/id:tagv" >out &&
	test_cmp expect out &&
	printf mysql.bytes_received >expect &&
	test_cmp expect "$MNT/tsdb-uid/%00%00%02/name:metrics"
'

# A future hour (never finished, so never compacted while we look):
# 4000000000 - 4000000000 % 3600 = 3999999600 = EE 6B 26 70 ("k" and "p"
# stand for themselves, "&" is %26).  Metric w.m gets UID 3.
WROW="%00%00%03%EEk%26p%00%00%01%00%00%01"

test_expect_success 'integer widths 1/2/4/8, floats 4 when exact else 8, milliseconds' '
	cat >in <<-\EOF &&
	w.m 3999999600 1 host=ubuntu
	w.m 3999999601 -128 host=ubuntu
	w.m 3999999602 128 host=ubuntu
	w.m 3999999603 -32768 host=ubuntu
	w.m 3999999604 32768 host=ubuntu
	w.m 3999999605 -2147483648 host=ubuntu
	w.m 3999999606 2147483648 host=ubuntu
	w.m 3999999607 9223372036854775807 host=ubuntu
	w.m 3999999608 -9223372036854775808 host=ubuntu
	w.m 3999999609 0.5 host=ubuntu
	w.m 3999999610 0.1 host=ubuntu
	w.m 3999999611 1.0 host=ubuntu
	w.m 3999999612 1e10 host=ubuntu
	w.m 3999999613 3.4e39 host=ubuntu
	w.m 3999999614500 7 host=ubuntu
	w.m 3999999615.250 2.5 host=ubuntu
	w.m 3999999616 -1 host=ubuntu
	EOF
	put_one in &&
	ls "$MNT/tsdb/@" >out && grep -x "$WROW" out &&
	cat >expect <<-\EOF &&
	t:%00%00 01
	t:%00%10 80
	t:%00%21 0080
	t:%001 8000
	t:%00C 00008000
	t:%00S 80000000
	t:%00g 0000000080000000
	t:%00w 7fffffffffffffff
	t:%00%87 8000000000000000
	t:%00%9B 3f000000
	t:%00%AF 3fb999999999999a
	t:%00%BB 3f800000
	t:%00%CB 501502f9
	t:%00%DF 4823fbc05cb80bcc
	t:%01%00 ff
	t:%F0%0E%29%00 07
	t:%F0%0E%E4%8B 40200000
	EOF
	cells "$MNT/tsdb/$WROW" >out && test_cmp expect out &&
	cat >expect <<-\EOF &&
	w.m 3999999600 1 host=ubuntu
	w.m 3999999601 -128 host=ubuntu
	w.m 3999999602 128 host=ubuntu
	w.m 3999999603 -32768 host=ubuntu
	w.m 3999999604 32768 host=ubuntu
	w.m 3999999605 -2147483648 host=ubuntu
	w.m 3999999606 2147483648 host=ubuntu
	w.m 3999999607 9223372036854775807 host=ubuntu
	w.m 3999999608 -9223372036854775808 host=ubuntu
	w.m 3999999609 0.5 host=ubuntu
	w.m 3999999610 0.1 host=ubuntu
	w.m 3999999611 1.0 host=ubuntu
	w.m 3999999612 1.0E10 host=ubuntu
	w.m 3999999613 3.4E39 host=ubuntu
	w.m 3999999614500 7 host=ubuntu
	w.m 3999999615250 2.5 host=ubuntu
	w.m 3999999616 -1 host=ubuntu
	EOF
	cat "$MNT/tsd/metrics/w.m" >out && test_cmp expect out &&
	cells "$MNT/tsdb/$WROW" >out && test $(wc -l <out) = 17
'

test_expect_success 'the same series at the same time again: the newest write wins' '
	echo "w.m 3999999616 5 host=ubuntu" >>"$MNT/tsd/put" &&
	echo "t:%01%00 05" >expect &&
	cells "$MNT/tsdb/$WROW" | grep "^t:%01%00 " >out && test_cmp expect out &&
	tail -1 "$MNT/tsd/metrics/w.m" >out &&
	echo "w.m 3999999616 5 host=ubuntu" >expect && test_cmp expect out
'

# One write giving a time twice: its two cells would share a version, so
# the write keeps only the later line's (OpenTSDB's fix_duplicates keeps
# the latest written), whatever the widths, kinds (int, float) and units
# (s, ms) of the two.
test_expect_success 'one write giving a time twice: the later line wins, one cell a time' '
	cat >in <<-\EOF &&
	w.m 3999999620 100 host=ubuntu
	w.m 3999999620 200 host=ubuntu
	w.m 3999999621 1.5 host=ubuntu
	w.m 3999999621 7 host=ubuntu
	w.m 3999999622 7 host=ubuntu
	w.m 3999999622 70000 host=ubuntu
	w.m 3999999622 0.25 host=ubuntu
	w.m 3999999623 5 host=ubuntu
	w.m 3999999623000 6 host=ubuntu
	w.m 3999999624000 8 host=ubuntu
	w.m 3999999624 9 host=ubuntu
	w.m 3999999625500 300 host=ubuntu
	w.m 3999999625500 1 host=ubuntu
	w.m 3999999626 1 host=ubuntu
	w.m 3999999626 2 host=x
	w.m 3999999627 2 host=ubuntu
	w.m 3999999627 1 host=ubuntu
	w.m 3999999627000 3 host=ubuntu
	EOF
	put_one in &&
	cat >expect <<-\EOF &&
	t:%01A 00c8
	t:%01P 07
	t:%01k 3e800000
	t:%01%80 09
	t:%01%A0 01
	t:%F0%16v%00 06
	t:%F0%18%E7%00 01
	t:%F0%1A%5E%00 03
	EOF
	: the cells of the lines above: 20 s, 21, 22, 24, 26, 23.000 ms, 25.500, 27.000 &&
	cells "$MNT/tsdb/$WROW" | grep "^t:%01[^%]\|^t:%01%[89AB]\|^t:%F0%1" >out &&
	test_cmp expect out &&
	cat >expect <<-\EOF &&
	w.m 3999999620 200 host=ubuntu
	w.m 3999999621 7 host=ubuntu
	w.m 3999999622 0.25 host=ubuntu
	w.m 3999999623000 6 host=ubuntu
	w.m 3999999624 9 host=ubuntu
	w.m 3999999625500 1 host=ubuntu
	w.m 3999999626 1 host=ubuntu
	w.m 3999999627000 3 host=ubuntu
	EOF
	grep "host=ubuntu" "$MNT/tsd/metrics/w.m" | tail -8 >out &&
	test_cmp expect out &&
	grep "^w.m 3999999626 2 host=x$" "$MNT/tsd/metrics/w.m" &&
	: a query, from the recent points, says the same: 7 prints as a \
		float before the float 0.25, as OpenTSDB aggregates &&
	cat "$MNT/tsd/q/start=3999999620&end=3999999628&ms&m=sum:w.m{host=ubuntu}" >out &&
	cat >expect <<-\EOF &&
	w.m 3999999620000 200 host=ubuntu
	w.m 3999999621000 7.0 host=ubuntu
	w.m 3999999622000 0.25 host=ubuntu
	w.m 3999999623000 6 host=ubuntu
	w.m 3999999624000 9 host=ubuntu
	w.m 3999999625500 1 host=ubuntu
	w.m 3999999626000 1 host=ubuntu
	w.m 3999999627000 3 host=ubuntu
	EOF
	test_cmp expect out
'

# Compaction (docs/tsd_format.md): once an hour is over (plus 60 s), a
# background pass every 60 s, and any dump or query meeting the row,
# merge its cells into one.  A fresh mount restarts the pass clock, so
# the raw cells below are looked at long before it could run.
CROW="%00%00%04M%04%9D%20%00%00%01%00%00%01"

test_expect_success 'a finished hour is compacted into one cell by the first read' '
	cellfs_umount && cellfs_mount &&
	cat >in <<-\EOF &&
	c.m 1292148002500 3 host=ubuntu
	c.m 1292148000 1 host=ubuntu
	c.m 1292148001 2 host=ubuntu
	c.m 1292151599 300 host=ubuntu
	EOF
	put_one in &&
	cat >expect <<-\EOF &&
	t:%00%00 01
	t:%00%10 02
	t:%E0%F1 012c
	t:%F0%02q%00 03
	EOF
	cells "$MNT/tsdb/$CROW" >out && test_cmp expect out &&
	cat >expect <<-\EOF &&
	c.m 1292148000 1 host=ubuntu
	c.m 1292148001 2 host=ubuntu
	c.m 1292148002500 3 host=ubuntu
	c.m 1292151599 300 host=ubuntu
	EOF
	cat "$MNT/tsd/metrics/c.m" >out && test_cmp expect out &&
	echo "t:%00%00%00%10%F0%02q%00%E0%F1 010203012c01" >expect &&
	cells "$MNT/tsdb/$CROW" >out && test_cmp expect out &&
	grep "^cellfs_tsd_rows_compacted_total 1$" "$MNT/.stats" &&
	cat >expect <<-\EOF &&
	c.m 1292148000 1 host=ubuntu
	c.m 1292148001 2 host=ubuntu
	c.m 1292148002500 3 host=ubuntu
	c.m 1292151599 300 host=ubuntu
	EOF
	cat "$MNT/tsd/metrics/c.m" >out && test_cmp expect out &&
	printf "c.m 1292148000 1 host=ubuntu\nc.m 1292148001 2 host=ubuntu\n" >expect &&
	cat "$MNT/tsd/q/start=1292148000&end=1292148001&m=sum:c.m" >out &&
	test_cmp expect out
'

test_expect_success 'a late point after compaction: read merged, compacted again' '
	echo "c.m 1292148001500 9 host=ubuntu" >>"$MNT/tsd/put" &&
	cells "$MNT/tsdb/$CROW" >out && test $(wc -l <out) = 2 &&
	cat >expect <<-\EOF &&
	c.m 1292148000 1 host=ubuntu
	c.m 1292148001 2 host=ubuntu
	c.m 1292148001500 9 host=ubuntu
	c.m 1292148002500 3 host=ubuntu
	c.m 1292151599 300 host=ubuntu
	EOF
	cat "$MNT/tsd/metrics/c.m" >dump1 && test_cmp expect dump1 &&
	echo "t:%00%00%00%10%F0%01w%00%F0%02q%00%E0%F1 01020903012c01" >expect &&
	cells "$MNT/tsdb/$CROW" >out && test_cmp expect out &&
	cat "$MNT/tsd/metrics/c.m" >dump2 && test_cmp dump1 dump2
'

# tstat NAME: the value of cellfs_tsd_NAME in MNT/.stats
tstat() {
	sed -n "s/^cellfs_tsd_$1 //p" "$MNT/.stats"
}

# bad LINE REASON: a write of a good line, then LINE, then another good
# line fails with EINVAL; both good lines are stored; .log names line 2,
# its text and REASON, then sums the write up; .stats counts the line.
bad() {
	rej=$(tstat lines_rejected_total) &&
	python3 "$SHARNESS_TRASH_DIRECTORY/split.py" "$MNT/tsd/put" \
		"ok.m 1292148000 1 host=a\\n$1\\nok.m 1292148001 2 host=a\\n" >out &&
	echo "Invalid argument" >expect && test_cmp expect out &&
	cat >expect <<-EOF &&
	warn write tsd/put: line 2 "$1": $2: Invalid argument
	warn write tsd/put: 1 line refused, 2 points stored: Invalid argument
	EOF
	tail -2 "$MNT/.log" | cut -d" " -f2- >out && test_cmp expect out &&
	echo $((rej + 1)) >expect && tstat lines_rejected_total >out &&
	test_cmp expect out &&
	printf "ok.m 1292148000 1 host=a\nok.m 1292148001 2 host=a\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/ok.m"
}

test_expect_success 'bad lines: each OpenTSDB validation; the good lines of the write are stored' '
	bad "bad!name 1292148000 1 host=a" "invalid metric name: bad!name" &&
	bad "m.x 1292148000 1 ho\$t=a" "invalid tag name: ho\$t" &&
	bad "m.x 1292148000 1 host=a:b" "invalid tag value: a:b" &&
	bad "m.x 1292148000 1 host=" "invalid tag: host=" &&
	bad "m.x 1292148000 1 =a" "invalid tag: =a" &&
	bad "m.x 1292148000 1 hosta" "invalid tag: hosta" &&
	bad "m.x 1292148000 1" "need at least one tag" &&
	bad "m.x 1292148000 1 a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1" \
		"too many tags: more than 8" &&
	bad "m.x 1292148000 1 host=a host=b" "duplicate tag: host=b" &&
	bad "m.x 12921x8000 1 host=a" "invalid timestamp: 12921x8000" &&
	bad "m.x 0 1 host=a" "invalid timestamp: 0" &&
	bad "m.x -5 1 host=a" "invalid timestamp: -5" &&
	bad "m.x 12921480000000 1 host=a" "bad timestamp: 12921480000000" &&
	bad "m.x 1292148000.5 1 host=a" "invalid timestamp: 1292148000.5" &&
	bad "m.x 1292148000 NaN host=a" "invalid value: NaN" &&
	bad "m.x 1292148000 nan host=a" "invalid value: nan" &&
	bad "m.x 1292148000 -Infinity host=a" "invalid value: -Infinity" &&
	bad "m.x 1292148000 1.5x host=a" "invalid value: 1.5x" &&
	bad "m.x 1292148000 99999999999999999999 host=a" \
		"invalid value: 99999999999999999999" &&
	bad "m.x 1292148000 host=a" "invalid value: host=a" &&
	bad "m.x 1292148000" "not enough arguments (need 4, got 2)" &&
	bad "put" "not enough arguments (need 4, got 0)" &&
	ls "$MNT/tsd/metrics" >out && ! grep -e "^m.x$" out
'

test_expect_success 'collector output with lines missing their tags: every good line kept' '
	w=$(tstat writes_rejected_total) && p=$(tstat points_total) &&
	cat >in <<-\EOF &&
	coll.a 1292148000 1 host=a
	coll.a 1292148001 2
	coll.a 1292148002 3 host=a
	coll.b 1292148000 4
	coll.a 1292148003 5 host=a
	EOF
	! cat in 2>err >>"$MNT/tsd/put" &&
	grep "Invalid argument" err &&
	cat >expect <<-\EOF &&
	warn write tsd/put: line 2 "coll.a 1292148001 2": need at least one tag: Invalid argument
	warn write tsd/put: line 4 "coll.b 1292148000 4": need at least one tag: Invalid argument
	warn write tsd/put: 2 lines refused, 3 points stored: Invalid argument
	EOF
	tail -3 "$MNT/.log" | cut -d" " -f2- >out && test_cmp expect out &&
	cat >expect <<-\EOF &&
	coll.a 1292148000 1 host=a
	coll.a 1292148002 3 host=a
	coll.a 1292148003 5 host=a
	EOF
	test_cmp expect "$MNT/tsd/metrics/coll.a" &&
	echo $((w + 1)) >expect && tstat writes_rejected_total >out &&
	test_cmp expect out &&
	echo $((p + 3)) >expect && tstat points_total >out &&
	test_cmp expect out &&
	echo ENOENT >expect &&
	errno_of stat "$MNT/tsd/metrics/coll.b" >out && test_cmp expect out
'

test_expect_success 'a line over 64 KiB is refused, its rest skipped, the lines around it kept' '
	{
		echo "long.m 1292148000 1 host=a" &&
		printf "long.m 1292148001 2 host=" &&
		head -c 70000 /dev/zero | tr "\\0" a && echo &&
		echo "long.m 1292148002 3 host=a"
	} >in &&
	! cat in >>"$MNT/tsd/put" &&
	grep "tsd/put: line 2 \"long.m 1292148001 2 host=aaaa" "$MNT/.log" |
		tail -1 | sed "s/^[^ ]* //; s/aaa*\.\.\./A.../" >out &&
	echo "warn write tsd/put: line 2 \"long.m 1292148001 2 host=A...\": line too long (over 64 KiB): Invalid argument" >expect &&
	test_cmp expect out &&
	printf "long.m 1292148000 1 host=a\nlong.m 1292148002 3 host=a\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/long.m"
'

test_expect_success 'the same tag twice with the same value is one tag; blank lines and put are fine' '
	printf "\nput d.m 1292148000 1 host=a host=a\n\n" >in && put_one in &&
	echo "d.m 1292148000 1 host=a" >expect &&
	test_cmp expect "$MNT/tsd/metrics/d.m"
'

test_expect_success 'line numbers count from the open of the file; the text tells echo >> apart' '
	python3 split.py "$MNT/tsd/put" "n.m 1292148000 1 host=a\\n" \
		"n.m 1292148001 2 host=a\\nn.m 1292148002 x host=a\\n" \
		"n.m 1292148003 3 host=a\\n" >out &&
	printf "OK\nInvalid argument\nOK\n" >expect && test_cmp expect out &&
	echo "warn write tsd/put: line 3 \"n.m 1292148002 x host=a\": invalid value: x: Invalid argument" >expect &&
	grep "tsd/put: line 3" "$MNT/.log" | tail -1 | cut -d" " -f2- >out &&
	test_cmp expect out &&
	printf "n.m 1292148000 1 host=a\nn.m 1292148001 2 host=a\nn.m 1292148003 3 host=a\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/n.m" &&
	! echo "n.m 1292148004 y host=a" >>"$MNT/tsd/put" &&
	echo "warn write tsd/put: line 1 \"n.m 1292148004 y host=a\": invalid value: y: Invalid argument" >expect &&
	tail -2 "$MNT/.log" | head -1 | cut -d" " -f2- >out &&
	test_cmp expect out
'

test_expect_success 'a line split across writes; the last line stored at close' '
	python3 split.py "$MNT/tsd/put" "s.m 12921" "48000 5 ho" "st=a\\ns.m 1292148001 6" \
		" host=a\\ns.m 1292148002 7 host=a" >out &&
	printf "OK\nOK\nOK\nOK\n" >expect && test_cmp expect out &&
	cat >expect <<-\EOF &&
	s.m 1292148000 5 host=a
	s.m 1292148001 6 host=a
	s.m 1292148002 7 host=a
	EOF
	test_cmp expect "$MNT/tsd/metrics/s.m" &&
	{ printf "s.m 1292148003 "; printf "8 host=a\n"; } >>"$MNT/tsd/put" &&
	tail -1 "$MNT/tsd/metrics/s.m" >out &&
	echo "s.m 1292148003 8 host=a" >expect && test_cmp expect out
'

test_expect_success 'a write with a refused line keeps its good lines and its unfinished last line' '
	python3 split.py "$MNT/tsd/put" "k.m 1292148000 1 host=a\\nk.m 129214800" \
		"1 2 host=a\\nk.m x 3 host=a\\nk.m 1292148" \
		"003 4 host=a\\nk.m 1292148004 5 host=a\\n" >out &&
	printf "OK\nInvalid argument\nOK\n" >expect && test_cmp expect out &&
	printf "k.m 1292148000 1 host=a\nk.m 1292148001 2 host=a\nk.m 1292148003 4 host=a\nk.m 1292148004 5 host=a\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/k.m"
'

test_expect_success 'MNT/tsd/metrics/M: append without the metric name, dump' '
	echo "1292148000 5 host=b" >>"$MNT/tsd/metrics/app.m" &&
	printf "1292148060 6 host=b dc=x\n1292148001500 7.5 host=b\n" >in &&
	cat in >>"$MNT/tsd/metrics/app.m" &&
	cat >expect <<-\EOF &&
	app.m 1292148000 5 host=b
	app.m 1292148001500 7.5 host=b
	app.m 1292148060 6 dc=x host=b
	EOF
	cat "$MNT/tsd/metrics/app.m" >out && test_cmp expect out &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/metrics/app.m" "app.m 1292148000 5 host=b" >out &&
	test_cmp expect out &&
	errno_of write "$MNT/tsd/metrics/bad!m" "1292148000 5 host=b" >out &&
	test_cmp expect out &&
	echo ENOENT >expect &&
	errno_of read "$MNT/tsd/metrics/no.such" >out && test_cmp expect out
'

test_expect_success 'MNT/tsd/metrics/M: the same rule, each bad line refused on its own' '
	printf "1292148000 8 host=b\n1292148001 x host=b\n1292148002 9\n1292148003 9 host=b\n" >in &&
	! cat in >>"$MNT/tsd/metrics/app2.m" &&
	cat >expect <<-\EOF &&
	warn write tsd/metrics/app2.m: line 2 "1292148001 x host=b": invalid value: x: Invalid argument
	warn write tsd/metrics/app2.m: line 3 "1292148002 9": need at least one tag: Invalid argument
	warn write tsd/metrics/app2.m: 2 lines refused, 2 points stored: Invalid argument
	EOF
	tail -3 "$MNT/.log" | cut -d" " -f2- >out && test_cmp expect out &&
	printf "app2.m 1292148000 8 host=b\napp2.m 1292148003 9 host=b\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/app2.m"
'

test_expect_success 'ls of metrics/, tagk/ and tagv/' '
	ls "$MNT/tsd/metrics" >out &&
	cat >expect <<-\EOF &&
	app.m
	app2.m
	c.m
	coll.a
	d.m
	k.m
	long.m
	mysql.bytes_received
	mysql.bytes_sent
	n.m
	ok.m
	s.m
	w.m
	EOF
	test_cmp expect out &&
	ls "$MNT/tsd/tagk" >out && printf "dc\nhost\n" >expect &&
	test_cmp expect out &&
	ls "$MNT/tsd/tagv" >out && printf "a\nb\nubuntu\nx\n" >expect &&
	test_cmp expect out
'

test_expect_success 'names beyond ASCII are escaped in listings (SPEC section 2); refused operations' '
	echo "métrique.a/b 1292148000 1 hôte=é" >>"$MNT/tsd/put" &&
	ls "$MNT/tsd/metrics" >out && grep -x "m%C3%A9trique.a%2Fb" out &&
	ls "$MNT/tsd/tagk" >out && grep -x "h%C3%B4te" out &&
	ls "$MNT/tsd/tagv" >out && grep -x "%C3%A9" out &&
	echo "1292148001 2 hôte=é" >>"$MNT/tsd/metrics/m%C3%A9trique.a%2Fb" &&
	printf "métrique.a/b 1292148000 1 hôte=é\nmétrique.a/b 1292148001 2 hôte=é\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/m%C3%A9trique.a%2Fb" &&
	echo EINVAL >expect &&
	errno_of stat "$MNT/tsd/metrics/m%c3%A9trique.a%2Fb" >out && test_cmp expect out &&
	errno_of read "$MNT/tsd/put" >out && test_cmp expect out &&
	echo EPERM >expect &&
	errno_of unlink "$MNT/tsd/metrics/m%C3%A9trique.a%2Fb" >out && test_cmp expect out &&
	errno_of mkdir "$MNT/tsd/metrics/x" >out && test_cmp expect out &&
	errno_of write "$MNT/tsd/tagk/x" 1 >out && test_cmp expect out
'

test_expect_success 'concurrent collectors: 4 writers, exact counts and sums, one UID per raced name' '
	cat >coll.py <<-\EOF &&
	import os, sys
	w = int(sys.argv[2])
	fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
	for k in range(30):
	    os.write(fd, b"race.m%d 1292148000 %d host=r%d w=w%d\n" % (k, w, k, w))
	for j in range(0, 3000, 5):
	    os.write(fd, b"".join(b"coll.m %d %d w=w%d\n" % (1292140800 + i, i, w)
	                          for i in range(j, j + 5)))
	os.close(fd)
	EOF
	pids= &&
	for w in 0 1 2 3; do
		python3 coll.py "$MNT/tsd/put" $w &
		pids="$pids $!"
	done &&
	for p in $pids; do
		wait $p || return 1
	done &&
	cat "$MNT/tsd/metrics/coll.m" >dump &&
	test $(wc -l <dump) = 12000 &&
	for w in 0 1 2 3; do
		grep -c " w=w$w\$" dump || return 1
	done >out &&
	printf "3000\n3000\n3000\n3000\n" >expect && test_cmp expect out &&
	awk "{ s += \$3 } END { print s }" dump >out &&
	echo 17994000 >expect && test_cmp expect out &&
	cat "$MNT/tsd/q/start=1292140800&end=1292143799&m=sum:coll.m" >q &&
	test $(wc -l <q) = 3000 && head -1 q >out &&
	echo "coll.m 1292140800 0" >expect && test_cmp expect out &&
	tail -1 q >out && echo "coll.m 1292143799 11996" >expect &&
	test_cmp expect out &&
	cat >uids.py <<-\EOF &&
	import os, sys
	def esc(b):
	    ok = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.,=+~"
	    return "".join(chr(c) if c in ok and not (i == 0 and c in b".@")
	                   else "%%%02X" % c for i, c in enumerate(b))
	u = sys.argv[1] + "/tsdb-uid"
	for kind, names in (("metrics", ["race.m%d" % k for k in range(30)]),
	                    ("tagv", ["r%d" % k for k in range(30)])):
	    seen = set()
	    for n in names:
	        uid = open("%s/%s/id:%s" % (u, n, kind), "rb").read()
	        assert len(uid) == 3 and uid not in seen, (n, uid)
	        seen.add(uid)
	        back = open("%s/%s/name:%s" % (u, esc(uid), kind)).read()
	        assert back == n, (n, back)
	print("ok")
	EOF
	python3 uids.py "$MNT" >out && echo ok >expect && test_cmp expect out &&
	for k in 0 7 29; do
		sort "$MNT/tsd/metrics/race.m$k" >out &&
		printf "race.m$k 1292148000 %d host=r$k w=w%d\n" 0 0 1 1 2 2 3 3 >expect &&
		test_cmp expect out || return 1
	done
'

test_expect_success 'kill -9 right after acknowledged puts: every point there after remount' '
	awk "BEGIN { for (i = 0; i < 500; i++)
		printf \"crash.m%d %d %d host=h\n\", i % 3, 1292148000 + i, i }" >in &&
	put_one in &&
	echo "crash.new 3999999600 42 host=new" >>"$MNT/tsd/put" &&
	echo "3999999601 43 host=new" >>"$MNT/tsd/metrics/crash.new" &&
	cellfs_kill9 && ! cellfs_is_mounted &&
	cellfs_mount &&
	for m in 0 1 2; do
		grep "^crash.m$m " in >expect &&
		cat "$MNT/tsd/metrics/crash.m$m" >out &&
		test_cmp expect out || return 1
	done &&
	printf "crash.new 3999999600 42 host=new\ncrash.new 3999999601 43 host=new\n" >expect &&
	test_cmp expect "$MNT/tsd/metrics/crash.new"
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
