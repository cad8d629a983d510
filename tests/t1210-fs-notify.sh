#!/bin/sh

test_description='cellfs under a service manager: READY=1 on $NOTIFY_SOCKET
once the mount is up, STOPPING=1 and a clean unmount on SIGTERM (what
systemd Type=notify expects, contrib/cellfs@.service)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

command -v python3 >/dev/null || {
	skip_all="no python3"
	test_done
}

# notify.py SOCKET CHECK CMD...: plays the service manager.  Binds a unix
# datagram socket at SOCKET ("@name": abstract), runs CMD with
# NOTIFY_SOCKET=SOCKET, prints the first datagram, whether MNT is mounted
# then, and CHECK's exit status (a shell command run once ready); then
# sends SIGTERM, prints the next datagram, CMD's exit status and whether
# MNT is still mounted.
cat >notify.py <<'EOP'
import os, re, signal, socket, subprocess, sys
sock, check, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
mnt = os.environ["MNT"]
def unescape(path):  # mountinfo writes space, tab, newline, \ as \ooo
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)
def mounted():
    with open("/proc/self/mountinfo") as f:
        return any(unescape(l.split()[4]) == mnt for l in f)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + sock[1:] if sock[0] == "@" else sock)
s.settimeout(30)
p = subprocess.Popen(cmd, env=dict(os.environ, NOTIFY_SOCKET=sock))
print(repr(s.recv(4096).decode()))
print("mounted" if mounted() else "not mounted")
print("check", subprocess.call(["sh", "-c", check]))
p.send_signal(signal.SIGTERM)
print(repr(s.recv(4096).decode()))
print("exit", p.wait(timeout=30))
print("mounted" if mounted() else "not mounted")
EOP

export MNT
mkdir -p "$MNT"

test_expect_success 'READY=1 when mounted; SIGTERM: STOPPING=1, unmount, exit 0' '
	python3 notify.py "$PWD/notify.sock" \
		"mkdir \"$MNT/t\" && mkdir \"$MNT/t/r\" && echo v >\"$MNT/t/r/cf:a\"" \
		"$CELLFS" -f "$DATA" "$MNT" >out 2>err &&
	cat >expect.notify <<-\EOF &&
	'"'"'READY=1'"'"'
	mounted
	check 0
	'"'"'STOPPING=1'"'"'
	exit 0
	not mounted
	EOF
	test_cmp expect.notify out
'

test_expect_success 'what was written before SIGTERM is there after' '
	cellfs_mount && echo v >expect && test_cmp expect "$MNT/t/r/cf:a" &&
	cellfs_umount
'

test_expect_success 'an abstract socket (@name) works the same' '
	python3 notify.py "@cellfs-t1210-$$" "test -d \"$MNT/t\"" \
		"$CELLFS" -f "$DATA" "$MNT" >out 2>err &&
	test_cmp expect.notify out
'

test_expect_success 'NOTIFY_SOCKET naming no socket: mounted all the same, the failure in .log' '
	NOTIFY_SOCKET="$PWD/nosuch.sock" "$CELLFS" -f "$DATA" "$MNT" 2>err &
	CELLFS_PID=$! &&
	i=0 && while ! cellfs_is_mounted && test $i -lt 100; do
		i=$((i + 1)); sleep 0.1; done &&
	cellfs_is_mounted &&
	grep "NOTIFY_SOCKET $PWD/nosuch.sock: cannot send READY=1: No such file or directory" "$MNT/.log" &&
	kill -TERM $CELLFS_PID && wait $CELLFS_PID && CELLFS_PID= &&
	! cellfs_is_mounted
'

# The kernel's RELEASE of a closed file comes after close(2) returns, so
# a SIGTERM right after a read may find its handle still open; the
# daemon frees what no RELEASE came for (LeakSanitizer, in an ASan
# build, exits 1 on a leak).
test_expect_success 'files still open at SIGTERM: their handles freed, exit 0' '
	cellfs_mount &&
	exec 8<"$MNT/t/r/cf:a" 9>>"$MNT/t/r/cf:b" &&
	echo w >&9 &&
	cat "$MNT/.log" >/dev/null &&
	kill -TERM $CELLFS_PID && wait $CELLFS_PID && CELLFS_PID= &&
	exec 8<&- 9>&- &&
	! cellfs_is_mounted
'

test_done
