#!/bin/sh
# fuse_uring.sh: the scan benchmark with FUSE over io_uring against the
# same with /dev/fuse (docs/performance.md, "Scans through the mount").
#
#   sh tests/bench/fuse_uring.sh [-r RUNS] OUTDIR [SCAN_BENCH_OPTIONS...]
#
# Debian bookworm's libfuse 3.14 has no io_uring transport; libfuse 3.18
# does (-o io_uring, with liburing and libnuma), and Linux 6.14 and later
# serve it once /sys/module/fuse/parameters/enable_uring is 1.  This
# script downloads the upstream source Debian packages as fuse3 3.18.3
# (its .orig tarball in deb.debian.org's pool, checked against the
# SHA-256 below), builds it into OUTDIR/libfuse, builds cellfs and
# scan_bench against it into OUTDIR/build, turns enable_uring on for the
# run (as it found it afterwards; root), and runs RUNS times (default 3)
# each, alternating: scan_bench with the tree's build (make's, the
# /dev/fuse transport) and with OUTDIR's cellfs mounted -o io_uring.
# Needs: meson, ninja-build, liburing-dev, libnuma-dev (apt-get), and
# `make` run first.  A finished libfuse build is kept.
set -eu
. "$(dirname "$0")/lib-source.sh"

runs=3
if [ "${1:-}" = -r ]; then
	runs=$2
	shift 2
fi
out=${1:?usage: fuse_uring.sh [-r RUNS] OUTDIR [SCAN_BENCH_OPTIONS...]}
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=3.18.3
sum=bcd19582c5e30f7fe45dd86a5540e998590aa01903afc7ebcbeea6c8ac5421ee
url=http://deb.debian.org/debian/pool/main/f/fuse3/fuse3_$ver.orig.tar.gz
param=/sys/module/fuse/parameters/enable_uring

for tool in meson ninja; do
	command -v $tool >/dev/null ||
		{ echo "fuse_uring.sh: $tool missing (apt-get install meson ninja-build)" >&2; exit 1; }
done
for pc in liburing numa; do
	pkg-config --exists $pc ||
		{ echo "fuse_uring.sh: $pc missing (apt-get install liburing-dev libnuma-dev)" >&2; exit 1; }
done
test -w $param ||
	{ echo "fuse_uring.sh: $param is not writable: no FUSE over io_uring in this kernel, or not root" >&2; exit 1; }
test -x "$top/build/default/tests/bench/scan_bench" ||
	{ echo "fuse_uring.sh: run make first" >&2; exit 1; }

lib=$out/libfuse
if ! test -f "$lib/.done-$ver"; then
	rm -rf "$lib"
	unpack_checked "$url" "$sum" "$out/fuse3_$ver.orig.tar.gz" "$out/src"
	echo "fuse_uring.sh: building libfuse $ver (release, io_uring)" >&2
	(cd "$out/src" &&
	 meson setup build --prefix="$lib" --libdir=lib -Dbuildtype=release \
		-Dutils=false -Dexamples=false -Dtests=false \
		-Denable-io-uring=true && ninja -C build install) \
		>"$out/libfuse.log" 2>&1 ||
		{ tail -20 "$out/libfuse.log" >&2; exit 1; }
	grep -q "HAVE_URING" "$out/src/build/fuse_config.h" ||
		{ echo "fuse_uring.sh: libfuse built without io_uring" >&2; exit 1; }
	rm -rf "$out/src"
	touch "$lib/.done-$ver"
fi

echo "fuse_uring.sh: building cellfs against libfuse $ver" >&2
PKG_CONFIG_PATH=$lib/lib/pkgconfig make -s -C "$top" -j2 B="$out/build" \
	LDFLAGS="-pthread -Wl,-rpath,$lib/lib" \
	"$out/build/cellfs" "$out/build/tests/bench/scan_bench" >"$out/make.log" 2>&1 ||
	{ tail -20 "$out/make.log" >&2; exit 1; }

was=$(cat $param)
dir=$(mktemp -d /tmp/fuse-uring.XXXXXX)
trap 'for m in "$dir"/*/mnt; do fusermount3 -u -q "$m" 2>/dev/null || true; done
	echo "$was" | sed "s/Y/1/;s/N/0/" >$param; rm -rf "$dir"' EXIT INT TERM
echo 1 >$param
for i in $(seq "$runs"); do
	echo "== run $i: /dev/fuse (libfuse $(pkg-config --modversion fuse3))"
	"$top/build/default/tests/bench/scan_bench" "$@" \
		"$top/build/default/cellfs" "$dir/dev$i"
	echo "== run $i: io_uring (libfuse $ver, -o io_uring)"
	"$out/build/tests/bench/scan_bench" -o io_uring "$@" \
		"$out/build/cellfs" "$dir/ring$i" 2>&1 | tee "$dir/ring.out"
	# libfuse falls back to /dev/fuse with only a log line
	! grep -q "failed to start io-uring" "$dir/ring.out" ||
		{ echo "fuse_uring.sh: io_uring did not start" >&2; exit 1; }
done
