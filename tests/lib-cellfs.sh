# lib-cellfs.sh: sharness helpers for the FUSE daemon's tests.  Source it
# after sharness.sh.  cellfs_mount starts the daemon in the foreground, in
# the background of the test (so its pid is known), on a data directory in
# the trash directory; the EXIT trap and test_done unmount it, so no test
# ever leaves a mount behind.

: "${CELLFS_BUILD:=$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)/build/default}"
CELLFS="$CELLFS_BUILD/cellfs"
HELPER_ERRNO="$CELLFS_BUILD/tests/helper-errno"
MNT="$SHARNESS_TRASH_DIRECTORY/mnt"
DATA="$SHARNESS_TRASH_DIRECTORY/data"
CELLFS_PID=

test -x "$CELLFS" || {
	skip_all="no cellfs binary at $CELLFS"
	test_done
}
test -c /dev/fuse && command -v fusermount3 >/dev/null || {
	skip_all="no FUSE here"
	test_done
}

cellfs_is_mounted() {
	test "$(stat -f -c %T "$MNT" 2>/dev/null)" = fuseblk ||
	test "$(stat -f -c %T "$MNT" 2>/dev/null)" = fuse
}

# cellfs_mount [OPT,...]: mounts $DATA at $MNT and waits (up to 10 s).
cellfs_mount() {
	mkdir -p "$MNT" &&
	"$CELLFS" -f ${1:+-o "$1"} "$DATA" "$MNT" \
		2>>"$SHARNESS_TRASH_DIRECTORY/cellfs.err" &
	CELLFS_PID=$!
	i=0
	while ! cellfs_is_mounted; do
		i=$((i + 1))
		test $i -lt 100 || return 1
		kill -0 $CELLFS_PID 2>/dev/null || return 1
		sleep 0.1
	done
	# the daemon mounts first and starts tsd_http= after (READY=1 then):
	# a request right after the mount must not find the port closed
	case ",$1," in
	*,tsd_http=*)
		cellfs_wait_port "$(printf '%s' ",$1," |
			sed -n 's/.*,tsd_http=\([^,]*\),.*/\1/p')" ;;
	esac
}

# cellfs_wait_port [ADDR:]PORT: polls (up to 300 s) until it accepts
cellfs_wait_port() {
	python3 -c '
import socket, sys, time
a = sys.argv[1]
host, port = (a.rsplit(":", 1) if ":" in a else ("127.0.0.1", a))
host = host.strip("[]")
end = time.time() + 300
while True:
    try:
        socket.create_connection((host, int(port)), 1).close()
        break
    except OSError:
        if time.time() > end:
            sys.exit(1)
        time.sleep(0.05)
' "$1"
}

# cellfs_wait_files N GLOB: polls (up to 300 s: sanitizer builds are slow) until
# N files match GLOB
cellfs_wait_files() {
	i=0
	while test "$(ls $2 2>/dev/null | wc -l)" -lt "$1"; do
		i=$((i + 1))
		test $i -lt 3000 || return 1
		sleep 0.1
	done
}

# cellfs_umount: unmounts and waits for the daemon to close the db.
cellfs_umount() {
	# Not only when mounted: a dead daemon leaves a mount that stat
	# cannot see through.
	fusermount3 -u "$MNT" 2>/dev/null ||
	fusermount3 -uz "$MNT" 2>/dev/null
	if test -n "$CELLFS_PID"; then
		i=0
		while kill -0 $CELLFS_PID 2>/dev/null && test $i -lt 100; do
			i=$((i + 1))
			sleep 0.1
		done
		kill -9 $CELLFS_PID 2>/dev/null
		wait $CELLFS_PID 2>/dev/null
		CELLFS_PID=
	fi
	return 0
}

# cellfs_kill9: the crash: kill -9 the daemon, then drop the dead mount.
cellfs_kill9() {
	kill -9 $CELLFS_PID &&
	wait $CELLFS_PID 2>/dev/null
	CELLFS_PID=
	fusermount3 -uz "$MNT" 2>/dev/null
	return 0
}

# errno_of OP PATH [ARG]: prints OK or the errno name (helper-errno).
errno_of() {
	"$HELPER_ERRNO" "$@"
}

# doc_session DOC: the lines of DOC's ```session block (a user guide's
# example run), on stdout.
doc_session() {
	sed -n "/^\`\`\`session$/,/^\`\`\`$/p" "$1" | sed "1d;\$d"
}

# run_session FILE EXPECT ACTUAL: runs each "$ " line of FILE in $MNT
# (output appended to ACTUAL, a failure as "FAILED: cmd") and collects
# the other lines, the output shown, in EXPECT; then test_cmp them.
run_session() {
	: >"$2" && : >"$3" &&
	while IFS= read -r line; do
		case "$line" in
		"\$ "*)
			cmd=${line#\$ } &&
			(cd "$MNT" && eval "$cmd") >>"$3" 2>&1 ||
			echo "FAILED: $cmd" >>"$3" ;;
		*)
			printf "%s\n" "$line" >>"$2" ;;
		esac
	done <"$1" &&
	test_cmp "$2" "$3"
}

# cellfs_forgets: the inodes of this mount the kernel has forgotten so far
cellfs_forgets() {
	sed -n "s/^cellfs_fuse_forgets_total //p" "$MNT/.stats"
}

# cellfs_undisturbed ALLOW RESET CMD...: for a check of what the kernel
# keeps in its caches (names, attributes, inodes).  Another process's
# drop_caches (t1160 and t1080 in a suite run beside this one) or memory
# pressure can make the kernel forget this mount's names in the middle of
# such a check, which then proves nothing either way.  Runs CMD until the
# kernel forgets at most ALLOW inodes of this mount while it runs (those
# the check itself drops) and returns the status of that run; after a
# disturbed run, RESET puts the state CMD starts from back (":" when CMD
# sets it up itself).  Gives up, failing, after 600 s of disturbed runs.
cellfs_undisturbed() {
	_cu_allow=$1 _cu_reset=$2 _cu_t0=$(date +%s)
	shift 2
	while :; do
		# the kernel sends the forgets it queued (an unlinked cell's)
		# before its next request: a first read of .stats lets them in
		cellfs_forgets >/dev/null &&
		_cu_f0=$(cellfs_forgets) || return 1
		"$@"
		_cu_rc=$?
		_cu_f1=$(cellfs_forgets) || return 1
		test $((_cu_f1 - _cu_f0)) -le $_cu_allow && return $_cu_rc
		echo "the kernel forgot $((_cu_f1 - _cu_f0)) inodes during: $*; again" >&2
		test $(($(date +%s) - _cu_t0)) -lt 600 || return 1
		$_cu_reset || return 1
	done
}

final_cleanup="cellfs_umount"
trap 'cellfs_umount; die' EXIT

# last_log: the newest line of MNT/.log, without its time stamp
last_log() {
	tail -1 "$MNT/.log" | cut -d" " -f2-
}
