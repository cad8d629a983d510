#!/bin/sh

test_description='cellfs: a put writer'"'"'s memo of its series (tsd/tsd.c): lines of a known series store what a first parse would, refuse alike, and a rename makes the writer forget'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

T=1356998400
Q="start=$T&end=$((T + 7200))"

# warm N: N lines of series w{i=..} through fd 7, one write(2); a writer
# keeps a memo once it has taken 1024 lines
warm() {
	awk -v t=$T -v n=$1 "BEGIN { for (i = 0; i < n; i++)
		printf \"warm %d %d i=%d\\n\", t + i, i, i % 10 }" >warm.in &&
	cat warm.in >&7
}

test_expect_success 'mount; one writer takes 1100 lines, then the series of the test' '
	cellfs_mount &&
	exec 7>>"$MNT/tsd/put" &&
	warm 1100 &&
	printf "m %s 1 host=a dc=x\nm %s 2 host=b dc=x\n" $T $T >&7 &&
	: the same series again: known to the memo now &&
	printf "m %s 3 host=a dc=x\nm %s 4 host=b  dc=x\nm %s 5 dc=x host=a\n" \
		$((T + 10)) $((T + 10)) $((T + 20)) >&7 &&
	printf "put m %s 6.5 host=a dc=x\r\nm %s 7 host=b dc=x \n" \
		$((T + 30)) $((T + 3600)) >&7 &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=*}" >out &&
	printf "%s\n" "m $T 1 dc=x host=a" "m $((T + 10)) 3 dc=x host=a" \
		"m $((T + 20)) 5.0 dc=x host=a" "m $((T + 30)) 6.5 dc=x host=a" \
		"m $T 2 dc=x host=b" "m $((T + 10)) 4 dc=x host=b" \
		"m $((T + 3600)) 7 dc=x host=b" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:warm" >out &&
	test $(wc -l <out) -eq 1100 &&
	: the tags of a known series under another metric &&
	printf "warm %s 1 i=3\n" $((T + 1200)) >&7 &&
	printf "other %s 5 i=3\n" $((T + 5)) >&7 &&
	cat "$MNT/tsd/q/$Q&m=sum:other" >out &&
	echo "other $((T + 5)) 5 i=3" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:warm{i=3}" >out &&
	test $(wc -l <out) -eq 111 &&
	: a point written twice in one write, once by a known text, once by \
		another: the later line wins, as without the memo &&
	printf "m %s 100 dc=x  host=a\nm %s 101 host=a dc=x\n" \
		$((T + 70)) $((T + 70)) >&7 &&
	cat "$MNT/tsd/q/start=$((T + 70))&end=$((T + 71))&m=sum:m{host=a}" >out &&
	echo "m $((T + 70)) 101 dc=x host=a" >expect &&
	test_cmp expect out &&
	: twice by known texts, values of other widths and kinds: the later wins &&
	printf "m %s 100 host=a dc=x\nm %s 300 host=a dc=x\nm %s 1.5 host=b dc=x\nm %s 7 host=b dc=x\n" \
		$((T + 71)) $((T + 71)) $((T + 71)) $((T + 71)) >&7 &&
	cat "$MNT/tsd/q/start=$((T + 71))&end=$((T + 72))&m=sum:m{host=*}" >out &&
	printf "%s\n" "m $((T + 71)) 300 dc=x host=a" "m $((T + 71)) 7 dc=x host=b" >expect &&
	test_cmp expect out
'

test_expect_success 'a bad timestamp or value of a known series is refused as at first, the rest stored' '
	test_must_fail sh -c "printf \"m %s x host=a dc=x\\nm %s 8 host=a dc=x\\nm 0 1 host=b dc=x\\n\" \
		$((T + 40)) $((T + 50)) >&7" &&
	grep "invalid value: x" "$MNT/.log" &&
	grep "invalid timestamp: 0" "$MNT/.log" &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=a}" >out &&
	grep "^m $((T + 50)) 8 dc=x host=a$" out &&
	test_must_fail grep "^m $((T + 40)) " out
'

test_expect_success 'a tag value renamed while the writer is open: the old name gets a new UID, the memo does not keep the old one' '
	old=$(cat "$MNT/tsd/tagv/a") &&
	mv "$MNT/tsd/tagv/a" "$MNT/tsd/tagv/c" &&
	printf "m %s 9 host=a dc=x\n" $((T + 60)) >&7 &&
	new=$(cat "$MNT/tsd/tagv/a") &&
	test "$old" != "$new" &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=a}" >out &&
	echo "m $((T + 60)) 9 dc=x host=a" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=c}" >out &&
	test $(wc -l <out) -eq 7 &&
	test_must_fail grep " 9 " out
'

test_expect_success 'a writer of one metric (MNT/tsd/metrics/M) keeps its memo too' '
	exec 8>>"$MNT/tsd/metrics/m" &&
	awk -v t=$T "BEGIN { for (i = 0; i < 1100; i++)
		printf \"%d 1 host=d%d\\n\", t + 100 + i, i % 3 }" >w4.in &&
	cat w4.in >&8 &&
	printf "%s 10 host=d0\n%s 11 host=d0\n" $((T + 1300)) $((T + 1301)) >&8 &&
	printf "%s 12 host=d0\n" $((T + 1302)) >&8 &&
	exec 8>&- &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=d0}" >out &&
	tail -3 out >got &&
	printf "%s\n" "m $((T + 1300)) 10 host=d0" "m $((T + 1301)) 11 host=d0" \
		"m $((T + 1302)) 12 host=d0" >expect &&
	test_cmp expect got
'

test_expect_success 'tsdb-uid and tsdb dropped while the writer is open: a known series is named anew, not stored under the old UIDs' '
	echo drop >"$MNT/tsdb-uid/.ctl" &&
	echo drop >"$MNT/tsdb/.ctl" &&
	printf "m %s 13 host=a dc=x\n" $((T + 90)) >&7 &&
	cat "$MNT/tsd/q/$Q&m=sum:m{host=*}" >out &&
	echo "m $((T + 90)) 13 dc=x host=a" >expect &&
	test_cmp expect out
'

test_expect_success 'unmount' '
	exec 7>&- 8>&- &&
	cellfs_umount
'

test_done
