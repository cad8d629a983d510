#!/bin/sh
# peers.sh: release builds of the peers db_bench links (LevelDB, RocksDB).
#
#   sh tests/bench/peers.sh OUTDIR
#
# Debian's libleveldb-dev and librocksdb-dev are built with CMake's build
# type "None": NDEBUG is not defined, so their assert()s are live and
# RocksDB compiles in its TEST_SYNC_POINT machinery: a debug build.  A
# benchmark against them flatters us.  This script downloads the same
# upstream sources Debian packages (the .orig tarballs of bookworm's
# leveldb 1.23 and rocksdb 7.8.3, from deb.debian.org, checked against the
# SHA-256 below), builds static libraries with CMAKE_BUILD_TYPE=Release
# (-O3 -DNDEBUG) and snappy, and installs headers and libraries into
# OUTDIR/{include,lib}.  A finished build is kept: OUTDIR/.done-VERSION.
# RocksDB takes about 25 minutes on two cores, LevelDB one.
set -eu
. "$(dirname "$0")/lib-source.sh"

out=${1:?usage: peers.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
pool=http://deb.debian.org/debian/pool/main
jobs=$(nproc 2>/dev/null || echo 2)

# name version tarball-path sha256 cmake-options
build() {
	name=$1 ver=$2 path=$3 sum=$4
	shift 4
	test -f "$out/.done-$name-$ver" && return 0
	src="$out/src/$name-$ver"
	tarball="$out/src/$(basename "$path")"
	mkdir -p "$out/src"
	rm -rf "$src.build"
	unpack_checked "$pool/$path" "$sum" "$tarball" "$src"
	echo "peers.sh: building $name $ver (Release)" >&2
	cmake -S "$src" -B "$src.build" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$out" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >"$src.build.log" 2>&1 ||
		{ tail -20 "$src.build.log" >&2; exit 1; }
	cmake --build "$src.build" -j "$jobs" >>"$src.build.log" 2>&1 ||
		{ tail -20 "$src.build.log" >&2; exit 1; }
	cmake --install "$src.build" >>"$src.build.log" 2>&1
	rm -rf "$src" "$src.build"
	touch "$out/.done-$name-$ver"
}

build leveldb 1.23 l/leveldb/leveldb_1.23.orig.tar.gz \
	9a37f8a6174f09bd622bc723b55881dc541cd50747cbd08831c2a82d620f6d76 \
	-DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF \
	-DLEVELDB_INSTALL=ON

build rocksdb 7.8.3 r/rocksdb/rocksdb_7.8.3.orig.tar.gz \
	b85408a374770897332bf15e51620a5f35720dd416a4749e3899057f9cfaf84d \
	-DWITH_SNAPPY=ON -DWITH_LZ4=OFF -DWITH_ZLIB=OFF -DWITH_ZSTD=OFF \
	-DWITH_BZ2=OFF -DWITH_GFLAGS=OFF -DWITH_TESTS=OFF \
	-DWITH_BENCHMARK_TOOLS=OFF -DWITH_CORE_TOOLS=OFF -DWITH_TOOLS=OFF \
	-DROCKSDB_BUILD_SHARED=OFF -DPORTABLE=ON -DFAIL_ON_WARNINGS=OFF \
	-DWITH_JNI=OFF -DWITH_LIBURING=OFF
