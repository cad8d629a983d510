#!/bin/sh

test_description='cellfs: OpenTSDB telnet port (-o tsd_telnet=): put, version, stats, help, exit, one error line per bad line, tcollector exchange, shutdown'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

CLIENT="python3 $SHARNESS_TEST_DIRECTORY/tsd_client.py"

# tel: sends stdin to the telnet port, the answer in "out"
tel() {
	$CLIENT telnet $TP >out
}

T=1356998400

test_expect_success 'mount with the telnet port on a free port' '
	TP=$($CLIENT port) &&
	cellfs_mount "tsd_telnet=$TP" &&
	$CLIENT wait $TP
'

test_expect_success 'put lines are stored and answer nothing; version answers two lines' '
	printf "put t.m %s 1 host=a\nput t.m %s 2.5 host=a\r\nput t.m %s 3 host=b\nversion\nexit\n" \
		$T $((T + 10)) $T | tel &&
	cat >expect <<-\EOF &&
	net.opentsdb 2.4.0 (cellfs 0.1) built at revision cellfs (MODIFIED)
	Built on cellfs by cellfs@localhost:cellfs
	EOF
	test_cmp expect out &&
	cat >expect <<-EOF &&
	t.m $T 1 host=a
	t.m $((T + 10)) 2.5 host=a
	t.m $T 3 host=b
	EOF
	test_cmp expect "$MNT/tsd/metrics/t.m" &&
	cat "$MNT/tsd/q/start=$T&m=sum:t.m" >out &&
	printf "t.m %s 4.0\nt.m %s 2.5\n" $T $((T + 10)) >expect &&
	test_cmp expect out
'

test_expect_success 'one error line per bad line, the good lines around stored, the connection kept' '
	cat >in <<-EOF &&
	put b.m $T 1 host=a
	put b.m $T 1
	put b.m
	put b.m $((T + 1)) x host=a
	put b.m -5 1 host=a
	put b m $T 1 host=a
	put b.m $((T + 2)) 2 host=a
	version
	put b.m $((T + 3)) 3 host=a host=b
	put b.m $((T + 4)) 4 host=a
	exit
	put b.m $((T + 5)) 5 host=a
	EOF
	tel <in &&
	cat >expect <<-EOF &&
	put: illegal argument: need at least one tag
	put: illegal argument: not enough arguments (need 4, got 1)
	put: invalid value: x
	put: illegal argument: invalid timestamp: -5
	put: illegal argument: invalid tag: 1
	net.opentsdb 2.4.0 (cellfs 0.1) built at revision cellfs (MODIFIED)
	Built on cellfs by cellfs@localhost:cellfs
	put: illegal argument: duplicate tag: host=b
	EOF
	test_cmp expect out &&
	printf "b.m %s 1 host=a\nb.m %s 2 host=a\nb.m %s 4 host=a\n" \
		$T $((T + 2)) $((T + 4)) >expect &&
	test_cmp expect "$MNT/tsd/metrics/b.m" &&
	echo "warn tsd telnet: put refused: duplicate tag: host=b" >expect &&
	last_log >out && test_cmp expect out
'

test_expect_success 'help, dropcaches, unknown commands, an empty line' '
	printf "help\ndropcaches\nget x\n\nPUT b.m 1 1 a=b\nexit\n" | tel &&
	cat >expect <<-\EOF &&
	available commands: stats dropcaches version exit help put 
	Caches dropped.
	unknown command: get.  Try `help'"'"'.
	unknown command: .  Try `help'"'"'.
	unknown command: PUT.  Try `help'"'"'.
	EOF
	test_cmp expect out
'

test_expect_success 'stats: the counters as OpenTSDB stat lines' '
	printf "stats\nexit\n" | tel &&
	test $(wc -l <out) = 10 &&
	grep -E "^tsd\.[a-z.]+ [0-9]+ [0-9]+( type=[a-z_]+)? host=[^ ]+$" out >ok &&
	test_cmp out ok &&
	grep "^tsd.datapoints.added [0-9]* 6 type=all host=" out &&
	grep "^tsd.datapoints.rejected [0-9]* 6 host=" out
'

test_expect_success 'a line over 64 KiB: one error, the next line works' '
	{
		printf "put long.m %s 1 host=" $T &&
		head -c 70000 /dev/zero | tr "\0" a &&
		printf "\nput long.m %s 1 host=a\nversion\nexit\n" $T
	} | tel &&
	head -1 out >first &&
	echo "put: illegal argument: line too long" >expect &&
	test_cmp expect first &&
	test $(wc -l <out) = 3 &&
	echo "long.m $T 1 host=a" >expect &&
	test_cmp expect "$MNT/tsd/metrics/long.m"
'

test_expect_success 'tcollector exchange: version as liveness check, put blocks, reconnect' '
	python3 - $TP <<-EOF >out &&
	import socket, sys, time
	port = int(sys.argv[1])
	def conn():
	    return socket.create_connection(("127.0.0.1", port), timeout=10)
	s = conn()
	# verify_conn: "version", then read what comes
	s.sendall(b"version\n")
	buf = b""
	while buf.count(b"\n") < 2:
	    buf += s.recv(4096)
	print(buf.decode().splitlines()[0])
	# send_data: a block of "put" lines, nothing read back
	s.sendall("".join("put tc.m %d %d host=h\n" % ($T + i, i)
	                  for i in range(100)).encode())
	s.close()
	# the reconnect: a new connection takes more lines
	s = conn()
	s.sendall(b"put tc.m $((T + 100)) 100 host=h\nversion\n")
	buf = b""
	while buf.count(b"\n") < 2:
	    buf += s.recv(4096)
	print(buf.decode().splitlines()[1])
	EOF
	cat >expect <<-\EOF &&
	net.opentsdb 2.4.0 (cellfs 0.1) built at revision cellfs (MODIFIED)
	Built on cellfs by cellfs@localhost:cellfs
	EOF
	test_cmp expect out &&
	wc -l <"$MNT/tsd/metrics/tc.m" >n &&
	echo 101 >expect && test_cmp expect n
'

test_expect_success '1000 idle connections: another one is still served' '
	printf "put crowd.m %s 1 host=a\nversion\nexit\n" $T |
		$CLIENT crowd $TP 1000 >out &&
	test $(wc -l <out) = 2 &&
	echo "crowd.m $T 1 host=a" >expect &&
	test_cmp expect "$MNT/tsd/metrics/crowd.m"
'

test_expect_success 'unmount with 100 connections open: all closed, the daemon exits' '
	$CLIENT hold $TP 100 >held &
	HOLD=$! &&
	i=0 &&
	while ! grep -q open held; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	pid=$CELLFS_PID &&
	cellfs_umount &&
	! kill -0 $pid 2>/dev/null &&
	wait $HOLD &&
	printf "open\nclosed\n" >expect &&
	test_cmp expect held &&
	$CLIENT closed $TP
'

P2=$($CLIENT port)
test_expect_success 'a port in use is reported and the daemon does not stay mounted' '
	python3 -c "import socket,time,sys; s=socket.socket(); s.bind((\"127.0.0.1\", $P2)); s.listen(); print(\"bound\", flush=True); time.sleep(10)" >bound &
	BLOCK=$! &&
	i=0 &&
	while ! grep -q bound bound; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	test_must_fail "$CELLFS" -f -o "tsd_telnet=$P2" "$DATA" "$MNT" 2>err &&
	kill $BLOCK &&
	grep "cellfs: tsd_telnet: cannot listen on $P2: Address already in use" err &&
	! cellfs_is_mounted
'

test_done
