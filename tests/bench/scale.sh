#!/bin/sh
# scale.sh: the engine's scale curve beside LevelDB and RocksDB: for each
# size, random reads (ops/s, p50 and p99 latency), write amplification
# and space amplification after loading that many entries.
#
#   tests/bench/scale.sh [-o OUTDIR] [-d SCRATCH] [-S] [SIZE ...]
#
# SIZEs default to 1000000 10000000 100000000.  For each, one run of
# db_bench-release -n SIZE -s cellfs,leveldb,rocksdb -w fillrandom,readrandom
# (every key once in random order, the store closed, reopened with the 64
# MiB cache, settled unless -S, then random gets for up to 60 s); its
# whole output goes to OUTDIR/scale-SIZE.txt.  Then OUTDIR/scale.md gets
# one table of every size and store, and OUTDIR/scale.png (gnuplot) the
# p50 and p99 curves.  Space amplification is the bytes on disk (du)
# over the bytes put (SIZE x 116); write amplification is db_bench's
# (bytes the store wrote to the disk over bytes put).
#
# Needs build/default/tests/bench/db_bench-release (make peers, then make
# build/default/tests/bench/db_bench-release) and gnuplot.  A benchmark,
# not a test: 100M entries take about an hour of this 2-core machine and
# 12 GiB of SCRATCH (default /tmp) at the largest.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=${CELLFS_BUILD:-$top/build/default}/tests/bench/db_bench-release
out=$top/build/scale
scratch=/tmp/cellfs-scale
settle=

while getopts o:d:S c; do
	case $c in
	o) out=$OPTARG ;;
	d) scratch=$OPTARG ;;
	S) settle=-S ;;
	*) echo "usage: scale.sh [-o OUTDIR] [-d SCRATCH] [-S] [SIZE ...]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
test $# -gt 0 || set -- 1000000 10000000 100000000
test -x "$bench" || { echo "scale.sh: no $bench (make peers first)" >&2; exit 1; }
mkdir -p "$out" || exit 1

for n in "$@"; do
	echo "scale.sh: $n entries" >&2
	"$bench" -n "$n" -s cellfs,leveldb,rocksdb -w fillrandom,readrandom \
		$settle -d "$scratch" >"$out/scale-$n.txt" 2>"$out/scale-$n.err" ||
		{ cat "$out/scale-$n.err" >&2; exit 1; }
done

# One line per size and store: size store ops/s p50 p99 write_amp space_amp
for n in "$@"; do
	awk -v n="$n" '
		/^### / { sec = $2 }
		sec == "readrandom" && /^\| (cellfs|leveldb|rocksdb) / {
			gsub(/ /, ""); split($0, f, "|")
			ops[f[2]] = f[4]; p50[f[2]] = f[6]; p99[f[2]] = f[7]
		}
		sec == "load" && /^\| (cellfs|leveldb|rocksdb) / {
			gsub(/ /, ""); split($0, f, "|")
			disk[f[2]] = f[3]; wamp[f[2]] = f[5]
		}
		END {
			split("cellfs leveldb rocksdb", s, " ")
			for (i = 1; i <= 3; i++)
				printf "%s %s %s %s %s %s %.2f\n", n, s[i],
				    ops[s[i]], p50[s[i]], p99[s[i]], wamp[s[i]],
				    disk[s[i]] * 1048576 / (n * 116)
		}' "$out/scale-$n.txt"
done >"$out/scale.dat"

{
	echo "| entries | store | readrandom ops/s | p50 us | p99 us | write amp | space amp |"
	echo "|---:|---|---:|---:|---:|---:|---:|"
	awk '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' \
		"$out/scale.dat"
	echo
	echo "p99 growth from the smallest to the largest size:"
	awk 'NR == 1 || $1 + 0 < min { min = $1 + 0 }
	     $1 + 0 > max { max = $1 + 0 }
	     { p99[$1 " " $2] = $5 }
	     END {
		split("cellfs leveldb rocksdb", s, " ")
		for (i = 1; i <= 3; i++)
			if (p99[min " " s[i]] > 0)
				printf "- %s: %.2fx\n", s[i],
				    p99[max " " s[i]] / p99[min " " s[i]]
	     }' "$out/scale.dat"
} >"$out/scale.md"
cat "$out/scale.md"

command -v gnuplot >/dev/null || exit 0
for s in cellfs leveldb rocksdb; do
	awk -v s="$s" '$2 == s { print $1, $4, $5 }' "$out/scale.dat" >"$out/scale-$s.dat"
done
gnuplot <<EOF
set terminal pngcairo size 800,500 noenhanced
set output '$out/scale.png'
set title 'readrandom latency by entries loaded (db_bench-release, fillrandom then readrandom)'
set logscale x
set logscale y
set xlabel 'entries'
set ylabel 'latency, microseconds'
set key left top
plot '$out/scale-cellfs.dat' using 1:3 with linespoints lw 2 lc 1 title 'cellfs p99', \
     '$out/scale-cellfs.dat' using 1:2 with linespoints dt 2 lc 1 title 'cellfs p50', \
     '$out/scale-leveldb.dat' using 1:3 with linespoints lw 2 lc 2 title 'LevelDB p99', \
     '$out/scale-leveldb.dat' using 1:2 with linespoints dt 2 lc 2 title 'LevelDB p50', \
     '$out/scale-rocksdb.dat' using 1:3 with linespoints lw 2 lc 3 title 'RocksDB p99', \
     '$out/scale-rocksdb.dat' using 1:2 with linespoints dt 2 lc 3 title 'RocksDB p50'
EOF
echo "scale.sh: $out/scale.png" >&2
