#!/bin/sh
# scale_runs.sh: several runs of tests/bench/scale.sh as one table, each
# figure the median over the runs with the least and greatest beside it,
# and one plot of the median p50 and p99 with the runs' range as bars.
#
#   tests/bench/scale_runs.sh -o OUTDIR RUNDIR RUNDIR ...
#
# Each RUNDIR is the -o OUTDIR of one scale.sh run (its scale.dat: one
# line per size and store, "size store ops/s p50 p99 write_amp
# space_amp").  Writes OUTDIR/scale-runs.md (the table, then each
# store's p99 growth from the smallest size to the largest, run by run
# and median) and OUTDIR/scale-runs.png (gnuplot, when present).  A
# summary of measurements, not a test.
set -u
out=
while getopts o: c; do
	case $c in
	o) out=$OPTARG ;;
	*) echo "usage: scale_runs.sh -o OUTDIR RUNDIR ..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
test -n "$out" && test $# -gt 0 ||
	{ echo "usage: scale_runs.sh -o OUTDIR RUNDIR ..." >&2; exit 2; }
for d in "$@"; do
	test -s "$d/scale.dat" || { echo "scale_runs.sh: no $d/scale.dat" >&2; exit 1; }
done
mkdir -p "$out" || exit 1

# every run's lines, each prefixed with its run number
k=0
for d in "$@"; do
	k=$((k + 1))
	awk -v k="$k" '{ print k, $0 }' "$d/scale.dat"
done >"$out/scale-runs.all"

# median of a sorted list a[1..n]
med='function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function sortn(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
}'

# per size and store: median min max of each column (one line each)
awk "$med"'
	{ key = $2 " " $3; n[key]++
	  for (c = 4; c <= 8; c++) v[key, c, n[key]] = $c
	  if (!(key in seen)) { seen[key] = 1; order[++nk] = key } }
	END {
		for (i = 1; i <= nk; i++) {
			key = order[i]; line = key
			for (c = 4; c <= 8; c++) {
				for (j = 1; j <= n[key]; j++) a[j] = v[key, c, j]
				sortn(a, n[key])
				line = line " " med(a, n[key]) " " a[1] " " a[n[key]]
			}
			print line
		}
	}' "$out/scale-runs.all" | sort -k1,1n -k2,2 >"$out/scale-runs.dat"

{
	echo "$# runs; each figure the median, least and greatest in brackets."
	echo
	echo "| entries | store | readrandom ops/s | p50 us | p99 us | write amp | space amp |"
	echo "|---:|---|---:|---:|---:|---:|---:|"
	awk '{ printf "| %s | %s | %d (%d-%d) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) |\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 }' \
		"$out/scale-runs.dat"
	echo
	echo "p99 growth from the smallest size to the largest, run by run:"
	awk "$med"'
		{ r = $1; s = $3; sz = $2 + 0
		  if (!(r " " s in lo) || sz < losz[r " " s]) { losz[r " " s] = sz; lo[r " " s] = $6 }
		  if (!(r " " s in hi) || sz > hisz[r " " s]) { hisz[r " " s] = sz; hi[r " " s] = $6 }
		  if (r > nr) nr = r }
		END {
			split("cellfs leveldb rocksdb", st, " ")
			for (i = 1; i <= 3; i++) {
				line = "- " st[i] ":"; m = 0
				for (r = 1; r <= nr; r++) {
					g = hi[r " " st[i]] / lo[r " " st[i]]
					line = line sprintf(" %.2fx", g); a[++m] = g
				}
				sortn(a, m)
				printf "%s; median %.2fx\n", line, med(a, m)
			}
		}' "$out/scale-runs.all"
} >"$out/scale-runs.md"
cat "$out/scale-runs.md"

command -v gnuplot >/dev/null || exit 0
for s in cellfs leveldb rocksdb; do
	awk -v s="$s" '$2 == s' "$out/scale-runs.dat" >"$out/scale-runs-$s.dat"
done
# columns of scale-runs.dat: 1 size, 2 store, 3-5 ops/s, 6-8 p50, 9-11 p99
gnuplot <<EOF
set terminal pngcairo size 800,500 noenhanced
set output '$out/scale-runs.png'
set title 'readrandom latency by entries loaded: median of $# runs, bars from least to greatest'
set logscale x
set logscale y
set xlabel 'entries'
set ylabel 'latency, microseconds'
set key left top
set bars 2
plot '$out/scale-runs-cellfs.dat' using 1:9:10:11 with yerrorlines lw 2 lc 1 title 'cellfs p99', \
     '$out/scale-runs-cellfs.dat' using 1:6:7:8 with yerrorlines dt 2 lc 1 title 'cellfs p50', \
     '$out/scale-runs-leveldb.dat' using 1:9:10:11 with yerrorlines lw 2 lc 2 title 'LevelDB p99', \
     '$out/scale-runs-leveldb.dat' using 1:6:7:8 with yerrorlines dt 2 lc 2 title 'LevelDB p50', \
     '$out/scale-runs-rocksdb.dat' using 1:9:10:11 with yerrorlines lw 2 lc 3 title 'RocksDB p99', \
     '$out/scale-runs-rocksdb.dat' using 1:6:7:8 with yerrorlines dt 2 lc 3 title 'RocksDB p50'
EOF
echo "scale_runs.sh: $out/scale-runs.png" >&2
