#!/bin/sh
# cellfs-textfile.sh [-1] [-i SECONDS] MNT DIR: publishes MNT/.stats for
# node_exporter's textfile collector (--collector.textfile.directory=DIR)
# as DIR/cellfs.prom, every SECONDS (15), or once with -1.  Each copy is
# written to a temporary file in DIR and renamed over cellfs.prom, so the
# collector never reads half a file.  Exit status (-1): 0, or 1 when
# MNT/.stats cannot be read (nothing is left behind in DIR then).
set -u
once= interval=15
while getopts 1i: o; do
	case $o in
	1) once=1 ;;
	i) interval=$OPTARG ;;
	*) echo "usage: $0 [-1] [-i SECONDS] MNT DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 2 ]; then
	echo "usage: $0 [-1] [-i SECONDS] MNT DIR" >&2
	exit 2
fi
mnt=$1 dir=$2
tmp="$dir/.cellfs.prom.$$"
trap 'rm -f "$tmp"' EXIT
trap 'exit 0' TERM INT

publish() {
	if cat "$mnt/.stats" >"$tmp" 2>/dev/null && [ -s "$tmp" ]; then
		chmod 644 "$tmp" && mv -f "$tmp" "$dir/cellfs.prom"
	else
		rm -f "$tmp"
		echo "cellfs-textfile: cannot read $mnt/.stats" >&2
		return 1
	fi
}

if [ -n "$once" ]; then
	publish
	exit
fi
while :; do
	publish
	sleep "$interval" &
	wait $!
done
