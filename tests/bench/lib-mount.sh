# lib-mount.sh: the mount handling the benchmark scripts share (sourced).
#
# The script sets $mnt (the mount point) and, once it started the daemon
# in the background, $pid; bench_wait_mount waits for the mount to come
# up, bench_umount unmounts and waits for the daemon to end (30 s, then
# SIGKILL), so an EXIT trap never leaves a mount or a daemon behind.

# bench_is_mounted: 0 when $mnt is a FUSE mount
bench_is_mounted() {
	case "$(stat -f -c %T "$mnt" 2>/dev/null)" in
	fuse|fuseblk) return 0 ;;
	esac
	return 1
}

# bench_wait_mount: polls (up to 10 s) until $mnt is mounted; 1 if the
# daemon $pid ended first or the time ran out
bench_wait_mount() {
	_i=0
	until bench_is_mounted; do
		_i=$((_i + 1))
		test $_i -lt 100 && kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
}

# bench_umount: unmounts $mnt (lazily if it is busy) and reaps $pid
bench_umount() {
	fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null
	if test -n "$pid"; then
		_i=0
		while kill -0 "$pid" 2>/dev/null && test $_i -lt 300; do
			_i=$((_i + 1))
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	pid=
}
