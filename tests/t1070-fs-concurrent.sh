#!/bin/sh

test_description='cellfs: 8 writer and reader processes at once (CELLFS_CONCURRENT_SECS, default 60), and TTL through the filesystem'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

SECS=${CELLFS_CONCURRENT_SECS:-60}

# worker I: writes its own rows, reads each write back at once, deletes
# some, lists its rows, and reads the others' rows; remembers what each
# of its cells should hold in state/I/CELL.  Any surprise: a line in
# fail.I and a non-zero exit.
worker() {
	i=$1
	end=$(( $(date +%s) + SECS ))
	n=0
	mkdir -p "state/$i"
	while test "$(date +%s)" -lt "$end"; do
		n=$((n + 1))
		k=$((n % 17))
		row="$MNT/t/w$i-$k"
		if test $((n % 9)) -eq 0; then
			rm -f "$row/cf:v" 2>"err.$i" || { echo "rm $row: $(cat err.$i)" >>"fail.$i"; return 1; }
			echo DELETED >"state/$i/$k"
			if test -e "$row/cf:v"; then echo "deleted $row still there" >>"fail.$i"; return 1; fi
		else
			mkdir -p "$row" 2>/dev/null
			echo "w$i-$n" >"$row/cf:v" 2>"err.$i" || { echo "write $row: $(cat err.$i)" >>"fail.$i"; return 1; }
			echo "w$i-$n" >"state/$i/$k"
			got=$(cat "$row/cf:v" 2>&1)
			test "$got" = "w$i-$n" || { echo "read $row: got '$got' want w$i-$n" >>"fail.$i"; return 1; }
		fi
		if test $((n % 5)) -eq 0; then
			ls "$MNT/t/@" >/dev/null 2>"err.$i" || { echo "ls: $(cat err.$i)" >>"fail.$i"; return 1; }
			o=$(( (i + 1) % 8 ))
			v=$(cat "$MNT/t/w$o-$k/cf:v" 2>/dev/null)
			case "$v" in ""|w$o-*) ;; *) echo "other row w$o-$k holds '$v'" >>"fail.$i"; return 1;; esac
		fi
	done
	echo $n >"ops.$i"
}

test_expect_success 'mount with a small memstore so flushes and compactions run' '
	cellfs_mount "flush_size=256K,split_size=2M" &&
	mkdir "$MNT/t"
'

test_expect_success "8 processes for $SECS s: no error, no lost write, no wrong read" '
	pids= &&
	for i in 0 1 2 3 4 5 6 7; do
		worker $i &
		pids="$pids $!"
	done &&
	for p in $pids; do
		wait $p || echo "worker $p failed" >>fail.wait
	done &&
	! cat fail.* 2>/dev/null | grep . &&
	cat ops.* | awk "{ s += \$1 } END { print s }" >total &&
	test "$(cat total)" -gt 100
'

test_expect_success 'every last write is there after a remount' '
	cellfs_umount &&
	cellfs_mount &&
	bad=0 &&
	for i in 0 1 2 3 4 5 6 7; do
		for f in state/$i/*; do
			k=${f##*/} &&
			want=$(cat "$f") &&
			got=$(cat "$MNT/t/w$i-$k/cf:v" 2>/dev/null || echo DELETED) &&
			if test "$got" != "$want"; then
				echo "w$i-$k: got $got want $want" && bad=1
			fi
		done
	done &&
	test $bad = 0
'

test_expect_success 'TTL: cells past their time-to-live vanish from reads at once' '
	mkdir "$MNT/ttl" &&
	echo "cf TTL=2" >"$MNT/ttl/.schema" &&
	mkdir "$MNT/ttl/r" &&
	echo short-lived >"$MNT/ttl/r/cf:x" &&
	cat "$MNT/ttl/r/cf:x" >actual &&
	echo short-lived >expect &&
	test_cmp expect actual &&
	sleep 3 &&
	! cat "$MNT/ttl/r/cf:x" 2>/dev/null &&
	ls "$MNT/ttl/r" >list 2>/dev/null || : &&
	! grep -q cf:x list
'

test_done
