#!/bin/bash
# tcollector-run.sh: runs tcollector-style collectors and appends their
# points to a cellfs mount's MNT/tsd/put.
#
#   tcollector-run.sh [-d DIR] [-o FILE] [-1] MNT
#
#   -d DIR   the collectors: DIR/<interval>/<executable>; default: the
#            collectors/ directory next to this script
#   -o FILE  write to FILE instead of MNT/tsd/put (testing: -o /dev/stdout)
#   -1       run every interval collector once, wait for them, and exit
#
# As in OpenTSDB's tcollector, a collector in DIR/N/ (N > 0) is run every
# N seconds and prints one "metric timestamp value tag=value ..." line per
# point on stdout; a collector in DIR/0/ is long-lived: it keeps printing
# and is started again (after 10 s) whenever it exits.  As tcollector
# does, a line without a host tag gets " host=HOST" appended: HOST is
# $COLLECTOR_HOST, else the node name (uname -n), with characters a tag
# value cannot hold made "_" (the rule our collectors use too).  Each line is
# appended on its own, so a line cellfs refuses (EINVAL, the reason is in
# MNT/.log) costs only that line; refusals are reported on stderr.
# Collectors' stderr goes to ours.  SIGTERM or SIGINT stops everything.
set -u

here=$(cd "$(dirname "$0")" && pwd)
dir=$here/collectors
out=
once=0

usage() {
	echo "usage: $0 [-d DIR] [-o FILE] [-1] MNT" >&2
	exit 2
}

while getopts d:o:1 opt; do
	case $opt in
	d) dir=$OPTARG ;;
	o) out=$OPTARG ;;
	1) once=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$out" ]; then
	[ $# -eq 1 ] || usage
	out=$1/tsd/put
	if [ ! -e "$out" ]; then
		echo "$0: $out: not a cellfs mount?" >&2
		exit 1
	fi
fi
[ -d "$dir" ] || { echo "$0: $dir: no collectors directory" >&2; exit 1; }
host=$(printf '%s' "${COLLECTOR_HOST:-$(uname -n)}" | tr -c 'A-Za-z0-9._/-' _)

# Appends the lines of stdin to $out, one write each.
feed() {
	name=$1
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case "$line" in
		*" host="*) ;;
		*) line="$line host=$host" ;;
		esac
		if ! printf '%s\n' "$line" 2>/dev/null >>"$out"; then
			echo "$0: $name: refused: $line" >&2
		fi
	done
}

# Runs one collector (or a sleep) as $child and waits for it; the loops
# below are subshells whose TERM trap ends that child and themselves.
child=
run_child() {
	"$@" &
	child=$!
	wait "$child"
}

# The feeder is waited for too: with -1 the runner must not exit (and a
# test must not look) before the collector's last lines are written.
run_once() {
	local fd feeder
	exec {fd}> >(feed "$(basename "$1")")
	feeder=$!
	run_child "$1" >&"$fd"
	exec {fd}>&-
	wait "$feeder"
}

# Every $2 seconds, forever.
run_every() {
	trap 'kill "$child" 2>/dev/null; exit 0' TERM
	while :; do
		start=$(date +%s)
		run_once "$1"
		now=$(date +%s)
		left=$(($2 - (now - start)))
		[ "$left" -gt 0 ] && run_child sleep "$left"
	done
}

# A long-lived collector, started again when it exits.
run_forever() {
	trap 'kill "$child" 2>/dev/null; exit 0' TERM
	while :; do
		run_once "$1"
		echo "$0: $(basename "$1") exited; restarting in 10 s" >&2
		run_child sleep 10
	done
}

pids=
stop() {
	trap - TERM INT
	[ -n "$pids" ] && kill $pids 2>/dev/null
	wait
	exit 0
}
trap stop TERM INT

for sub in "$dir"/*/; do
	interval=$(basename "$sub")
	case $interval in
	''|*[!0-9]*) continue ;;
	esac
	for c in "$sub"*; do
		[ -f "$c" ] && [ -x "$c" ] || continue
		if [ "$once" = 1 ]; then
			[ "$interval" -gt 0 ] || continue
			(run_once "$c") &
		elif [ "$interval" -eq 0 ]; then
			(run_forever "$c") &
		else
			(run_every "$c" "$interval") &
		fi
		pids="$pids $!"
	done
done
if [ -z "$pids" ]; then
	echo "$0: no executable collectors under $dir/<interval>/" >&2
	exit 1
fi
wait
